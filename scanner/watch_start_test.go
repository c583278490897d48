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
	"github.com/dispatchtop/dispatchtop/protocol"
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

// TestWatchStartNodeGoneBeforeItsRead: a directory listed with a heartbeat
// that is gone when the walk reads it is held as a plain directory: no node,
// no record without facts, and the watcher goes on (SPEC §1: a node being
// removed is skipped quietly).
func TestWatchStartNodeGoneBeforeItsRead(t *testing.T) {
	root := t.TempDir()
	pid, started := self(t)
	writeHeartbeat(t, filepath.Join(root, "kept"), pid, started, "running", "")
	gone := filepath.Join(root, "gone")
	writeHeartbeat(t, gone, pid, started, "running", "")
	opts := Options{Roots: []string{root}, Thresholds: testThresholds,
		readDir: func(dir string) ([]fs.DirEntry, error) {
			entries, err := os.ReadDir(dir)
			if dir == gone {
				// Listed, then its heartbeat removed before it is read,
				// the directory's mtime put back: the walk alone knows.
				if rerr := os.Remove(filepath.Join(gone, protocol.HeartbeatFile)); rerr != nil {
					return nil, rerr
				}
				old := time.Now().Add(-time.Hour)
				if rerr := os.Chtimes(gone, old, old); rerr != nil {
					return nil, rerr
				}
			}
			return entries, err
		}}
	w, err := NewWatcher(opts, WatchOptions{Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got := ids(w.Snapshot()); !slices.Equal(got, []string{"kept"}) {
		t.Errorf("nodes %v, want only kept", got)
	}
	if _, held := w.dirs.byPath[gone]; !held {
		t.Error("the directory is not held")
	}
	for dir, ln := range w.nodes.byDir {
		if ln.n == nil {
			t.Errorf("%s: a record without facts", dir)
		}
	}
	// Comparing with the disk and publishing go on as before.
	w.restat(false)
	w.flush(eventBatch{}, false)
	writeHeartbeat(t, gone, pid, started, "running", "")
	w.restat(false)
	w.flush(eventBatch{}, false)
	if got := ids(w.Snapshot()); !slices.Equal(got, []string{"gone", "kept"}) {
		t.Errorf("nodes %v after the heartbeat came back, want gone and kept", got)
	}
}
