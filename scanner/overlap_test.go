package scanner

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

// startedStore is a source for the test below: its Read says it has begun.
type startedStore struct {
	once    *sync.Once
	started chan struct{}
}

func (startedStore) Kind() sources.Kind           { return "started" }
func (startedStore) Detect(string) bool           { return false }
func (startedStore) WatchPaths(string) []string   { return nil }
func (startedStore) Thresholds() model.Thresholds { return model.DefaultThresholds() }
func (s startedStore) Read(path string, _ time.Time) sources.Facts {
	s.once.Do(func() { close(s.started) })
	return sources.Facts{Nodes: []*model.Node{{ID: "row", HeartbeatPath: path + "#row", HasHeartbeat: true,
		Heartbeat: &model.Heartbeat{Status: "running", HasParentField: true}}}}
}

// The stores are read while the tree is walked, not after the walk: a
// store's read waits on its files and its database as the walk does, and
// the time it adds to a scan is what does not overlap. Here the walk's
// listing of its root waits until the store's read has begun; read after
// the walk, the store would never begin, and the root would fail to list.
func TestStoresAreReadWhileTheTreeIsWalked(t *testing.T) {
	tree, store := t.TempDir(), t.TempDir()
	src := startedStore{once: &sync.Once{}, started: make(chan struct{})}
	opts := Options{Roots: []string{tree, "started:" + store}, Sources: []sources.Source{src}}
	opts.readDir = func(dir string) ([]fs.DirEntry, error) {
		select {
		case <-src.started:
		case <-time.After(5 * time.Second): // a hang guard, not a timing
			return nil, errors.New("the store's read had not begun 5 s into the walk")
		}
		return os.ReadDir(dir)
	}
	walk, err := Discover(opts)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range walk.Nodes {
		ids = append(ids, n.ID)
	}
	if len(ids) != 1 || ids[0] != "row" {
		t.Fatalf("nodes %v, want the store's row", ids)
	}
}
