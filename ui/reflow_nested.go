package ui

// Laying out a renewed top-level node whose children an update mostly
// shared. A fleet's host row is renewed whenever any of its 10,000 nodes
// changed, while all but a few of its sessions are the very nodes of the
// last layout (see model.Update): their rows are copied and moved, not laid
// out again, and the host row's roll-up is the sum of its children's, each
// kept with its child while the child is the same node. SPEC §8: the fleet
// view's CPU under churn, where every host is renewed at every update. The
// rows are exactly those lay makes (TestUpdateLaysOutAFleetAsAWholeLayout).

import "github.com/dispatchtop/dispatchtop/model"

// nestedCache is what layRenewal keeps from one layout to the next.
type nestedCache struct {
	// rolls holds, by top-level node id, the roll-ups of its children.
	rolls map[string]childRolls
	// scratch holds the old rows of the block being laid out (the new
	// ones may be written over them); starts, where each of its
	// children's rows begin.
	scratch []row
	starts  []int
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
		return f.lay(rows, b.top)
	}
	ob := m.flat.tops[b.renews-1]
	if inPlace && ob.start < len(rows) || ob.end > len(old) || ob.end <= ob.start {
		return f.lay(rows, b.top)
	}
	return f.layRenewal(&m.flat.nested, rows, b.top, old[ob.start:ob.end], ob.start)
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

// countRenewal is count(top) for a top that renews the one laid out in
// old: a child shared in its place has the rows it had.
func (f *flattener) countRenewal(c *nestedCache, top *model.Node, old []row) int {
	o := f.o
	if f.keep != nil || o.pin != nil || o.collapsed[top.ID] || old[0].depth != 0 || old[0].node.ID != top.ID ||
		!sharesMost(old[0].node, top) {
		return f.count(top)
	}
	c.starts = c.starts[:0]
	for i := 1; i < len(old); i++ {
		if old[i].depth == 1 {
			c.starts = append(c.starts, i)
		}
	}
	oldKids := o.sort.sorted(old[0].node.Children)
	if len(oldKids) != len(c.starts) {
		oldKids = nil
	}
	n := 1
	for i, k := range o.sort.sorted(top.Children) {
		if i >= len(oldKids) || oldKids[i] != k {
			n += f.count(k)
			continue
		}
		end := len(old)
		if i+1 < len(c.starts) {
			end = c.starts[i+1]
		}
		n += end - c.starts[i]
	}
	return n
}

// layRenewal appends the rows of top, a shown top-level node, to rows,
// copying from old (the rows of the node it renews, laid out from oldStart
// of the old rows) those of each child the two share. Only while nothing
// but the forest changes the rows: no filter, no followed node, top not
// folded; else it is lay.
func (f *flattener) layRenewal(c *nestedCache, rows []row, top *model.Node, old []row, oldStart int) []row {
	o := f.o
	if f.keep != nil || o.pin != nil || o.collapsed[top.ID] || old[0].depth != 0 || old[0].node.ID != top.ID ||
		!sharesMost(old[0].node, top) {
		return f.lay(rows, top) // as cheap: most of it is new
	}
	c.scratch = append(c.scratch[:0], old...)
	old = c.scratch
	defer clear(c.scratch) // no node kept alive by it
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
	rolls := cr.spare[:0]
	var roll rollup
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

	c.starts = c.starts[:0]
	for i := 1; i < len(old); i++ {
		if old[i].depth == 1 {
			c.starts = append(c.starts, i)
		}
	}
	oldKids := o.sort.sorted(oldTop.Children)
	if len(oldKids) != len(c.starts) {
		oldKids = nil // not laid out as it would be: nothing to copy
	}
	kids := o.sort.sorted(top.Children)
	self := len(rows)
	rows = append(rows, row{node: top, last: true, parent: -1, hasKids: len(kids) > 0, match: true})
	if len(top.Children) > 0 {
		rows[self].roll = &roll
	}
	for i, k := range kids {
		last := i == len(kids)-1
		if i >= len(oldKids) || oldKids[i] != k {
			f.rows = rows
			f.walk(k, 1, self, last)
			rows, f.rows = f.rows, nil
			continue
		}
		at, end := c.starts[i], len(old)
		if i+1 < len(c.starts) {
			end = c.starts[i+1]
		}
		start := len(rows)
		rows = append(rows, old[at:end]...)
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
func mergeWorst[T any](worst *T, n *int, o T, on int, rank func(T) int) {
	switch {
	case on == 0:
	case *n == 0 || rank(o) < rank(*worst):
		*worst, *n = o, on
	case rank(o) == rank(*worst):
		*n += on
	}
}
