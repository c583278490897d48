package scanner

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/dispatchtop/dispatchtop/internal/treegen"
)

// TestWatchStartWatchesAsTheWalkGoes: SPEC §8 "watcher ready ≤ 2× find".
// The watcher's start is one walk, not a walk and then a second pass over
// every directory: a directory's watch goes on as the walk lists it, before
// anything below it is listed, and every directory is watched once.
func TestWatchStartWatchesAsTheWalkGoes(t *testing.T) {
	root := t.TempDir()
	if err := treegen.Generate(root, 3, 4, 3, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var log []string // "list DIR" and "watch DIR", in the order they happened
	record := func(what, dir string) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, what+" "+dir)
	}
	opts := Options{Roots: []string{root}, Thresholds: testThresholds,
		readDir: func(dir string) ([]fs.DirEntry, error) {
			record("list", dir)
			return os.ReadDir(dir)
		}}
	wo := WatchOptions{addWatch: func(fsw *fsnotify.Watcher, dir string) error {
		record("watch", dir)
		return fsw.Add(dir)
	}}
	w, err := NewWatcher(opts, wo)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	mu.Lock()
	defer mu.Unlock()
	listed := 0
	for i, e := range log {
		dir, ok := strings.CutPrefix(e, "list ")
		if !ok {
			continue
		}
		listed++
		if dir == root {
			continue
		}
		if at := slices.Index(log, "watch "+filepath.Dir(dir)); at < 0 || at > i {
			t.Errorf("%s listed before its parent's watch went on", dir)
		}
	}
	if want := len(w.dirs.byPath); listed != want {
		t.Errorf("%d directories listed, want each of the %d once", listed, want)
	}
	for dir := range w.dirs.byPath {
		if n := slices.Index(log, "watch "+dir); n < 0 || slices.Index(log[n+1:], "watch "+dir) >= 0 {
			t.Errorf("%s watched %d times, want once", dir, count(log, "watch "+dir))
		}
	}
}

func count(log []string, e string) int {
	n := 0
	for _, x := range log {
		if x == e {
			n++
		}
	}
	return n
}
