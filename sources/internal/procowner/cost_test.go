package procowner

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestFindCostPerProcess holds what each process of the host costs a
// lookup, counted as allocations (the work, which the machine's load does
// not move): a process of another program is told apart by its comm, read
// in one read, and its executable's link is read only when the comm does
// not name the program already. A host runs hundreds of processes; every
// read of a Codex or OpenCode home looks at each (SPEC §8, the agents'
// stores).
func TestFindCostPerProcess(t *testing.T) {
	const procs = 200
	tests := []struct {
		name string
		comm string
		// most is the allocations a process may cost.
		most float64
	}{
		{name: "another program's", comm: "bash", most: 4},
		{name: "the program's, of another home", comm: "codex", most: 18},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "self"), 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range procs {
				p := filepath.Join(dir, strconv.Itoa(100000+i))
				if err := os.MkdirAll(filepath.Join(p, "fd"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(p, "comm"), []byte(tt.comm+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(p, "environ"), []byte("CODEX_HOME=/elsewhere\x00"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("/usr/bin/"+tt.comm, filepath.Join(p, "exe")); err != nil {
					t.Fatal(err)
				}
			}
			spec := Spec{Names: []string{"codex"}, Owns: func(env map[string]string) bool { return env["CODEX_HOME"] == "/home" }}
			var l Lookup
			allocs := testing.AllocsPerRun(3, func() { l = Find(dir, spec) })
			if len(l.Owners) != 0 || !l.Proven() {
				t.Fatalf("lookup = %+v, want no owner, proven", l)
			}
			if per := allocs / procs; per > tt.most {
				t.Errorf("a process costs %.1f allocations, want at most %.0f", per, tt.most)
			}
		})
	}
}
