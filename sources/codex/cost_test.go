package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestReadCostPerThread holds what one thread costs a read of the home,
// counted as allocations (the work, which the machine's load does not
// move): its row, its node and its fields, which are made at their size
// once, not grown field by field. A home of a thousand threads is read at
// each --once (SPEC §8, the agents' stores).
func TestReadCostPerThread(t *testing.T) {
	const threads = 200
	tests := []struct {
		name string
		// most is the allocations a thread may cost.
		most float64
	}{
		{name: "open and archived threads, half of them children", most: 29},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHome(t)
			now := time.Now()
			for i := range threads {
				id := fmt.Sprintf("t-%04d", i)
				h.thread(t, id, now.Unix(), i%3 == 2, "")
				if i%2 == 1 {
					h.edge(t, "t-0000", id, "open")
				}
			}
			// A /proc of no process: what the host runs is not counted
			// (procowner's own test counts a process's cost).
			proc := t.TempDir()
			if err := os.Mkdir(filepath.Join(proc, "self"), 0o755); err != nil {
				t.Fatal(err)
			}
			src := &Source{program: testProgram, ProcDir: proc}
			var nodes int
			allocs := testing.AllocsPerRun(3, func() { nodes = len(src.Read(h.dir, now).Nodes) })
			if nodes != threads {
				t.Fatalf("read %d nodes, want %d", nodes, threads)
			}
			if per := allocs / threads; per > tt.most {
				t.Errorf("a thread costs %.1f allocations, want at most %.0f", per, tt.most)
			}
		})
	}
}
