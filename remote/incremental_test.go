package remote

import (
	"bytes"
	"encoding/json"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
	"github.com/dispatchtop/dispatchtop/serve"
)

// A watched host's forest, built a diff at a time (the sessions a diff
// touched rebuilt, the others shared, no event's JSON kept), is the forest
// a whole read of the same state makes: its document is byte for byte the
// same after every diff of a real serve's churn, and each forest handed out
// before answers as it did (a diff changes no forest already published).
func TestWatchedHostBuiltByDiffsIsTheWholeRead(t *testing.T) {
	rec := recordStream(t, 200, 10, 12, 30)
	at := time.Now()
	doc := func(s *model.Snapshot) []byte {
		var b bytes.Buffer
		if err := report.WriteJSON(&b, s); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	events := rec.events(t)
	w := &wireHost{}
	const host = "h"
	type published struct {
		snap *model.Snapshot
		doc  []byte
	}
	var seen []published
	for k, ev := range events {
		if err := w.apply(ev, at, host, DefaultMaxNodes, nil, model.TransitionView{}); err != nil {
			t.Fatalf("event %d: %v", k, err)
		}
		got := w.snapshot(at)
		// The whole read: a new host given the state as one snapshot event.
		whole := &wireHost{}
		if err := whole.apply(wholeEvent(t, w, events[:k+1]), at, host, DefaultMaxNodes, nil, model.TransitionView{}); err != nil {
			t.Fatal(err)
		}
		want := whole.snapshot(at)
		if g, wd := doc(got), doc(want); !bytes.Equal(g, wd) {
			t.Fatalf("after event %d the forest built by diffs differs from the whole read:\n%.2000s\nwant\n%.2000s", k, g, wd)
		}
		if got.NodeCount() != rec.nodes {
			t.Fatalf("after event %d: %d nodes, want %d", k, got.NodeCount(), rec.nodes)
		}
		for id, n := range got.Nodes() {
			if got.Node(id) != n {
				t.Fatalf("after event %d: Node(%q) is not the node of the forest", k, id)
			}
			// A node names its parent with its parent's own string.
			if p := got.ParentOf(n); p != nil && unsafe.StringData(n.ParentID) != unsafe.StringData(p.ID) {
				t.Fatalf("after event %d: %s holds a copy of its parent's id", k, id)
			}
		}
		seen = append(seen, published{got, doc(got)})
	}
	for k, p := range seen {
		if !bytes.Equal(doc(p.snap), p.doc) {
			t.Errorf("the forest handed out after event %d changed later", k)
		}
	}
}

// wholeEvent is the snapshot event of the state events leave: every node
// as last sent, in the last order of the sessions.
func wholeEvent(t *testing.T, _ *wireHost, events []*serve.WatchEvent) *serve.WatchEvent {
	t.Helper()
	nodes := map[string]serve.WatchNode{}
	var order []string
	var head *report.Document
	for _, ev := range events {
		if ev.Type == serve.EventSnapshot {
			clear(nodes)
		}
		if ev.Head != nil {
			head = ev.Head
		}
		if ev.Sessions != nil {
			order = *ev.Sessions
		}
		for _, n := range ev.Nodes {
			nodes[n.ID] = n
		}
		for _, id := range ev.Removed {
			delete(nodes, id)
		}
	}
	ev := &serve.WatchEvent{Type: serve.EventSnapshot, Head: head, Sessions: &order}
	for _, n := range nodes {
		ev.Nodes = append(ev.Nodes, n)
	}
	// Through JSON, as the stream hands it: nothing shared with the diffs.
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var out serve.WatchEvent
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// SPEC §8, the fleet view under churn: a diff costs the viewer the
// sessions it touched, not its host's forest nor the fleet's. One flip on
// one of 4 hosts of 10,000 nodes, applied and merged, allocates at most
// 64 KiB (it cost a copy of the host's index and a new index of the
// fleet's 40,000 nodes, some 3 MiB, before), and the hosts it did not
// touch keep their rows.
func TestADiffCostsTheSessionsItTouched(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and scans 10,000 nodes")
	}
	const budget = 64 << 10
	rec := recordStream(t, 1000, 10, 3, 1)
	f := newWatchedFleet(t, 4, rec)
	rows := slicesOfRows(f.prev)
	events := rec.events(t)
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	before := mem.TotalAlloc
	f.take(hostEvent{host: 2, at: time.Now(), watch: events[1]})
	next := f.merge(time.Now())
	runtime.ReadMemStats(&mem)
	got := mem.TotalAlloc - before
	t.Logf("one flip allocated %d KiB", got>>10)
	if got > budget {
		t.Errorf("one flip allocated %d KiB, over the %d KiB of the sessions it touched", got>>10, budget>>10)
	}
	for i, h := range next.Sessions {
		if kept := h == rows[i]; kept != (i != 2) {
			t.Errorf("host %d's row kept %v, want %v (only host 2 changed)", i, kept, i != 2)
		}
	}
	f.prev = next
	// Its node is the flipped one, found through the fleet's index.
	for _, n := range events[1].Nodes {
		got := next.Node("h02/" + n.ID)
		if got == nil || got.State != n.State {
			t.Errorf("h02/%s: %v, want state %s", n.ID, got, n.State)
		}
		if old := rows[2].Children; len(old) == 0 {
			t.Fatal("host 2 had no sessions")
		}
	}
}

func slicesOfRows(s *model.Snapshot) []*model.Node {
	return append([]*model.Node(nil), s.Sessions...)
}

// A diff that moves no node (no id comes or goes, no edge moves) rebuilds
// each session it touched of the nodes that session held: a node a hostile
// host names under two sessions stays in the one that took it (either),
// once, however often either is renewed.
func TestADiffThatMovesNothingKeepsEachNodeInItsSession(t *testing.T) {
	node := func(id, state string, kids ...string) serve.WatchNode {
		return serve.WatchNode{NodeJSON: report.NodeJSON{ID: id, State: model.State(state), Action: model.ActionNone},
			Kids: append([]string{}, kids...)}
	}
	order := []string{"A", "B"}
	events := []*serve.WatchEvent{
		{Type: serve.EventSnapshot, Rev: "r.1", Head: &report.Document{}, Sessions: &order, Nodes: []serve.WatchNode{
			node("A", "running", "A/a"), node("A/a", "running", "x"),
			node("B", "running", "B/b"), node("B/b", "running", "x"),
			node("x", "running"),
		}},
		{Type: serve.EventDiff, Rev: "r.2", Nodes: []serve.WatchNode{node("B/b", "dead", "x")}},
		{Type: serve.EventDiff, Rev: "r.3", Nodes: []serve.WatchNode{node("x", "dead")}},
		{Type: serve.EventDiff, Rev: "r.4", Nodes: []serve.WatchNode{node("B", "dead", "B/b")}},
	}
	w := &wireHost{}
	const host = "h"
	at := time.Now()
	var took string
	for k, ev := range events {
		if err := w.apply(ev, at, host, DefaultMaxNodes, nil, model.TransitionView{}); err != nil {
			t.Fatalf("event %d: %v", k, err)
		}
		snap := w.snapshot(at)
		var under []string
		for _, s := range snap.Sessions {
			s.Walk(func(n *model.Node) {
				if n.ID == "h/x" {
					under = append(under, s.ID)
				}
			})
		}
		if k == 0 && len(under) == 1 {
			took = under[0]
		}
		if len(under) != 1 || under[0] != took {
			t.Errorf("after event %d (%s) x is under %v, want [%s] alone", k, ev.Rev, under, took)
		}
		if x := snap.Node("h/x"); k >= 2 && (x == nil || x.State != model.StateDead) {
			t.Errorf("after event %d (%s) x is %v, want dead", k, ev.Rev, x)
		}
	}
}

// A diff's transitions are read off the nodes it sends and removes, not
// off a forest built for each event (SPEC §8, the fleet under churn): they
// are model.DiffFor's of the forests before and after it, in its order and
// as a view keeps them, over a real serve's churn and over diffs that add,
// move, send twice and remove nodes.
func TestADiffsTransitionsAreThoseOfTheForestsBeforeAndAfter(t *testing.T) {
	node := func(id, state string, kids ...string) serve.WatchNode {
		return serve.WatchNode{NodeJSON: report.NodeJSON{ID: id, State: model.State(state), Action: model.ActionNone},
			Kids: append([]string{}, kids...)}
	}
	order := []string{"A", "B"}
	made := []*serve.WatchEvent{
		{Type: serve.EventSnapshot, Rev: "r.1", Head: &report.Document{}, Sessions: &order, Nodes: []serve.WatchNode{
			node("A", "running", "A/a", "A/b"), node("A/a", "running"), node("A/b", "running"),
			node("B", "running", "B/c"), node("B/c", "running"),
		}},
		{Type: serve.EventDiff, Rev: "r.2", Nodes: []serve.WatchNode{node("A/a", "dead"), node("B/c", "finished")}},
		{Type: serve.EventDiff, Rev: "r.3", Nodes: []serve.WatchNode{
			node("A", "running", "A/a", "A/b", "A/n"), node("A/n", "running"), node("A/n", "dead")}},
		{Type: serve.EventDiff, Rev: "r.4", Nodes: []serve.WatchNode{node("A", "running", "A/a"), node("B", "dead", "B/c", "A/b")},
			Removed: []string{"A/n"}},
		{Type: serve.EventDiff, Rev: "r.5", Nodes: []serve.WatchNode{node("B", "dead")}, Removed: []string{"B/c", "A/b"}},
	}
	churn := recordStream(t, 200, 10, 12, 30)
	views := []struct {
		name string
		view model.TransitionView
	}{
		{"every one", model.TransitionView{}},
		{"the newest 3", model.TransitionView{Newest: 3}},
		{"the dead alone", model.TransitionView{Shows: func(t model.Transition) bool { return t.To == model.StateDead }}},
	}
	for _, stream := range []struct {
		name   string
		events []*serve.WatchEvent
	}{{"made", made}, {"a real serve's churn", churn.events(t)}} {
		for _, v := range views {
			t.Run(stream.name+", "+v.name, func(t *testing.T) {
				w := &wireHost{}
				const host = "h"
				at := time.Now()
				for k, ev := range stream.events {
					var trans *[]model.Transition
					var got []model.Transition
					if ev.Type == serve.EventDiff {
						trans = &got
					}
					prev := w.snapshot(at)
					if k == 0 {
						prev = nil
					}
					if err := w.apply(ev, at, host, DefaultMaxNodes, trans, v.view); err != nil {
						t.Fatalf("event %d: %v", k, err)
					}
					if trans == nil {
						continue
					}
					want := model.DiffFor(prev, w.snapshot(at), at, goneReason, v.view)
					if !reflect.DeepEqual(got, want) {
						t.Errorf("event %d (%s): transitions\n%+v\nwant DiffFor's\n%+v", k, ev.Rev, got, want)
					}
				}
			})
		}
	}
}

// SPEC §8, the fleet view under churn: a diff that moves no node copies
// the nodes it sends and their ancestors (a parent's list of children
// changed), and shares every other node of the session with the forest
// before: a watched host's nodes know their parent by id, so a node's
// siblings and children need no copy to point at its new one. Each node
// still names its parent, and the forest handed out before is unchanged.
func TestADiffCopiesItsNodesAndTheirAncestorsAlone(t *testing.T) {
	node := func(id, parent, state string, kids ...string) serve.WatchNode {
		j := serve.WatchNode{NodeJSON: report.NodeJSON{ID: id, State: model.State(state), Action: model.ActionNone},
			Kids: append([]string{}, kids...)}
		if parent != "" {
			j.Parent = &parent
		}
		return j
	}
	order := []string{"S", "U"}
	snapshot := &serve.WatchEvent{Type: serve.EventSnapshot, Rev: "r.1", Head: &report.Document{}, Sessions: &order,
		Nodes: []serve.WatchNode{
			node("S", "", "running", "S/1", "S/2"),
			node("S/1", "S", "running", "S/1/a", "S/1/b"), node("S/1/a", "S/1", "running"), node("S/1/b", "S/1", "running"),
			node("S/2", "S", "running", "S/2/a", "S/2/b"), node("S/2/a", "S/2", "running"), node("S/2/b", "S/2", "running"),
			node("U", "", "running"),
		}}
	for _, tc := range []struct {
		name   string
		diff   []serve.WatchNode
		copied []string // the nodes the diff's forest holds anew
	}{
		{"a leaf", []serve.WatchNode{node("S/1/a", "S/1", "dead")}, []string{"h/S", "h/S/1", "h/S/1/a"}},
		{"a lead", []serve.WatchNode{node("S/2", "S", "dead", "S/2/a", "S/2/b")}, []string{"h/S", "h/S/2"}},
		{"the session", []serve.WatchNode{node("S", "", "dead", "S/1", "S/2")}, []string{"h/S"}},
		{"two leaves", []serve.WatchNode{node("S/1/b", "S/1", "dead"), node("S/2/b", "S/2", "dead")},
			[]string{"h/S", "h/S/1", "h/S/1/b", "h/S/2", "h/S/2/b"}},
		{"a leaf sent twice, the last as it is", []serve.WatchNode{node("S/1/a", "S/1", "running"), node("S/1/a", "S/1", "dead")},
			[]string{"h/S", "h/S/1", "h/S/1/a"}},
		{"a lead and its leaf", []serve.WatchNode{node("S/2", "S", "dead", "S/2/a", "S/2/b"), node("S/2/b", "S/2", "dead")},
			[]string{"h/S", "h/S/2", "h/S/2/b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &wireHost{}
			const host = "h"
			at := time.Now()
			if err := w.apply(snapshot, at, host, DefaultMaxNodes, nil, model.TransitionView{}); err != nil {
				t.Fatal(err)
			}
			before := w.snapshot(at)
			was := map[string]*model.Node{}
			for id, n := range before.Nodes() {
				was[id] = n
			}
			diff := &serve.WatchEvent{Type: serve.EventDiff, Rev: "r.2", Nodes: tc.diff}
			if err := w.apply(diff, at, host, DefaultMaxNodes, nil, model.TransitionView{}); err != nil {
				t.Fatal(err)
			}
			after := w.snapshot(at)
			var copied []string
			for id, n := range after.Nodes() {
				if was[id] != n {
					copied = append(copied, id)
				}
				if p := after.ParentOf(n); n.ID != "h/U" && n.ID != "h/S" && (p == nil || !strings.HasPrefix(n.ID, p.ID+"/")) {
					t.Errorf("%s: its parent is %v", id, p)
				} else if p != nil && unsafe.StringData(n.ParentID) != unsafe.StringData(p.ID) {
					t.Errorf("%s holds a copy of its parent's id, not its parent's string", id)
				}
			}
			slices.Sort(copied)
			if !slices.Equal(copied, tc.copied) {
				t.Errorf("the diff copied %v, want %v alone", copied, tc.copied)
			}
			for id, n := range before.Nodes() {
				if n.State != model.StateRunning {
					t.Errorf("the forest before the diff changed: %s is %s", id, n.State)
				}
			}
			for _, j := range tc.diff {
				if n := after.Node("h/" + j.ID); n == nil || n.State != model.StateDead {
					t.Errorf("%s after the diff: %v", j.ID, n)
				}
			}
		})
	}
}
