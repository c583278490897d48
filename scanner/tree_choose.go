package scanner

// The forest's choices (SPEC §2), once every candidate edge is known
// (tree.go): the strongest parent of each node, the claims that would pull
// a node out of its session refused, cycles broken at their weakest edge,
// and the snapshot linked, sorted and given its problems.

import (
	"slices"
	"sort"
	"strings"

	"github.com/dispatchtop/dispatchtop/model"
)

// choose keeps the strongest candidate of every node (ties to the smaller
// id) and names the others. A session lead by its own word, with no
// nesting to place it, refuses every registry claim on it.
func (b *builder) choose() {
	for _, n := range b.nodes {
		cs := b.cands[n]
		if len(cs) == 0 {
			continue
		}
		if len(cs) > 1 {
			slices.SortFunc(cs, func(a, b candidate) int {
				if a.strength != b.strength {
					return b.strength - a.strength
				}
				return strings.Compare(a.parent.ID, b.parent.ID)
			})
		}
		if n.Heartbeat != nil && n.Heartbeat.SessionLead() && b.own(n) == nil {
			for _, c := range cs { // no own parent: every candidate is a registry's
				b.refuse(n, c.parent)
			}
		}
		b.pick(n)
	}
}

// pick links n to its strongest candidate not refused (candidates sorted)
// and names the others, refused ones included, as losing parents.
func (b *builder) pick(n *model.Node) {
	n.Parent, n.Entry = nil, nil
	delete(b.chosen, n)
	var losers []string
	for _, c := range b.cands[n] {
		if n.Parent == nil && !b.refused[n][c.parent] {
			n.Parent, n.Entry = c.parent, c.entry
			b.chosen[n] = c.strength
			continue
		}
		losers = append(losers, c.parent.ID)
	}
	if len(losers) > 0 || len(n.OtherParents()) > 0 {
		n.EditRare(func(r *model.Rare) { r.OtherParents = losers })
	}
	if len(losers) > 0 {
		addScanFlag(n, model.FlagConflict)
	}
}

// own is the parent n gives itself: the node its parent_heartbeat names,
// else the node whose directory holds it; nil when there is neither.
func (b *builder) own(n *model.Node) *model.Node {
	var nest *model.Node
	for _, c := range b.cands[n] {
		if c.from(edgeDeclared) {
			return c.parent
		}
		if c.from(edgeNesting) {
			nest = c.parent
		}
	}
	return nest
}

func (b *builder) refuse(child, parent *model.Node) {
	if b.refused[child] == nil {
		b.refused[child] = map[*model.Node]bool{}
	}
	b.refused[child][parent] = true
}

// keepSessionsApart refuses every registry edge that pulls a node out of
// the session of its own parent, and relinks the node (SPEC §2: trees are
// scoped). Sessions are read off the forest as linked so far, so a refusal
// that moves a subtree is seen by the next check; it runs until nothing
// changes (each round refuses a claim, so it ends). Only nodes whose
// registry parent is not their own parent are visited: none in a forest
// where the sources agree.
func (b *builder) keepSessionsApart() {
	var contested []*model.Node
	for _, n := range b.nodes {
		if own := b.own(n); own != nil && n.Parent != nil && n.Parent != own {
			contested = append(contested, n)
		}
	}
	sort.Slice(contested, func(i, j int) bool { return contested[i].ID < contested[j].ID })
	for changed := true; changed; {
		changed = false
		for _, n := range contested {
			p, own := n.Parent, b.own(n)
			if p == nil || p == own || !b.registered(n, p) || b.sessionOf(p) == b.sessionOf(own) {
				continue
			}
			b.refuse(n, p)
			b.pick(n)
			if b.inCycle(n) { // the next claim may come from below n
				b.breakCycles()
			}
			changed = true
		}
	}
}

// registered reports whether p's registry names n.
func (b *builder) registered(n, p *model.Node) bool {
	for _, c := range b.cands[n] {
		if c.parent == p {
			return c.from(edgeRegistry)
		}
	}
	return false
}

// sessionOf is the topmost ancestor of n (cycles are broken before).
func (b *builder) sessionOf(n *model.Node) *model.Node {
	for steps := 0; n.Parent != nil && steps <= len(b.nodes); steps++ {
		n = n.Parent
	}
	return n
}

// inCycle reports whether n's parent links lead back to n.
func (b *builder) inCycle(n *model.Node) bool {
	for p, steps := n.Parent, 0; p != nil && steps <= len(b.nodes); p, steps = p.Parent, steps+1 {
		if p == n {
			return true
		}
	}
	return false
}

