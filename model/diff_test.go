package model

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// tnode is a node of a test forest: id, state, flags, reason, children.
type tnode struct {
	id     string
	state  State
	flags  []Flag
	reason string
	action Action
	kids   []tnode
}

// build makes a fresh forest of the given sessions, ByID holding every node.
func build(sessions ...tnode) *Snapshot {
	snap := &Snapshot{ByID: map[string]*Node{}}
	var mk func(t tnode, parent *Node) *Node
	mk = func(t tnode, parent *Node) *Node {
		n := &Node{ID: t.id, State: t.state, Flags: t.flags, Reason: t.reason, Action: t.action, Parent: parent}
		snap.ByID[n.ID] = n
		for _, k := range t.kids {
			n.Children = append(n.Children, mk(k, n))
		}
		return n
	}
	for _, s := range sessions {
		snap.Sessions = append(snap.Sessions, mk(s, nil))
	}
	return snap
}

// share returns next with its session id replaced by prev's very node (and
// its subtree), as a watcher republishes a session nothing touched.
func share(prev, next *Snapshot, id string) *Snapshot {
	for i, s := range next.Sessions {
		if s.ID != id {
			continue
		}
		s.Walk(func(n *Node) { delete(next.ByID, n.ID) })
		p := prev.ByID[id]
		next.Sessions[i] = p
		p.Walk(func(n *Node) { next.ByID[n.ID] = n })
	}
	return next
}

// show writes transitions as "id from[+flags]>to[+flags] (reason)".
func show(tr []Transition) []string {
	out := make([]string, 0, len(tr))
	for _, t := range tr {
		side := func(s State, fs []Flag) string {
			parts := []string{string(s)}
			for _, f := range fs {
				parts = append(parts, string(f))
			}
			return strings.Join(parts, "+")
		}
		out = append(out, fmt.Sprintf("%s %s>%s (%s)", t.ID, side(t.From, t.FromFlags), side(t.To, t.ToFlags), t.Reason))
	}
	return out
}

var (
	running = StateRunning
	dead    = StateDead
	stalled = []Flag{FlagStalled}
)

// SPEC §6 Event pane: what changed between two snapshots of a forest, the
// same for the live engine and a fleet view.
func TestDiff(t *testing.T) {
	now := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
	lead := func(kids ...tnode) tnode {
		return tnode{id: "a", state: running, reason: "beating", kids: kids}
	}
	child := func(id string, s State, reason string, flags ...Flag) tnode {
		return tnode{id: id, state: s, reason: reason, flags: flags}
	}
	tests := []struct {
		name       string
		prev, next func() (*Snapshot, *Snapshot)
		want       []string
	}{
		{name: "the first snapshot has no transitions",
			prev: func() (*Snapshot, *Snapshot) { return nil, build(lead(child("a/b", running, "beating"))) }},
		{name: "a forest rebuilt unchanged has none",
			prev: func() (*Snapshot, *Snapshot) {
				return build(lead(child("a/b", running, "beating"))), build(lead(child("a/b", running, "beating")))
			}},
		{name: "a state change, with the new reason",
			prev: func() (*Snapshot, *Snapshot) {
				return build(lead(child("a/b", running, "beating"))), build(lead(child("a/b", dead, "pid 7 gone")))
			},
			want: []string{"a/b running>dead (pid 7 gone)"}},
		{name: "a flag change in the same state",
			prev: func() (*Snapshot, *Snapshot) {
				return build(lead(child("a/b", running, "beating"))), build(lead(child("a/b", running, "alive but not beating for 2m00s", FlagStalled)))
			},
			want: []string{"a/b running>running+stalled (alive but not beating for 2m00s)"}},
		{name: "a flag cleared",
			prev: func() (*Snapshot, *Snapshot) {
				return build(lead(child("a/b", running, "x", FlagStalled, FlagKillCandidate))), build(lead(child("a/b", running, "x", FlagStalled)))
			},
			want: []string{"a/b running+stalled+kill_candidate>running+stalled (x)"}},
		{name: "a reason or an action alone is no transition",
			prev: func() (*Snapshot, *Snapshot) {
				p := build(lead(child("a/b", running, "last beat 1s ago")))
				n := build(lead(child("a/b", running, "last beat 9s ago")))
				n.ByID["a"].Action = ActionCompact
				return p, n
			}},
		{name: "an appearance",
			prev: func() (*Snapshot, *Snapshot) {
				return build(lead()), build(lead(child("a/c", running, "starting", FlagStarting)))
			},
			want: []string{"a/c >running+starting (starting)"}},
		{name: "vanished nodes come after, by id, with the reason given",
			prev: func() (*Snapshot, *Snapshot) {
				return build(lead(child("a/x", dead, "pid gone"), child("a/b", running, "beating", FlagQuiet))), build(lead())
			},
			want: []string{"a/b running+quiet> (vanished from disk)", "a/x dead> (vanished from disk)"}},
		{name: "next's transitions in tree order, then the vanished",
			prev: func() (*Snapshot, *Snapshot) {
				return build(lead(child("a/z", running, "")), tnode{id: "b", state: running}),
					build(tnode{id: "a", state: dead, reason: "pid 1 gone", kids: []tnode{child("a/y", running, "new")}}, tnode{id: "b", state: dead, reason: "pid 2 gone"})
			},
			want: []string{"a running>dead (pid 1 gone)", "a/y >running (new)", "b running>dead (pid 2 gone)", "a/z running> (vanished from disk)"}},
		{name: "a node replaced by another of a new id: both seen",
			prev: func() (*Snapshot, *Snapshot) {
				return build(lead(child("a/x", running, ""))), build(lead(child("a/y", running, "")))
			},
			want: []string{"a/y >running ()", "a/x running> (vanished from disk)"}},
		{name: "a fleet's host rows have no state and no transitions; their nodes do",
			prev: func() (*Snapshot, *Snapshot) {
				host := func(reason string, kids ...tnode) tnode { return tnode{id: "host-a", reason: reason, kids: kids} }
				return build(host("http://a: 7 nodes", child("host-a/B", dead, "pid 4201 gone")), tnode{id: "host-c"}),
					build(host("unreachable since 12:00:02", child("host-a/B", running, "beating")), tnode{id: "host-d"})
			},
			want: []string{"host-a/B dead>running (beating)"}},
		{name: "a shared session is skipped, a reclassified one beside it is not",
			prev: func() (*Snapshot, *Snapshot) {
				p := build(lead(child("a/b", running, "")), tnode{id: "s", state: running, kids: []tnode{child("s/t", running, "")}})
				n := build(lead(child("a/b", dead, "pid gone")), tnode{id: "s", state: running, kids: []tnode{child("s/t", running, "")}})
				return p, share(p, n, "s")
			},
			want: []string{"a/b running>dead (pid gone)"}},
		{name: "a shared session moved down by a new one before it",
			prev: func() (*Snapshot, *Snapshot) {
				p := build(tnode{id: "s", state: running, kids: []tnode{child("s/t", running, "")}})
				n := build(lead(), tnode{id: "s", state: running, kids: []tnode{child("s/t", dead, "changed, but shared")}})
				return p, share(p, n, "s")
			},
			want: []string{"a >running (beating)"}},
		{name: "a session gone beside a shared one: it and its nodes vanish",
			prev: func() (*Snapshot, *Snapshot) {
				p := build(lead(child("a/b", running, "")), tnode{id: "s", state: running})
				n := build(tnode{id: "s", state: running})
				return p, share(p, n, "s")
			},
			want: []string{"a running> (vanished from disk)", "a/b running> (vanished from disk)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev, next := tt.prev()
			got := show(Diff(prev, next, now, "vanished from disk"))
			if !slices.Equal(got, tt.want) {
				t.Errorf("Diff:\n  got  %q\n  want %q", got, tt.want)
			}
		})
	}
}

