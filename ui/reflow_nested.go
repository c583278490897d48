package ui

// Laying out a renewed top-level node whose children an update mostly
// shared. A fleet's host row is renewed whenever any of its 10,000 nodes
// changed, while all but a few of its sessions are the very nodes of the
// last layout (see model.Update): their rows are copied and moved, not laid
// out again, and the host row's roll-up is the sum of its children's, each
// kept with its child while the child is the same node. SPEC §8: the fleet
// view's CPU under churn, where every host is renewed at every update. The
// rows are exactly those lay makes (TestUpdateLaysOutAFleetAsAWholeLayout).

import (
	"slices"

	"github.com/dispatchtop/dispatchtop/model"
)

// nestedCache is what layRenewal keeps from one layout to the next.
type nestedCache struct {
	// rolls holds, by top-level node id, the roll-ups of its children.
	rolls map[string]childRolls
	// laid holds, by top-level node id, how layRenewal laid its block out
	// last; planned, how countRenewal counted the block it lays out next.
	// An entry is trusted only for the very node it was made of, and
	// checked against the rows (blockLayout.fits).
	laid, planned map[string]blockLayout
	// scratch holds the old rows of a block laid out over its own rows in
	// other places (the new ones may be written over them).
	scratch []row
	// written counts the rows layRenewal wrote or copied: the work a
	// renewal costs (TestRenewingASessionOfAHostWritesItsRowsAlone).
	written int
}

// blockLayout is where the children of a top-level node's block begin:
// kids in their order as laid out, starts[i] the row of kids[i] counted
// from the block's first row (the node itself), starts[len(kids)] the
// block's length. Knowing it, a renewal costs the children it renews, not
// a scan of the block's rows.
type blockLayout struct {
	of     *model.Node
	kids   []*model.Node
	starts []int
}

// fits says whether l describes block, the rows laid out of l.of: each
// child's first row where l says, and the block as long.
func (l blockLayout) fits(block []row) bool {
	if l.of == nil || len(l.starts) != len(l.kids)+1 || l.starts[len(l.kids)] != len(block) ||
		len(block) == 0 || block[0].node != l.of {
		return false
	}
	for i, k := range l.kids {
		if at := l.starts[i]; at >= len(block) || block[at].node != k || block[at].depth != 1 {
			return false
		}
	}
	return true
}

// forget drops what the cache knows of top's block: it was laid out by
// another way than layRenewal.
func (c *nestedCache) forget(id string) {
	delete(c.laid, id)
	delete(c.planned, id)
}

// clearLayouts drops every block's layout: the rows were laid out whole.
func (c *nestedCache) clearLayouts() {
	clear(c.laid)
	clear(c.planned)
}

// childRolls are the roll-ups of the subtrees of of's children, each
// child included, by the child's place in of.Children; spare is the array
// the next ones go into.
type childRolls struct {
	of           *model.Node
	rolls, spare []rollup
}

// layBlock lays out the fresh block b: from the rows of the block it
// renews when there is one and its rows are still there to copy (in place,
// the blocks before it may have been written over them), else whole.
func (m *Model) layBlock(f *flattener, rows []row, b flatBlock, old []row, inPlace bool) []row {
	if b.renews == 0 {
		m.flat.nested.forget(b.top.ID)
		return f.lay(rows, b.top)
	}
	ob := m.flat.tops[b.renews-1]
	if inPlace && ob.start < len(rows) || ob.end > len(old) || ob.end <= ob.start {
		m.flat.nested.forget(b.top.ID)
		return f.lay(rows, b.top)
	}
	return f.layRenewal(&m.flat.nested, rows, b.top, old[ob.start:ob.end], ob.start, inPlace)
}

// countBlock is the number of rows the fresh block b is laid out in: as
// layBlock lays it out, from the rows of the block it renews where it can.
func (m *Model) countBlock(f *flattener, b flatBlock) int {
	if b.renews == 0 {
		return f.count(b.top)
	}
	ob := m.flat.tops[b.renews-1]
	if ob.end > len(m.rows) || ob.end <= ob.start {
		return f.count(b.top)
	}
	return f.countRenewal(&m.flat.nested, b.top, m.rows[ob.start:ob.end])
}

// renewable says whether top's block can be laid out from old, the rows
// of the node it renews: only while nothing but the forest changes the
// rows (no filter, no followed node, top not folded) and top shares most
// of its children with the old one.
func (f *flattener) renewable(top *model.Node, old []row) bool {
	o := f.o
	return f.keep == nil && o.pin == nil && !o.collapsed[top.ID] && old[0].depth == 0 && old[0].node.ID == top.ID &&
		sharesMost(old[0].node, top)
}

