package treegen

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The installed fixture is fully templated: no placeholder survives, the
// live pids run, the gone pid does not, and mtimes follow mtimes.json.
func TestInstallFixtureSubstitutesEveryPlaceholder(t *testing.T) {
	dir := t.TempDir()
	fx := InstallFixture(t, dir)
	files := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "{{") {
			t.Errorf("%s keeps a placeholder: %s", p, b)
		}
		return nil
	})
	if err != nil || files < 40 {
		t.Fatalf("walked %d files: %v", files, err)
	}
	for name, pid := range map[string]int{"live": fx.LivePID, "unverified": fx.UnverifiedPID} {
		if err := syscall.Kill(pid, 0); err != nil {
			t.Errorf("%s pid %d: %v", name, pid, err)
		}
	}
	if err := syscall.Kill(fx.GonePID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("gone pid %d: kill 0 = %v, want ESRCH", fx.GonePID, err)
	}
	fi, err := os.Stat(filepath.Join(dir, ".sessions", "B", "ask", "3", ".heartbeat"))
	if err != nil {
		t.Fatal(err)
	}
	if age := fx.Now.Sub(fi.ModTime()); age < 1199*time.Second || age > 1201*time.Second {
		t.Errorf("B/ask/3 heartbeat age %s, want 20m", age)
	}
	for id := range fx.Expect {
		if strings.Contains(id, "{{") {
			t.Errorf("expectation id %q keeps a placeholder", id)
		}
	}
}

func TestFanoutKeepsTheTreeWithinDepth(t *testing.T) {
	tests := []struct {
		name         string
		nodes, depth int
		want         int
	}{
		{name: "benchmark tree: 10 nodes, 3 deep", nodes: 10, depth: 3, want: 3},
		{name: "a chain", nodes: 5, depth: 5, want: 1},
		{name: "flat", nodes: 7, depth: 2, want: 6},
		{name: "one node", nodes: 1, depth: 1, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fanoutFor(tt.nodes, tt.depth); got != tt.want {
				t.Errorf("fanoutFor(%d, %d) = %d, want %d", tt.nodes, tt.depth, got, tt.want)
			}
		})
	}
}
