package sqlitestore

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SPEC §9: SQLite opens a database by path, and a FIFO opened that way
// blocks until a writer comes. Whatever is not a regular file where a
// database (or its -wal or -shm) should be is refused before SQLite opens
// it, in one line naming the file and "not a regular file", at once.
func TestOpenRefusesWhatIsNotARegularFileWithoutBlocking(t *testing.T) {
	fifo := func(t *testing.T, path string) {
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	tests := []struct {
		name  string
		plant func(t *testing.T, path string)
		at    string // where the thing is planted, relative to the database
		cause string
	}{
		{name: "a directory", plant: func(t *testing.T, path string) { mustMkdir(t, path) }, cause: "not a regular file (directory)"},
		{name: "a FIFO", plant: fifo, cause: "not a regular file (named pipe)"},
		{name: "a symlink to /dev/zero", plant: func(t *testing.T, path string) { mustSymlink(t, "/dev/zero", path) }, cause: "not a regular file (character device)"},
		{name: "a symlink to /dev/null", plant: func(t *testing.T, path string) { mustSymlink(t, "/dev/null", path) }, cause: "not a regular file (character device)"},
		{name: "a FIFO at the -wal", at: "-wal", plant: fifo, cause: "not a regular file (named pipe)"},
		{name: "a FIFO at the -shm", at: "-shm", plant: fifo, cause: "not a regular file (named pipe)"},
		{name: "a missing file", plant: func(t *testing.T, path string) {}, cause: "no such file or directory"},
		{name: "an empty file", plant: func(t *testing.T, path string) {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, cause: "empty file, not a database yet"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var path string
			if tc.at == "" {
				path = filepath.Join(t.TempDir(), "messages.db")
			} else {
				path = newStore(t, `CREATE TABLE rows (id TEXT)`)
				os.Remove(path + tc.at)
			}
			planted := path + tc.at
			tc.plant(t, planted)
			done := make(chan error, 1)
			go func() {
				snap, err := Open(path, 100*time.Millisecond)
				if err == nil {
					snap.Close()
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Open blocked")
			}
			if err == nil {
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "read "+planted+": ") || !strings.Contains(msg, tc.cause) || strings.Count(msg, planted) != 1 || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming %s once and %q", msg, planted, tc.cause)
			}
		})
	}
}

func mustMkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, path string) {
	t.Helper()
	if _, err := os.Stat(target); err != nil {
		t.Skipf("no %s: %v", target, err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// A database this process may not read says so, naming it, not as
// SQLite's "unable to open database file". (Root reads every file; the
// end-to-end tests run the binary as another user for this.)
func TestOpenSaysPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may read a file of mode 000; the end-to-end test runs the binary as nobody instead")
	}
	path := newStore(t, `CREATE TABLE rows (id TEXT)`)
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, 0)
	if err == nil || err.Error() != "read "+path+": permission denied" {
		t.Errorf("error %v: want read %s: permission denied", err, path)
	}
}