// breakCycles cuts every cycle of parent links at its weakest edge (ties to
// the smallest id) and flags its members. The parent cut off is appended
// last to the OtherParents of the node left without one: the classifier
// names the edge from there.
func (b *builder) breakCycles() {
	const (
		unseen = iota
		onPath
		finished
	)
	// The nodes are visited in the builder's order, not sorted by id: a
	// node has one parent, so cycles share no node, and each is cut at the
	// same edge whichever of its members the walk up meets it from.
	state := make(map[*model.Node]int, len(b.nodes))
	var path []*model.Node
	for _, start := range b.nodes {
		path = path[:0]
		n := start
		for n != nil && state[n] == unseen {
			state[n] = onPath
			path = append(path, n)
			n = n.Parent
		}
		if n != nil && state[n] == onPath {
			var cycle []*model.Node
			for i := len(path) - 1; i >= 0; i-- {
				cycle = append(cycle, path[i])
				if path[i] == n {
					break
				}
			}
			cut := cycle[0]
			for _, c := range cycle {
				addScanFlag(c, model.FlagCycle)
				if b.chosen[c] < b.chosen[cut] || b.chosen[c] == b.chosen[cut] && c.ID < cut.ID {
					cut = c
				}
			}
			lost := cut.Parent.ID
			cut.EditRare(func(r *model.Rare) { r.OtherParents = append(r.OtherParents, lost) })
			cut.Parent, cut.Entry = nil, nil
		}
		for _, p := range path {
			state[p] = finished
		}
	}
}

// snapshot links children, sorts and collects problems.
func (b *builder) snapshot(problems []model.Problem) *model.Snapshot {
	snap := &model.Snapshot{ByID: make(map[string]*model.Node, len(b.nodes))}
	for _, r := range b.roots {
		snap.Roots = append(snap.Roots, r.Path)
		snap.RootSources = append(snap.RootSources, string(r.Kind()))
	}
	for _, n := range b.nodes {
		for p := range b.refused[n] {
			p.EditRare(func(r *model.Rare) { r.RefusedChildren = append(r.RefusedChildren, n.ID) })
			addScanFlag(p, model.FlagConflict)
		}
	}
	// Every node with a parent, sorted by its parent's id, then its own:
	// each parent's children are then a run of one list, in id order,
	// rather than a list grown child by child. The walk's children and the
	// stores' are sorted apart and merged: the walk's come nearly in order,
	// and sorting the stores' among them made a sort of them all cost three
	// times a sort of theirs.
	children := make([]*model.Node, 0, len(b.nodes))
	var storeChildren []*model.Node
	for _, n := range b.nodes {
		if ids := n.RefusedChildren(); !slices.IsSorted(ids) {
			n.EditRare(func(r *model.Rare) { r.RefusedChildren = slices.Sorted(slices.Values(ids)) })
		}
		snap.ByID[n.ID] = n
		if n.Parent == nil {
			snap.Sessions = append(snap.Sessions, n)
			continue
		}
		n.ParentID = n.Parent.ID
		if isStoreNode(n) {
			storeChildren = append(storeChildren, n)
		} else {
			children = append(children, n)
		}
	}
	slices.SortFunc(children, byParentThenID)
	if len(storeChildren) > 0 {
		slices.SortFunc(storeChildren, byParentThenID)
		children = mergeSorted([][]*model.Node{children, storeChildren}, byParentThenID)
	}
	for i := 0; i < len(children); {
		p, j := children[i].Parent, i+1
		for j < len(children) && children[j].Parent == p {
			j++
		}
		if p.Children == nil {
			p.Children = children[i:j:j]
		} else { // a second run: two nodes of one id
			p.Children = append(p.Children, children[i:j]...)
		}
		i = j
	}
	slices.SortFunc(snap.Sessions, byID)
	snap.Problems = append(snap.Problems, problems...)
	for _, s := range snap.Sessions {
		s.Walk(func(n *model.Node) {
			snap.Problems = append(snap.Problems, n.Problems()...)
		})
	}
	return snap
}

// byParentThenID orders nodes by their parent's id, then their own.
func byParentThenID(a, b *model.Node) int {
	if c := strings.Compare(a.ParentID, b.ParentID); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// byID orders nodes by id.
func byID(a, b *model.Node) int { return strings.Compare(a.ID, b.ID) }
