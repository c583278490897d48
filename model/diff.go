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
	if prev == nil || next == nil {
		return nil
	}
	d := differ{prev: prev, now: now}
	for i, s := range next.Sessions {
		var p *Node
		if i < len(prev.Sessions) {
			if p = prev.Sessions[i]; p == s {
				continue // shared in its place: found without a lookup
			}
		}
		d.walk(s, p)
	}
	if d.fresh == 0 && prev.NodeCount() == next.NodeCount() {
		// Every id of next was in prev, and there are as many: none left.
		return d.out
	}
	var vanished []string
	for id, p := range prev.Nodes() {
		if next.Node(id) == nil && p.State != "" {
			vanished = append(vanished, id)
		}
	}
	sort.Strings(vanished)
	for _, id := range vanished {
		p := prev.Node(id)
		d.out = append(d.out, Transition{Time: now, ID: id, From: p.State, FromFlags: p.Flags, Reason: gone})
	}
	return d.out
}

// differ walks the next forest against the previous one's nodes.
type differ struct {
	prev  *Snapshot
	now   time.Time
	fresh int // nodes of next whose id prev does not know
	out   []Transition
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
	switch {
	case p == nil:
		d.fresh++
		if n.State != "" {
			d.out = append(d.out, Transition{Time: d.now, ID: n.ID, To: n.State, ToFlags: n.Flags, Reason: n.Reason})
		}
	case n.State != "" && (p.State != n.State || !slices.Equal(p.Flags, n.Flags)):
		d.out = append(d.out, Transition{Time: d.now, ID: n.ID, From: p.State, To: n.State,
			FromFlags: p.Flags, ToFlags: n.Flags, Reason: n.Reason})
	}
	for k, c := range n.Children {
		var pc *Node
		if p != nil && k < len(p.Children) {
			pc = p.Children[k]
		}
		d.walk(c, pc)
	}
}
