package ui

// Laying the tree out as rows: whole after a change of what is shown (a
// filter, a sort, a fold), and after an update only for the top-level
// nodes it renewed. A stream of heartbeat touches at 10,000 nodes brings
// dozens of updates a second, each renewing a session or two: their rows
// are laid out again, the others' are kept.

import (
	"github.com/dispatchtop/dispatchtop/model"
)

// flatCache is what the rows were last laid out from, for reflowUpdate.
type flatCache struct {
	// valid: the rows were laid out whole since the model began, with the
	// options below (every change of them, and of the folds, goes through
	// reflow, which lays out whole). A followed node needs no check: it
	// changes only the layout of its own top-level node, which is renewed
	// when the node is, or moves in or out of it.
	valid bool
	query query
	state stateFilter
	sort  sortOrder
	// tops are the top-level nodes of the layout in their order, each with
	// its rows (empty when a filter hides it); spareTops is the array the
	// next layout's go into.
	tops, spareTops []flatBlock
	// spare is the array the next layout that moves rows goes into.
	spare []row
	// at finds an old block by its top when the order of the tops differs.
	at map[*model.Node]int
	// indexed: the model's index holds the rows as they are (rowOf builds
	// it when it does not).
	indexed bool
	// nested is what a renewed top-level node's layout keeps (reflow_nested.go).
	nested nestedCache
}

// flatBlock is a top-level node and its rows, m.rows[start:end].
type flatBlock struct {
	top        *model.Node
	start, end int
	// from is, while a layout is made, where a kept block's rows are in
	// the old rows; fresh: the block is laid out anew.
	from  int
	fresh bool
	// renews is 1 + the index in the old tops of the block this fresh one
	// renews (0: none): its shared children's rows are copied from it.
	renews int
}

// flatOptions are the options the rows are laid out with now.
func (m *Model) flatOptions() flatOptions {
	o := flatOptions{collapsed: m.collapsed, query: m.query, state: m.state, sort: m.sort}
	if m.following != "" {
		o.pin = m.snap.Node(m.following)
		if o.pin != nil {
			m.selected = m.following
			o.pinPath = ancestorsOf(m.snap, o.pin)
		}
	}
	return o
}

func (m *Model) topNodes() []*model.Node {
	if m.snap == nil {
		return nil
	}
	return m.snap.Sessions
}

// reflow lays the rows out whole and puts the cursor back on the selected
// node.
func (m *Model) reflow() {
	o := m.flatOptions()
	c := &m.flat
	f := newFlattener(o)
	old := m.rows
	rows := old[:0]
	tops := c.tops[:0]
	for _, s := range o.sort.sorted(m.topNodes()) {
		start := len(rows)
		rows = f.top(rows, s)
		tops = append(tops, flatBlock{top: s, start: start, end: len(rows)})
	}
	if len(rows) < len(old) {
		// The rows that were beyond the new end must not keep old nodes alive.
		clear(old[len(rows):])
	}
	clear(tops[len(tops):cap(tops)])
	m.rows, c.tops = rows, tops
	c.nested.clearLayouts()
	c.valid, c.query, c.state, c.sort = true, o.query, o.state, o.sort
	m.placeCursor()
}

