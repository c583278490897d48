package opencodeteams

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// An agent file that cannot be read is a problem naming it and the cause,
// never skipped: the system's own listJSONFiles keeps every name ending
// in .json, a directory among them, and its read of one fails. A FIFO is
// refused at once, never read (SPEC §9).
func TestAgentFileThatCannotBeReadIsAProblem(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, path string)
		cause string
	}{
		{name: "a directory", cause: "not a regular file (directory)", plant: func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a FIFO", cause: "not a regular file (named pipe)", plant: func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}},
		{name: "no permission", cause: "permission denied", plant: func(t *testing.T, path string) {
			if os.Geteuid() == 0 {
				t.Skip("root reads a file of mode 000; the end-to-end test runs the binary as nobody instead")
			}
			writeFile(t, path, mustJSON(agentRecord()))
			if err := os.Chmod(path, 0); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newStore(t, with(agentRecord(), "id", "good-1"))
			bad := filepath.Join(store, "agents", "bad-1.json")
			tt.plant(t, bad)
			facts := Source{}.Read(store, fixtureNow)
			if len(facts.Problems) != 1 || facts.Problems[0].Path != bad || !strings.Contains(facts.Problems[0].Error, tt.cause) ||
				!strings.Contains(facts.Problems[0].Error, bad) {
				t.Fatalf("problems %+v, want one naming %s with %q", facts.Problems, bad, tt.cause)
			}
			if _, ok := byID(facts.Nodes)["alpha/good-1"]; !ok {
				t.Errorf("the good agent must still be read")
			}
		})
	}
}

// The store's own directory is the store by its name, whatever it holds:
// one whose agents/ cannot be listed is opencode-teams', and its read says
// why.
func TestStoreDirIsTheStoreByItsName(t *testing.T) {
	store := filepath.Join(t.TempDir(), ".opencode", "opencode-teams")
	writeFile(t, filepath.Join(store, "agents"), []byte("a file where a directory goes"))
	if !(Source{}).Detect(store) {
		t.Fatalf("Detect(%s) = false", store)
	}
	facts := Source{}.Read(store, fixtureNow)
	agents := filepath.Join(store, "agents")
	if len(facts.Problems) != 1 || facts.Problems[0].Path != agents || !strings.Contains(facts.Problems[0].Error, "not a directory") {
		t.Fatalf("problems %+v, want one naming %s, not a directory", facts.Problems, agents)
	}
}
