package model

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRenewedSnapshotAnswersAsAWholeMapWould renews random sessions of a
// forest (small ones, looked through, and large ones, kept by id) update
// after update, each snapshot a copy of the last, and checks every
// snapshot's lookups against a whole map built for it: Node for every id
// and one it lacks, NodeCount, and Nodes. Each snapshot is checked again
// at the end: a renewal never changes what an older snapshot answers.
func TestRenewedSnapshotAnswersAsAWholeMapWould(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sessions int
		renewed  int
	}{
		{"few renewed of many", 300, 2},
		{"many renewed at once", 40, 30},
		{"one session", 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.sessions)))
			// A session's shape: how many children each of its nodes has,
			// in the order they are made; copies keep it (and its ids).
			shapes := make([][]int, tc.sessions)
			for i := range shapes {
				nodes := 1 + rng.IntN(3*smallSession)
				if rng.IntN(2) == 0 {
					nodes = 1 + rng.IntN(smallSession)
				}
				shapes[i] = make([]int, nodes)
				for made := 1; made < nodes; {
					k := min(nodes-made, 1+rng.IntN(4))
					shapes[i][rng.IntN(made)] += k
					made += k
				}
			}
			build := func(i, update int) *Node {
				var nodes []*Node
				for j := range shapes[i] {
					nodes = append(nodes, &Node{ID: fmt.Sprintf("S%03d/%d", i, j), Reason: fmt.Sprint("update ", update)})
				}
				next := 1
				for j, k := range shapes[i] {
					for range k {
						nodes[next].Parent = nodes[j]
						nodes[j].Children = append(nodes[j].Children, nodes[next])
						next++
					}
				}
				return nodes[0]
			}
			snap := &Snapshot{ByID: map[string]*Node{}}
			for i := range tc.sessions {
				snap.Sessions = append(snap.Sessions, build(i, -1))
				snap.Sessions[i].Walk(func(n *Node) { snap.ByID[n.ID] = n })
			}
			whole := maps.Clone(snap.ByID)
			snap.IndexSessions()
			assertIndexIs(t, snap, whole, "indexed")
			type seen struct {
				snap  *Snapshot
				whole map[string]*Node
			}
			var history []seen
			for update := range 300 {
				cp := *snap
				cp.Sessions = slices.Clone(snap.Sessions)
				renewed := map[int]bool{}
				for range 1 + rng.IntN(tc.renewed) {
					i := rng.IntN(tc.sessions)
					renewed[i] = true
					cp.Sessions[i] = build(i, update)
					cp.Sessions[i].Walk(func(n *Node) { whole[n.ID] = n })
				}
				cp.RenewSessions(maps.Keys(renewed))
				snap = &cp
				history = append(history, seen{snap, maps.Clone(whole)})
				assertIndexIs(t, snap, whole, fmt.Sprint("update ", update))
			}
			for i, h := range history {
				assertIndexIs(t, h.snap, h.whole, fmt.Sprintf("update %d, looked up again after %d more", i, len(history)-1-i))
			}
		})
	}
}

func assertIndexIs(t *testing.T, snap *Snapshot, whole map[string]*Node, when string) {
	t.Helper()
	if snap.ByID != nil {
		t.Fatalf("%s: ByID is set in an indexed snapshot, where it would be stale", when)
	}
	if got := snap.NodeCount(); got != len(whole) {
		t.Fatalf("%s: NodeCount %d, want %d", when, got, len(whole))
	}
	for id, want := range whole {
		if got := snap.Node(id); got != want {
			t.Fatalf("%s: Node(%q) is %p (%q), want %p (%q)", when, id, got, reasonOf(got), want, want.Reason)
		}
	}
	if got := snap.Node("not/there"); got != nil {
		t.Fatalf("%s: Node of an unknown id is %v, want nil", when, got)
	}
	yielded := map[string]*Node{}
	for id, n := range snap.Nodes() {
		if _, twice := yielded[id]; twice {
			t.Fatalf("%s: Nodes yields %q twice", when, id)
		}
		yielded[id] = n
	}
	if !maps.Equal(yielded, whole) {
		t.Fatalf("%s: Nodes yields %d nodes that differ from the whole map's %d", when, len(yielded), len(whole))
	}
}

func reasonOf(n *Node) string {
	if n == nil {
		return "<nil>"
	}
	return n.Reason
}

// TestSnapshotLookupsOfAWholeSnapshot: a snapshot built whole (ByID) and
// a nil one answer Node, NodeCount and Nodes from what they hold.
func TestSnapshotLookupsOfAWholeSnapshot(t *testing.T) {
	a := &Node{ID: "A"}
	snap := &Snapshot{ByID: map[string]*Node{"A": a}}
	var none *Snapshot
	if snap.Node("A") != a || snap.Node("B") != nil || snap.NodeCount() != 1 || none.Node("A") != nil || none.NodeCount() != 0 {
		t.Fatalf("lookups of a whole snapshot: Node(A)=%v Node(B)=%v count=%d", snap.Node("A"), snap.Node("B"), snap.NodeCount())
	}
	for range none.Nodes() {
		t.Fatal("a nil snapshot yields a node")
	}
	got := maps.Collect(snap.Nodes())
	if !maps.Equal(got, snap.ByID) {
		t.Fatalf("Nodes yields %v, want %v", got, snap.ByID)
	}
}

// A node's parent is its Parent, or, for a node that knows its parent by
// id alone (a watched host's, built without parent pointers so that a
// change copies a node and its ancestors, not its session), the node its
// ParentID names in the snapshot; a session's is none.
func TestParentOfIsThePointerElseTheNodeTheIdNames(t *testing.T) {
	lead := &Node{ID: "s/lead", ParentID: "s"}
	worker := &Node{ID: "s/lead/w", ParentID: "s/lead"}
	lead.Children = []*Node{worker}
	session := &Node{ID: "s", Children: []*Node{lead}}
	pointed := &Node{ID: "p/c", ParentID: "p"}
	other := &Node{ID: "p", Children: []*Node{pointed}}
	pointed.Parent = other
	stray := &Node{ID: "s/x", ParentID: "gone"}
	snap := &Snapshot{Sessions: []*Node{other, session}}
	snap.IndexSessions()
	for _, tc := range []struct {
		name string
		n    *Node
		want *Node
	}{
		{"a session has none", session, nil},
		{"known by id alone", worker, lead},
		{"a session's child by id", lead, session},
		{"the pointer when set", pointed, other},
		{"an id of no node", stray, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := snap.ParentOf(tc.n); got != tc.want {
				t.Errorf("ParentOf(%s) = %v, want %v", tc.n.ID, got, tc.want)
			}
		})
	}
	var none *Snapshot
	if got := none.ParentOf(worker); got != nil {
		t.Errorf("a nil snapshot's ParentOf = %v", got)
	}
}