// reflowUpdate lays the rows out after an update: the rows of a top-level
// node the snapshot shares with the last layout's (the same node: nothing
// beneath it changed, see model.Update) are kept, moved where others grew
// or shrank; only the renewed ones are laid out again. The rows are
// exactly those reflow would make.
func (m *Model) reflowUpdate() {
	o := m.flatOptions()
	c := &m.flat
	if !c.valid || o.state != c.state || o.sort != c.sort || !o.query.equal(c.query) {
		m.reflow()
		return
	}
	// Which top-level nodes the last layout had, and where. They are
	// matched in order, as long as the order holds: a renewed top-level node
	// takes the place of the one it renews. Only a change of order looks
	// the rest up. A kept node counted as renewed costs its layout, never a
	// wrong row: only the same node keeps its rows.
	tops := o.sort.sorted(m.topNodes())
	next := c.spareTops[:0]
	indexed := false // c.at holds the old blocks by top
	kept, j := 0, 0
	renewing := false // a fresh block has an old one of its id to copy rows from
	for i, s := range tops {
		b := flatBlock{top: s, fresh: true}
		old := -1
		switch {
		case j < len(c.tops) && c.tops[j].top == s:
			old = j
		case j < len(c.tops) && (i+1 == len(tops) && j+1 == len(c.tops) ||
			i+1 < len(tops) && j+1 < len(c.tops) && c.tops[j+1].top == tops[i+1]):
			b.renews = j + 1
			j++ // s renews the one in its place
		case j < len(c.tops) && c.tops[j].top.ID == s.ID:
			b.renews, renewing = j+1, true
			j++ // s renews the one of its id in its place, the next renewed too
		default:
			if !indexed {
				if c.at == nil {
					c.at = make(map[*model.Node]int, len(c.tops))
				}
				for k, b := range c.tops {
					c.at[b.top] = k
				}
				indexed = true
			}
			if k, ok := c.at[s]; ok {
				old = k
			}
		}
		if old >= 0 {
			b.fresh, b.from, b.end = false, c.tops[old].start, c.tops[old].end-c.tops[old].start
			kept++
			j = old + 1
		}
		next = append(next, b)
	}
	if indexed {
		clear(c.at)
	}
	if kept == 0 && !renewing {
		// A new forest: nothing to keep.
		clear(next)
		c.spareTops = next[:0]
		m.reflow()
		return
	}
	// Where each block goes: a renewed one's rows are counted first, so
	// that they are laid out where they go. A scratch array grown row by
	// row would cost several times the rows when a fleet's transition
	// renews most of them (SPEC §8 memory).
	f := newFlattener(o)
	inPlace := true // every kept block stays where it was
	end := 0
	for i := range next {
		b := &next[i]
		b.start = end
		if b.fresh {
			b.end = end
			if f.shown(b.top) {
				b.end += m.countBlock(f, *b)
			}
		} else {
			b.end += end // it held the block's length
			inPlace = inPlace && b.start == b.from
		}
		end = b.end
	}
	old := m.rows
	if inPlace && end <= cap(old) {
		// Only the renewed blocks are written, each over rows of what it
		// replaces: the kept ones are where they were.
		rows := old[:end]
		for _, b := range next {
			if b.fresh && b.end > b.start {
				m.layBlock(f, rows[:b.start], b, old, true) // within rows' array: cap(rows) >= end
			}
		}
		if end < len(old) {
			clear(old[end:])
		}
		m.rows = rows
		// A layout in place needs no second array: one kept for the next
		// layout that moves rows would be a second forest's worth of rows
		// held while the rows stay in place (a fleet churning: 200,000).
		c.spare = nil
	} else {
		rows := c.spare[:0]
		if cap(rows) < end {
			rows = make([]row, 0, end+end/8)
		}
		for _, b := range next {
			if b.fresh {
				if b.end > b.start {
					rows = m.layBlock(f, rows, b, old, false)
				}
				continue
			}
			start := len(rows)
			rows = append(rows, old[b.from:b.from+b.end-b.start]...)
			shiftParents(rows[start:], b.start-b.from)
		}
		// The old array is the next one's spare: it must not keep old nodes alive.
		clear(old)
		m.rows, c.spare = rows, old[:0]
	}
	clear(c.tops)
	c.tops, c.spareTops = next, c.tops[:0]
	m.placeCursor()
}

// shiftParents moves the parent indices of rows, moved shift rows further
// down, with them.
func shiftParents(rows []row, shift int) {
	if shift == 0 {
		return
	}
	for i := range rows {
		if rows[i].parent >= 0 {
			rows[i].parent += shift
		}
	}
}

// placeCursor puts the cursor back on the selected node after the rows
// were laid out, or at the same height when it is gone or hidden.
func (m *Model) placeCursor() {
	m.flat.indexed = false
	if i, ok := m.findRow(m.selected); ok {
		m.cursor = i
	} else {
		m.cursor = min(m.cursor, len(m.rows)-1)
		m.cursor = max(m.cursor, 0)
		m.selected = ""
		if len(m.rows) > 0 {
			m.selected = m.rows[m.cursor].node.ID
		}
	}
	if m.following != "" {
		m.centerCursor()
	} else {
		m.scrollToCursor()
	}
	m.frame.dirty = true
}

// findRow is the row of node id: where the cursor is when it did not move
// (the usual case), else found by a scan, which costs less than keeping an
// index of every row after each update.
func (m *Model) findRow(id string) (int, bool) {
	if id == "" {
		return 0, false
	}
	if m.cursor >= 0 && m.cursor < len(m.rows) && m.rows[m.cursor].node.ID == id {
		return m.cursor, true
	}
	for i := range m.rows {
		if m.rows[i].node.ID == id {
			return i, true
		}
	}
	return 0, false
}

// rowOf is the row of node id, from the index, which is built at its
// first use after the rows were laid out (only a few keys need it).
func (m *Model) rowOf(id string) (int, bool) {
	if !m.flat.indexed {
		if m.index == nil {
			m.index = make(map[string]int, len(m.rows))
		} else {
			clear(m.index)
		}
		for i, r := range m.rows {
			m.index[r.node.ID] = i
		}
		m.flat.indexed = true
	}
	i, ok := m.index[id]
	return i, ok
}
