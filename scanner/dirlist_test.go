package scanner

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The listing the walk keeps open gives what os.ReadDir gives: the same
// names in the same order, the same types (a symlink to a directory is a
// symlink, never followed), and its errors are os.ReadDir's.
func TestOpenDirListsAsReadDir(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".heartbeat", "b.exec-stream.jsonl", ".children"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "team1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "team1"), filepath.Join(dir, "a-link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, got, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	if len(got) != len(want) {
		t.Fatalf("openDir listed %d entries, os.ReadDir %d: %v vs %v", len(got), len(want), got, want)
	}
	for i := range want {
		if got[i].Name() != want[i].Name() || got[i].Type() != want[i].Type() || got[i].IsDir() != want[i].IsDir() {
			t.Errorf("entry %d: openDir %q %v, os.ReadDir %q %v", i, got[i].Name(), got[i].Type(), want[i].Name(), want[i].Type())
		}
		gi, gerr := got[i].Info()
		wi, werr := want[i].Info()
		if gerr != nil || werr != nil || gi.ModTime() != wi.ModTime() || gi.Mode() != wi.Mode() {
			t.Errorf("entry %q: Info %v %v, os.ReadDir's %v %v", want[i].Name(), gi, gerr, wi, werr)
		}
		if mtime, ok := h.lstatMtime(want[i].Name()); !ok || !mtime.Equal(wi.ModTime()) {
			t.Errorf("entry %q: lstatMtime %v %v, want %v", want[i].Name(), mtime, ok, wi.ModTime())
		}
	}

	_, _, gotErr := openDir(filepath.Join(dir, "missing"))
	_, wantErr := os.ReadDir(filepath.Join(dir, "missing"))
	if gotErr == nil || gotErr.Error() != wantErr.Error() || !errorsIsNotExist(gotErr) {
		t.Errorf("missing dir: openDir error %v, os.ReadDir's %v", gotErr, wantErr)
	}
	_, _, gotErr = openDir(filepath.Join(dir, ".heartbeat"))
	_, wantErr = os.ReadDir(filepath.Join(dir, ".heartbeat"))
	if gotErr == nil || gotErr.Error() != wantErr.Error() {
		t.Errorf("a file: openDir error %v, os.ReadDir's %v", gotErr, wantErr)
	}
}

func errorsIsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// The scan's join of a listed name is filepath.Join's, for clean and
// unclean directories alike.
func TestFileJoinIsFilepathJoin(t *testing.T) {
	for _, dir := range []string{"/", "/r", "/r/A", "r", "/r/A/", "/r//A", "/r/./A", "/r/A/..", ""} {
		h := dirHandle{path: dir, fd: -1, unclean: filepath.Clean(dir) != dir}
		for _, name := range []string{".heartbeat", "team1", "a b"} {
			if got, want := h.file(name), filepath.Join(dir, name); got != want {
				t.Errorf("file(%q) in %q = %q, filepath.Join gives %q", name, dir, got, want)
			}
		}
	}
}

// A walk lists every directory of the tree: a listing costs allocations a
// directory (its path for the open, the entries), not an allocation or two
// an entry; the names every node dir holds are not copied.
func TestOpenDirAllocatesPerDirectoryNotPerEntry(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".heartbeat", ".cfa-state.json", ".children", ".exec-stream.jsonl", ".merged", ".retry-count"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "team1"), 0o755); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(50, func() {
		h, entries, err := openDir(dir)
		if err != nil || len(entries) != 7 {
			t.Fatalf("openDir: %d entries, %v", len(entries), err)
		}
		h.close()
	})
	// The path made a C string, the entries, the list of them, "team1".
	if allocs > 4 {
		t.Errorf("listing a node dir of 7 entries: %v allocations, want at most 4", allocs)
	}
}
