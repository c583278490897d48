package model

import (
	"slices"
	"sort"
	"time"
)

// Diff lists the transitions from prev to next, two snapshots of one
// forest: a node whose state or flags changed, one that appeared (From
// ""), one that vanished (To "", with gone as its reason: "vanished from
// disk"). Nodes are matched by id. next's come in tree order (sessions,
// then depth first, siblings by id), the vanished after them, by id. A
// node without a state (a fleet's host row) is not classified and makes
// no transition. With no prev (the first snapshot) there are none.
//
// next may share nodes with prev (a watcher republishes the sessions
// nothing touched, see Update): a shared node is the same classification,
// so its subtree is skipped and a diff costs what was reclassified, not
// the forest. Each snapshot must hold exactly its forest's nodes.
func Diff(prev, next *Snapshot, now time.Time, gone string) []Transition {
	return DiffFor(prev, next, now, gone, TransitionView{})
}

// TransitionView is what the consumer of a stream of updates shows of each
// update's transitions: a producer told so lists only those (DiffFor). The
// zero value shows every one.
type TransitionView struct {
	// Shows says whether the consumer shows t; nil: every one.
	Shows func(t Transition) bool
	// Newest > 0: of those shown, only the newest this many are kept (the
	// dashboard's event pane holds 10,000).
	Newest int
}

// DiffFor is Diff's list as view's consumer keeps it: the transitions it
// shows, the newest view.Newest of them, in Diff's order. A fleet of
// 100,000 nodes crossing a threshold together then costs the dashboard
// the events it can hold, not a transition per node (SPEC §8 memory).
func DiffFor(prev, next *Snapshot, now time.Time, gone string, view TransitionView) []Transition {
	if prev == nil || next == nil {
		return nil
	}
	// Counted first, then listed: a fleet crossing a threshold together
	// makes a transition of every node, whose list, grown, would leave
	// arrays of several times its size behind (SPEC §8 memory).
	d := differ{prev: prev, now: now, counting: true, shows: view.Shows}
	d.sessions(next)
	var vanished []string
	if d.fresh > 0 || prev.NodeCount() != next.NodeCount() {
		// Some id of prev may be gone: those of next are prev's but fresh.
		vanished = make([]string, 0, max(prev.NodeCount()-next.NodeCount()+d.fresh, 0))
		for id, p := range prev.Nodes() {
			if next.Node(id) == nil && p.State != "" {
				vanished = append(vanished, id)
			}
		}
		sort.Strings(vanished)
	}
	vanishedAt := func(id string) Transition { return VanishedTransition(prev.Node(id), now, gone) }
	for _, id := range vanished {
		d.add(vanishedAt(id))
	}
	if d.count == 0 {
		return nil
	}
	listed := d.count
	if view.Newest > 0 && listed > view.Newest {
		d.skip, listed = d.count-view.Newest, view.Newest
	}
	d.counting, d.out = false, make([]Transition, 0, listed)
	d.sessions(next)
	for _, id := range vanished {
		d.add(vanishedAt(id))
	}
	return d.out
}

// differ walks the next forest against the previous one's nodes: first
// counting the transitions, then listing them.
type differ struct {
	prev     *Snapshot
	now      time.Time
	counting bool
	shows    func(Transition) bool // nil: every transition is listed
	count    int                   // transitions counted that are shown
	skip     int                   // of those, how many to leave out, the oldest
	fresh    int                   // nodes of next whose id prev does not know, counted
	out      []Transition
}

// sessions walks next's sessions but those it shares with prev in place.
func (d *differ) sessions(next *Snapshot) {
	for i, s := range next.Sessions {
		var p *Node
		if i < len(d.prev.Sessions) {
			if p = d.prev.Sessions[i]; p == s {
				continue // shared in its place: found without a lookup
			}
		}
		d.walk(s, p)
	}
}

// walk diffs n's subtree, with p the node in n's place in prev's forest
// (or nil): when it has n's id it is prev's node of that id, ids being
// unique in a forest, so a copy of an unchanged shape is diffed without a
// lookup.
func (d *differ) walk(n, p *Node) {
	if p == nil || p.ID != n.ID {
		p = d.prev.Node(n.ID)
	}
	if p == n {
		return // shared with prev: nothing below it moved
	}
	if p == nil && d.counting {
		d.fresh++
	}
	if t, ok := NodeTransition(p, n, d.now); ok {
		d.add(t)
	}
	for k, c := range n.Children {
		var pc *Node
		if p != nil && k < len(p.Children) {
			pc = p.Children[k]
		}
		d.walk(c, pc)
	}
}

// NodeTransition is the transition of n from p, its node in the forest
// before (nil: n is new there), as Diff lists it: none for a node without
// a state (a fleet's host row), nor for one whose state and flags held.
func NodeTransition(p, n *Node, now time.Time) (Transition, bool) {
	switch {
	case n.State == "":
		return Transition{}, false
	case p == nil:
		return Transition{Time: now, ID: n.ID, To: n.State, ToFlags: n.Flags, Reason: n.Reason}, true
	case p.State != n.State || !slices.Equal(p.Flags, n.Flags):
		return Transition{Time: now, ID: n.ID, From: p.State, To: n.State,
			FromFlags: p.Flags, ToFlags: n.Flags, Reason: n.Reason}, true
	}
	return Transition{}, false
}

// VanishedTransition is the transition of p, gone from the forest, with
// gone as its reason, as Diff lists it (for a node with a state).
func VanishedTransition(p *Node, now time.Time, gone string) Transition {
	return Transition{Time: now, ID: p.ID, From: p.State, FromFlags: p.Flags, Reason: gone}
}

// Keep is what the view keeps of ts, in place: those it shows, the
// newest Newest of them (DiffFor's list of the same transitions).
func (v TransitionView) Keep(ts []Transition) []Transition {
	if v.Shows != nil {
		ts = slices.DeleteFunc(ts, func(t Transition) bool { return !v.Shows(t) })
	}
	if v.Newest > 0 && len(ts) > v.Newest {
		ts = append(ts[:0], ts[len(ts)-v.Newest:]...)
	}
	return ts
}

// add counts t, or lists it, when it is shown and not one of the oldest
// left out.
func (d *differ) add(t Transition) {
	switch {
	case d.shows != nil && !d.shows(t):
	case d.counting:
		d.count++
	case d.skip > 0:
		d.skip--
	default:
		d.out = append(d.out, t)
	}
}
