package chatroom

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A store is chatroom's by its layout: a `.chatroom` directory, or one
// holding machines/state/ or a machine.json of whatever kind. One that
// cannot be read is chatroom's all the same, and its read names the file
// and the cause: a machine.json or a state file that is a directory, a
// FIFO, torn, or not to be read. Nothing is skipped without a word.
func TestStoreThatCannotBeReadIsDetectedAndAProblem(t *testing.T) {
	mkdir := func(t *testing.T, path string) {
		os.RemoveAll(path)
		if err := os.Mkdir(path, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fifo := func(t *testing.T, path string) {
		os.RemoveAll(path)
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	state := "machines/state/" + machineID + ".json"
	tests := []struct {
		name  string
		file  string // relative to the store
		plant func(t *testing.T, path string)
		cause string
		alone bool // the store holds nothing else: machines/state removed
	}{
		{name: "machine.json a directory, alone", file: "machine.json", plant: mkdir, cause: "not a regular file (directory)", alone: true},
		{name: "machine.json a FIFO, alone", file: "machine.json", plant: fifo, cause: "not a regular file (named pipe)", alone: true},
		{name: "machine.json torn, alone", file: "machine.json", plant: func(t *testing.T, path string) { write(t, path, `{"machines": {`) }, cause: "unexpected end", alone: true},
		{name: "a state file that is a directory", file: state, plant: mkdir, cause: "not a regular file (directory)"},
		{name: "a state file that is a FIFO", file: state, plant: fifo, cause: "not a regular file (named pipe)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			store := filepath.Join(home, ".chatroom")
			if err := os.Rename(copyStore(t), store); err != nil {
				t.Fatal(err)
			}
			if tt.alone {
				os.RemoveAll(filepath.Join(store, "machines"))
			}
			bad := filepath.Join(store, tt.file)
			tt.plant(t, bad)
			for _, root := range []string{home, store} {
				if !(Source{}).Detect(root) {
					t.Errorf("Detect(%s) = false", root)
				}
				facts := Source{}.Read(root, fixtureNow)
				var found bool
				for _, p := range facts.Problems {
					found = found || p.Path == bad && strings.Contains(p.Error, bad) && strings.Contains(p.Error, tt.cause)
				}
				if !found {
					t.Errorf("read %s: problems %+v, want one naming %s with %q", root, facts.Problems, bad, tt.cause)
				}
			}
		})
	}
}

// A `.chatroom` directory is the store by its name, whatever it holds.
func TestDotChatroomIsTheStore(t *testing.T) {
	store := filepath.Join(t.TempDir(), ".chatroom")
	if err := os.Mkdir(store, 0o755); err != nil {
		t.Fatal(err)
	}
	if !(Source{}).Detect(store) {
		t.Errorf("Detect(%s) = false", store)
	}
}