// Every transition carries the time of the diff; without a next snapshot
// there is nothing to compare.
func TestDiffStampsTime(t *testing.T) {
	now := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
	prev := build(tnode{id: "a", state: running})
	next := build(tnode{id: "a", state: running, flags: stalled}, tnode{id: "b", state: dead})
	for _, tr := range Diff(prev, next, now, "gone") {
		if !tr.Time.Equal(now) {
			t.Errorf("%s at %v, want %v", tr.ID, tr.Time, now)
		}
	}
	if got := Diff(build(tnode{id: "a", state: running}), nil, now, "gone"); got != nil {
		t.Errorf("no next snapshot made %v", got)
	}
}

// TestDiffAllocatesItsTransitionsOnce: SPEC §8 "100,000 nodes: ≤ 300 MiB
// RSS". A fleet crossing a threshold together makes a transition of every
// node in one diff: its list is made at its length, not grown (growing
// one of 100,000 left some 40 MB of arrays behind it, while the renewed
// forest and the one still shown are both alive). Nodes appearing and
// vanishing count too.
func TestDiffAllocatesItsTransitionsOnce(t *testing.T) {
	fleet := func(state State, sessions, extra int) *Snapshot {
		var ts []tnode
		for i := range sessions + extra {
			s := tnode{id: fmt.Sprintf("s%d", i), state: state}
			for k := range 9 {
				s.kids = append(s.kids, tnode{id: fmt.Sprintf("s%d/k%d", i, k), state: state})
			}
			ts = append(ts, s)
		}
		return build(ts...)
	}
	tests := []struct {
		name       string
		prev, next *Snapshot
		want       int
	}{
		{"every node changed", fleet(StateRunning, 100, 0), fleet(StateDead, 100, 0), 1000},
		{"every node changed, a session more", fleet(StateRunning, 100, 0), fleet(StateDead, 100, 1), 1010},
		{"every node changed, a session less", fleet(StateRunning, 100, 1), fleet(StateDead, 100, 0), 1010},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out []Transition
			allocs := testing.AllocsPerRun(5, func() { out = Diff(tt.prev, tt.next, mergeNow, "vanished") })
			if len(out) != tt.want {
				t.Fatalf("%d transitions, want %d", len(out), tt.want)
			}
			if cap(out) != len(out) {
				t.Errorf("capacity %d for %d transitions: the list was grown", cap(out), len(out))
			}
			// The list, and for vanished nodes the sorted list of their ids.
			if allocs > 2 {
				t.Errorf("%v allocations a diff, want the list's one (two with vanished ids)", allocs)
			}
		})
	}
}