// layoutOf is how old, the rows of a top-level node's block, were laid
// out: as the cache holds it when it fits them, else read off the rows.
func (c *nestedCache) layoutOf(o flatOptions, old []row) blockLayout {
	top := old[0].node
	if l, ok := c.laid[top.ID]; ok && l.fits(old) { // fits: made of top itself
		return l
	}
	l := blockLayout{of: top}
	for i := 1; i < len(old); i++ {
		if old[i].depth == 1 {
			l.starts = append(l.starts, i)
		}
	}
	l.starts = append(l.starts, len(old))
	if kids := o.sort.sorted(top.Children); len(kids) == len(l.starts)-1 {
		l.kids = kids
	} else {
		l.kids, l.starts = nil, []int{len(old)} // not laid out as it would be: nothing to copy
	}
	return l
}

// plan is how top's block is laid out over was, the layout of the node it
// renews: a child shared in its place keeps its rows' count, any other is
// counted. spare is an array the starts may go into.
func (f *flattener) plan(top *model.Node, was blockLayout, spare []int) blockLayout {
	p := blockLayout{of: top, kids: f.o.sort.renewedSorted(top.Children, was), starts: spare[:0]}
	n := 1
	for i, k := range p.kids {
		p.starts = append(p.starts, n)
		if i < len(was.kids) && was.kids[i] == k {
			n += was.starts[i+1] - was.starts[i]
		} else {
			n += f.count(k)
		}
	}
	p.starts = append(p.starts, n)
	return p
}

// renewedSorted is sorted(kids) for the children of a node that renews
// was.of: when was.of's children were in order as they were (laid out
// without a copy) and kids differ from them only in some places, kids are
// in order when each child renewed is in order with its neighbours. The
// others are, as they were: a renewal costs the children it renews, not a
// comparison of them all.
func (o sortOrder) renewedSorted(kids []*model.Node, was blockLayout) []*model.Node {
	before := []*model.Node(nil)
	if was.of != nil {
		before = was.of.Children
	}
	if len(kids) < 2 || len(before) != len(kids) || len(was.kids) != len(before) || &was.kids[0] != &before[0] {
		return o.sorted(kids)
	}
	for i, k := range kids {
		if k == before[i] {
			continue
		}
		if i > 0 && o.compare(kids[i-1], k) > 0 || i+1 < len(kids) && o.compare(k, kids[i+1]) > 0 {
			return o.sorted(kids)
		}
	}
	return kids
}

// countRenewal is count(top) for a top that renews the one laid out in
// old: a child shared in its place has the rows it had. What it counted is
// kept for layRenewal.
func (f *flattener) countRenewal(c *nestedCache, top *model.Node, old []row) int {
	if !f.renewable(top, old) {
		return f.count(top)
	}
	was := c.layoutOf(f.o, old)
	p := f.plan(top, was, c.planned[top.ID].starts)
	if c.planned == nil {
		c.planned = map[string]blockLayout{}
	}
	c.planned[top.ID] = p
	return p.starts[len(p.kids)]
}

