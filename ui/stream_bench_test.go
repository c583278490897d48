package ui

import (
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// renewed is snap as the watcher publishes it after a change in one
// session: that session copied into fresh nodes (edit changes the copy),
// every other one shared with snap, a ByID of the new forest.
func renewed(snap *model.Snapshot, session int, edit func(root *model.Node)) *model.Snapshot {
	next := *snap
	next.Sessions = append([]*model.Node(nil), snap.Sessions...)
	next.Sessions[session] = copySubtree(snap.Sessions[session], nil)
	if edit != nil {
		edit(next.Sessions[session])
	}
	next.ByID = indexForest(next.Sessions)
	return &next
}

// copySubtree copies n and everything beneath it into fresh nodes.
func copySubtree(n, parent *model.Node) *model.Node {
	c := *n
	c.Parent = parent
	c.Children = make([]*model.Node, len(n.Children))
	for i, k := range n.Children {
		c.Children[i] = copySubtree(k, &c)
	}
	return &c
}

func indexForest(sessions []*model.Node) map[string]*model.Node {
	byID := map[string]*model.Node{}
	for _, s := range sessions {
		s.Walk(func(n *model.Node) { byID[n.ID] = n })
	}
	return byID
}

// BenchmarkTouchUpdate10k: the UI's share of a heartbeat touch at 10,000
// nodes, what each update of a stream of touches costs the dashboard: an
// update whose snapshot renews the touched session (a beat a second
// younger, everything else shared, as the watcher publishes it), then the
// frame. Two snapshots alternate, so each update changes one session.
func BenchmarkTouchUpdate10k(b *testing.B) {
	base := bigSnapshot(10000)
	m := newTestModel(b, 120, 40, Options{Initial: base})
	m.moveTo(5000)
	_ = m.View()
	touched := renewed(base, 500, func(root *model.Node) {
		root.Children[0].BeatMtime = root.Children[0].BeatMtime.Add(time.Second)
	})
	snaps := [2]*model.Snapshot{touched, base}
	b.ReportAllocs()
	defer startWindowProfile(b)()
	i := 0
	for b.Loop() {
		m.Update(updateMsg{update: model.Update{Snapshot: snaps[i%2]}})
		_ = m.View()
		i++
	}
}
