package ui

// The shape of the next frame, worked out in Update so that View only draws:
// the rows and the cursor on them, scroll offsets, pane heights, columns.

import "github.com/dispatchtop/dispatchtop/model"

// layout works out the shape of the next frame from the model: the
// header's lines (its height depends on what it holds), the detail pane's
// lines, and the scroll offsets that keep the cursor and the details on
// screen within them. Update runs it after each change, so View only draws.
func (m *Model) layout() {
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		return
	}
	m.frame.header = m.renderHeader(w)
	m.frame.headerH = len(m.frame.header)
	m.scrollToCursor()
	m.frame.detail = nil
	if m.mode == modeDetail {
		m.frame.detail = m.detailView(w)
		m.layoutDetail(w, h-m.frame.headerH-footerLines)
	}
	if m.eventsOpen && m.mode == modeTree {
		m.layoutEvents(w, m.eventPaneHeight())
	}
	if m.dialog != nil {
		m.layoutDialog(w, h-m.frame.headerH-footerLines)
	}
	if m.answerBox != nil {
		m.layoutAnswer(w, h-m.frame.headerH-footerLines)
	}
}

func (m *Model) columns(w int) columns {
	return layoutColumns(w)
}

// columns are the widths of the tree's columns at one screen width (0: the
// column is dropped); the reason takes what is left. They depend on the
// width alone, never on the rows, so a filter or a new node does not move
// them. Below 110 columns they are dropped in the order of SPEC §6: RT and
// CFA, then PID (below 100), BEAT (below 72), REASON (below 64) and BELOW
// (below 44); NODE, STATE and ACTION stay at any width.
type columns struct {
	name, state, action, below, beat, pid, cfa, retries int
	reason                                              bool
}

// markWidth is the leading cell that shows a `v` mark (`*`).
const markWidth = 1

// reasonMin is the least a reason column is worth showing at.
const reasonMin = 10

// From 80 columns on, NODE and STATE have what a tree's names and a state
// with a flag or two need (nameWide, stateWide); the reason takes what is
// left, up to reasonWant, enough for a typical one ("heartbeat 12m old,
// pid 4242 gone"). What is left past that is shared in thirds: NODE (for
// deeper trees, up to nameMax), STATE (for more flags, up to stateMax) and
// the reason.
const (
	nameWide, stateWide = 20, 18
	nameMax, stateMax   = 40, 30
	reasonWant          = 40
)

func layoutColumns(width int) columns {
	c := columns{action: 7, below: 9, beat: 6, pid: 7, cfa: 9, retries: 2, reason: true}
	if width < 110 {
		c.cfa, c.retries = 0, 0
	}
	if width < 100 {
		c.pid = 0
	}
	if width < 72 {
		c.beat = 0
	}
	if width < 64 {
		c.reason = false
	}
	if width < 44 {
		c.below = 0
	}
	if width >= 80 {
		c.name, c.state = nameWide, stateWide
		if surplus := c.reasonWidth(width) - reasonWant; surplus > 0 {
			c.name = min(nameMax, nameWide+surplus/3)
			c.state = min(stateMax, stateWide+surplus/3)
		}
		return c
	}
	// Below 80, NODE and STATE share what the other columns leave.
	other := markWidth + c.action + 1
	for _, col := range []int{c.below, c.beat} {
		if col > 0 {
			other += col + 1
		}
	}
	if c.reason {
		other += reasonMin + 1
	}
	avail := max(8, width-other-1)
	c.name = min(nameWide, max(4, avail*55/100))
	c.state = min(stateWide, max(4, avail-c.name))
	return c
}

// reasonWidth is what the reason column gets at width w.
func (c columns) reasonWidth(w int) int {
	if !c.reason {
		return 0
	}
	return max(0, w-c.fixed()-1)
}

// fixed is the width of every column but the reason, with separators.
func (c columns) fixed() int {
	used := markWidth + c.name
	for _, col := range []int{c.state, c.action, c.below, c.beat, c.pid, c.cfa, c.retries} {
		if col > 0 {
			used += 1 + col
		}
	}
	return used
}

// selectedNode is the node under the cursor, or nil.
func (m *Model) selectedNode() *model.Node {
	if m.cursor < 0 || m.cursor >= len(m.rows) {
		return nil
	}
	return m.rows[m.cursor].node
}

func (m *Model) moveTo(i int) {
	if len(m.rows) == 0 {
		return
	}
	m.cursor = max(0, min(i, len(m.rows)-1))
	m.selected = m.rows[m.cursor].node.ID
	m.scrollToCursor()
	// The operator moved on: the status line shows the selection again (an
	// outcome stays in the event pane).
	m.status, m.bad = "", false
}

// treeHeight is how many tree rows fit on screen.
func (m *Model) treeHeight() int {
	h := m.height - m.frame.headerH - footerLines
	if m.eventsOpen && m.mode == modeTree {
		h -= m.eventPaneHeight()
	}
	return max(h, 1)
}

func (m *Model) eventPaneHeight() int {
	body := m.height - m.frame.headerH - footerLines
	return max(3, body/3)
}

func (m *Model) scrollToCursor() {
	h := m.treeHeight()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+h {
		m.offset = m.cursor - h + 1
	}
	m.offset = max(0, min(m.offset, len(m.rows)-h))
}

func (m *Model) centerCursor() {
	h := m.treeHeight()
	m.offset = max(0, min(m.cursor-h/2, len(m.rows)-h))
}
