package scanner

import (
	"fmt"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/model"
)

// forestIndex is every node of snap's forest by id, found by walking it.
func forestIndex(snap *model.Snapshot) map[string]*model.Node {
	byID := map[string]*model.Node{}
	for _, s := range snap.Sessions {
		s.Walk(func(n *model.Node) { byID[n.ID] = n })
	}
	return byID
}

// Every snapshot the watcher publishes answers Node, NodeCount and Nodes
// with exactly its own forest's nodes, across beats that renew a session
// at a time, small and large, and keeps answering so after later updates:
// an update renews its index from the previous one's without writing it.
// ByID is nil in each, so that no reader takes it for the whole forest.
func TestWatchSnapshotsIndexTheirOwnForest(t *testing.T) {
	root := t.TempDir()
	// Small sessions (looked through) and large ones (kept by id).
	if err := treegen.Generate(filepath.Join(root, "small"), 60, 4, 3, time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := treegen.Generate(filepath.Join(root, "large"), 10, 40, 3, time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	beats, err := treegen.HeartbeatPaths(root)
	if err != nil {
		t.Fatal(err)
	}
	w := newTestWatcher(t, WatchOptions{Tick: time.Hour, Debounce: time.Millisecond}, root)
	await(t, w, "every node", func(s *model.Snapshot) bool { return s.NodeCount() == len(beats) })

	type published struct {
		snap  *model.Snapshot
		whole map[string]*model.Node
	}
	var seen []published
	check := func(p published, when string) {
		t.Helper()
		if p.snap.ByID != nil {
			t.Fatalf("%s: ByID is set (%d nodes) in a published snapshot", when, len(p.snap.ByID))
		}
		if got := p.snap.NodeCount(); got != len(p.whole) {
			t.Fatalf("%s: NodeCount %d, the forest holds %d", when, got, len(p.whole))
		}
		for id, n := range p.whole {
			if got := p.snap.Node(id); got != n {
				t.Fatalf("%s: Node(%q) is not the forest's node", when, id)
			}
		}
		if got := maps.Collect(p.snap.Nodes()); !maps.Equal(got, p.whole) {
			t.Fatalf("%s: Nodes yields %d nodes that are not the forest's %d", when, len(got), len(p.whole))
		}
	}
	for i := range 150 {
		hb := beats[(i*7919)%len(beats)]
		mt := time.Now().Add(time.Duration(i) * time.Millisecond)
		setMtime(t, hb, mt)
		await(t, w, hb+" beat at "+mt.String(), func(s *model.Snapshot) bool {
			p := published{s, forestIndex(s)}
			check(p, fmt.Sprintf("touch %d", i))
			seen = append(seen, p)
			for _, n := range p.whole {
				if n.HeartbeatPath == hb {
					return n.BeatMtime.Equal(mt)
				}
			}
			return false
		})
	}
	for i, p := range seen {
		check(p, fmt.Sprintf("update %d of %d, looked up again at the end", i, len(seen)))
	}
}
