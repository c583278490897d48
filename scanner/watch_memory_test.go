package scanner

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// TestWatcherKeepsOneCopyOfTheForest: SPEC §8 "100,000 nodes: ≤ 300 MiB
// RSS". The published snapshot is the engine's only copy of the nodes: the
// record of every node read holds that snapshot's own node as its facts,
// from the first snapshot on and after every kind of change. And a
// snapshot, once published, is never written: the change shows in the next
// one only.
func TestWatcherKeepsOneCopyOfTheForest(t *testing.T) {
	root := t.TempDir()
	if err := treegen.Generate(root, 2, 4, 3, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	lead := filepath.Join(root, "20260308-000000")
	leadHB := filepath.Join(lead, protocol.HeartbeatFile)
	pid, started := self(t)
	later := time.Now().Add(time.Minute)
	tests := []struct {
		name   string
		change func(t *testing.T, w *Watcher)
	}{
		{"the first snapshot", func(*testing.T, *Watcher) {}},
		{"a beat", func(t *testing.T, w *Watcher) {
			setMtime(t, leadHB, later)
			w.restat(false)
			w.flush(eventBatch{}, false)
		}},
		{"a file read again, the edges kept", func(t *testing.T, w *Watcher) {
			setMtime(t, filepath.Join(lead, protocol.CfaFile), later)
			w.restat(false)
			w.flush(eventBatch{}, false)
		}},
		{"a new child, the forest linked again", func(t *testing.T, w *Watcher) {
			child := filepath.Join(lead, "team9", "new")
			hb := writeHeartbeat(t, child, pid, started, "running", leadHB)
			appendLine(t, filepath.Join(lead, protocol.RegistryFile), map[string]any{"heartbeat": hb, "status": "active"})
			w.restat(false)
			w.flush(eventBatch{}, false)
		}},
		{"the refresh of every reason", func(t *testing.T, w *Watcher) {
			w.due.ticks = reasonRefreshTicks - 1
			w.publish(w.now(), true)
		}},
	}
	// One watcher goes through the changes in turn, driven here rather
	// than by Run, so that its records can be read between two steps.
	w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: testThresholds}, WatchOptions{Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := w.Snapshot()
			seen := fingerprint(before)
			publishes := w.stats.publishes
			tt.change(t, w)
			if w.stats.publishes == publishes && tt.name != "the first snapshot" {
				t.Fatal("the change was not published")
			}
			if got := fingerprint(before); got != seen {
				t.Errorf("a published snapshot was written:\nbefore %s\nafter  %s", seen, got)
			}
			snap := w.Snapshot()
			byDir := map[string]*model.Node{}
			for _, s := range snap.Sessions {
				s.Walk(func(n *model.Node) { byDir[n.InfraDir] = n })
			}
			if len(w.nodes.byDir) == 0 {
				t.Fatal("no node records")
			}
			for dir, ln := range w.nodes.byDir {
				if n := byDir[dir]; ln.n != n || ln.own {
					t.Errorf("%s: the record's facts are not the published node (own copy %v)", dir, ln.own)
				}
			}
		})
	}
}

// fingerprint renders what a snapshot shows of every node.
func fingerprint(snap *model.Snapshot) string {
	out := fmt.Sprint(len(snap.ByID))
	for _, s := range snap.Sessions {
		s.Walk(func(n *model.Node) {
			out += fmt.Sprintf("\n%s<%s beat=%v act=%v cfa=%p reg=%d %s %v %q", n.ID, n.ParentID, n.BeatMtime.UnixNano(),
				n.ActivityMtime.UnixNano(), n.Cfa, len(n.Registry), n.State, n.Flags, n.Reason)
		})
	}
	return out
}