// layRenewal appends the rows of top, a shown top-level node, to rows,
// copying from old (the rows of the node it renews, laid out from oldStart
// of the old rows) those of each child the two share. Only while nothing
// but the forest changes the rows: no filter, no followed node, top not
// folded; else it is lay. inPlace says old lies in rows' array: where
// every child keeps its place, only the renewed children's rows are
// written, each over its old ones, and the rest is left as it is.
func (f *flattener) layRenewal(c *nestedCache, rows []row, top *model.Node, old []row, oldStart int, inPlace bool) []row {
	o := f.o
	if !f.renewable(top, old) {
		c.forget(top.ID)
		return f.lay(rows, top)
	}
	was := c.layoutOf(o, old)
	p, ok := c.planned[top.ID]
	if !ok || p.of != top {
		p = f.plan(top, was, nil)
	}
	defer func() {
		// The layout laid is kept; the array of the one it replaces is
		// where the next plan's starts go.
		if c.laid == nil {
			c.laid = map[string]blockLayout{}
		}
		if c.planned == nil {
			c.planned = map[string]blockLayout{}
		}
		c.planned[top.ID] = blockLayout{starts: c.laid[top.ID].starts[:0]}
		c.laid[top.ID] = p
	}()
	oldTop := old[0].node
	// Children are matched by place, as sessions are (see model.Update): a
	// renewed one takes its old one's place. Where the places shift (a
	// child added or gone), those after it are laid out and counted again:
	// more work, never a wrong row.
	//
	// The roll-up, in the order rollupOf counts (a child, then what lies
	// beneath it): of a rank's several values, the first counted names it.
	if c.rolls == nil {
		c.rolls = map[string]childRolls{}
	}
	cr := c.rolls[top.ID]
	aligned := cr.of == oldTop && len(cr.rolls) == len(oldTop.Children)
	var roll rollup
	if aligned && len(top.Children) == len(oldTop.Children) {
		// Every child in its place (a host row of a churning fleet): the
		// renewed ones' roll-ups are written over their old ones.
		for i, k := range top.Children {
			if oldTop.Children[i] != k {
				var r rollup
				r.add(k)
				r.merge(rollupOf(k))
				cr.rolls[i] = r
			}
			roll.merge(cr.rolls[i])
		}
		c.rolls[top.ID] = childRolls{of: top, rolls: cr.rolls, spare: cr.spare}
	} else {
		rolls := cr.spare[:0]
		for i, k := range top.Children {
			var r rollup
			if aligned && i < len(oldTop.Children) && oldTop.Children[i] == k {
				r = cr.rolls[i]
			} else {
				r.add(k)
				r.merge(rollupOf(k))
			}
			rolls = append(rolls, r)
			roll.merge(r)
		}
		c.rolls[top.ID] = childRolls{of: top, rolls: rolls, spare: cr.rolls[:0]}
	}

	kids := p.kids
	self := len(rows)
	head := row{node: top, last: true, parent: -1, hasKids: len(kids) > 0, match: true}
	if len(top.Children) > 0 {
		head.roll = &roll
	}
	if inPlace && oldStart == self && slices.Equal(p.starts, was.starts) {
		// Every child in its place: the shared ones' rows are those there.
		rows = rows[:self+len(old)]
		rows[self] = head
		c.written++
		for i, k := range kids {
			if was.kids[i] == k {
				continue
			}
			f.rows = rows[:self+p.starts[i]]
			f.walk(k, 1, self, i == len(kids)-1)
			c.written += len(f.rows) - (self + p.starts[i])
			f.rows = nil
		}
		return rows
	}
	if inPlace {
		// The new rows may be written over the old ones elsewhere.
		c.scratch = append(c.scratch[:0], old...)
		old = c.scratch
		defer clear(c.scratch) // no node kept alive by it
	}
	rows = append(rows, head)
	c.written++
	for i, k := range kids {
		last := i == len(kids)-1
		if i >= len(was.kids) || was.kids[i] != k {
			f.rows = rows
			f.walk(k, 1, self, last)
			c.written += len(f.rows) - len(rows)
			rows, f.rows = f.rows, nil
			continue
		}
		at, end := was.starts[i], was.starts[i+1]
		start := len(rows)
		rows = append(rows, old[at:end]...)
		c.written += end - at
		shift := start - (oldStart + at)
		rows[start].parent, rows[start].last = self, last
		for j := start + 1; j < len(rows); j++ {
			rows[j].parent += shift
		}
	}
	return rows
}

// sharesMost says whether top has the children of was, most of them in
// their places: then copying their rows costs less than laying them out.
func sharesMost(was, top *model.Node) bool {
	if len(was.Children) != len(top.Children) || len(top.Children) < 2 {
		return false
	}
	shared := 0
	for i, k := range top.Children {
		if was.Children[i] == k {
			shared++
		}
	}
	return 2*shared >= len(top.Children)
}

// merge adds what o counted to r, as if o's nodes were added after r's.
func (r *rollup) merge(o rollup) {
	mergeWorst(&r.state, &r.states, o.state, o.states, stateRank)
	mergeWorst(&r.flag, &r.flags, o.flag, o.flags, flagRank)
	mergeWorst(&r.action, &r.actions, o.action, o.actions, actionRank)
}

// mergeWorst folds one count of a roll-up's cell into another: the worse
// value (the lower rank) wins with its count, and equal values add up.
func mergeWorst[T comparable](worst *T, n *int, o T, on int, rank func(T) int) {
	switch {
	case on == 0:
	case *n != 0 && o == *worst: // the usual case: no rank to look up
		*n += on
	case *n == 0 || rank(o) < rank(*worst):
		*worst, *n = o, on
	case rank(o) == rank(*worst):
		*n += on
	}
}
