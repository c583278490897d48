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