// A consumer that shows only some transitions, and only the newest of
// them (the dashboard's event pane: SPEC §6), gets from a diff exactly
// those, in order: what it would keep of the whole list.
func TestDiffForListsWhatItsConsumerShows(t *testing.T) {
	now := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
	quiet := []Flag{FlagQuiet}
	prev := build(
		tnode{id: "a", state: running, kids: []tnode{{id: "a/1", state: running}, {id: "a/2", state: running}}},
		tnode{id: "b", state: running, kids: []tnode{{id: "b/1", state: running}}},
		tnode{id: "c", state: running},
		tnode{id: "d", state: running},
	)
	next := build(
		tnode{id: "a", state: running, flags: quiet, kids: []tnode{{id: "a/1", state: dead}, {id: "a/2", state: running, flags: quiet}}},
		tnode{id: "b", state: dead, kids: []tnode{{id: "b/1", state: running, flags: stalled}, {id: "b/3", state: running}}},
		tnode{id: "c", state: running, flags: quiet},
	)
	notQuiet := func(t Transition) bool { return !slices.Contains(t.ToFlags, FlagQuiet) }
	all := Diff(prev, next, now, "vanished")
	tests := []struct {
		name string
		view TransitionView
	}{
		{"every one", TransitionView{}},
		{"the newest three", TransitionView{Newest: 3}},
		{"those shown", TransitionView{Shows: notQuiet}},
		{"the newest two shown", TransitionView{Shows: notQuiet, Newest: 2}},
		{"more than there are", TransitionView{Shows: notQuiet, Newest: 100}},
		{"the newest one: a vanished node", TransitionView{Shows: notQuiet, Newest: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []Transition
			for _, tr := range all {
				if tt.view.Shows == nil || tt.view.Shows(tr) {
					want = append(want, tr)
				}
			}
			if tt.view.Newest > 0 && len(want) > tt.view.Newest {
				want = want[len(want)-tt.view.Newest:]
			}
			got := DiffFor(prev, next, now, "vanished", tt.view)
			if !slices.Equal(show(got), show(want)) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(show(got), "\n  "), strings.Join(show(want), "\n  "))
			}
		})
	}
}

// SPEC §8 memory: a fleet crossing a threshold together makes a transition
// of every node; a consumer that keeps the newest few of them costs only
// those.
func TestDiffForAllocatesOnlyWhatItsConsumerKeeps(t *testing.T) {
	fleet := func(state State) *Snapshot {
		var ts []tnode
		for i := range 1000 {
			ts = append(ts, tnode{id: fmt.Sprintf("s%d", i), state: state})
		}
		return build(ts...)
	}
	prev, next := fleet(StateRunning), fleet(StateDead)
	var out []Transition
	view := TransitionView{Newest: 10, Shows: func(Transition) bool { return true }}
	allocs := testing.AllocsPerRun(5, func() { out = DiffFor(prev, next, mergeNow, "vanished", view) })
	if len(out) != 10 || out[9].ID != "s999" {
		t.Fatalf("%d transitions, the last %+v: want the newest 10", len(out), out[len(out)-1])
	}
	if cap(out) > 10 || allocs > 1 {
		t.Errorf("a list of capacity %d in %v allocations, want one of 10", cap(out), allocs)
	}
}

// A view keeps, of a list of transitions, what DiffFor would list of it:
// those it shows, the newest Newest of them, in their order.
func TestTransitionViewKeepsWhatItShowsTheNewestLast(t *testing.T) {
	list := func(ids ...string) []Transition {
		var ts []Transition
		for _, id := range ids {
			to := StateRunning
			if strings.HasPrefix(id, "d") {
				to = StateDead
			}
			ts = append(ts, Transition{ID: id, To: to})
		}
		return ts
	}
	dead := func(t Transition) bool { return t.To == StateDead }
	tests := []struct {
		name string
		view TransitionView
		want []string
	}{
		{"every one", TransitionView{}, []string{"a", "d1", "b", "d2", "d3"}},
		{"the newest 2", TransitionView{Newest: 2}, []string{"d2", "d3"}},
		{"the dead", TransitionView{Shows: dead}, []string{"d1", "d2", "d3"}},
		{"the newest 2 of the dead", TransitionView{Shows: dead, Newest: 2}, []string{"d2", "d3"}},
		{"more than there are", TransitionView{Newest: 9}, []string{"a", "d1", "b", "d2", "d3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, tr := range tt.view.Keep(list("a", "d1", "b", "d2", "d3")) {
				got = append(got, tr.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("kept %v, want %v", got, tt.want)
			}
		})
	}
}
