package serve

import (
	"slices"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// copyTree copies a session's nodes (their parents pointing in the copy).
func copyTree(n *model.Node, parent *model.Node) *model.Node {
	c := *n
	c.Parent = parent
	c.Children = make([]*model.Node, len(n.Children))
	for i, k := range n.Children {
		c.Children[i] = copyTree(k, &c)
	}
	return &c
}

// churned is a copy of snap, indexed as the watcher's, whose sessions at
// the indexes in renew are renewed copies with one node's beat moved by
// step: the other sessions shared, as the watcher publishes a change.
func churned(snap *model.Snapshot, renew []int, step time.Duration) *model.Snapshot {
	next := *snap
	next.Sessions = slices.Clone(snap.Sessions)
	for _, i := range renew {
		s := copyTree(snap.Sessions[i], nil)
		leaf := s
		for len(leaf.Children) > 0 {
			leaf = leaf.Children[len(leaf.Children)-1]
		}
		leaf.BeatMtime = leaf.BeatMtime.Add(step)
		next.Sessions[i] = s
	}
	next.RenewSessions(slices.Values(renew))
	return &next
}

// churnRound is the sessions a publish renews: 10 of 1,000, one node
// changed in each (1 % of 10,000 nodes a second at ten publishes a second).
func churnRound(i int) []int {
	out := make([]int, 10)
	for k := range out {
		out[k] = (i*10 + k*97) % 1000
	}
	return out
}

// BenchmarkHubSyncChurn10k is one sync of a 10,000-node snapshot in
// which 10 sessions were renewed, one node changed in each.
func BenchmarkHubSyncChurn10k(b *testing.B) {
	base := benchSnapshot(b)
	base.IndexSessions()
	h := newHub(time.Now)
	h.sync(base)
	cur := base
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		b.StopTimer()
		cur = churned(cur, churnRound(i), time.Second)
		i++
		b.StartTimer()
		h.sync(cur)
	}
}
