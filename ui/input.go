package ui

// What a key press or a mouse event does: the dialog and the `/` prompt take
// keys first, then the tree's and the detail pane's keys, the wheel and clicks.

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dispatchtop/dispatchtop/model"
)

// key handles a key press; the dialog, the answer's editor and the filter
// prompt take keys first, then the keys of every mode (globalKey), then
// the mode's own: the `?` screen scrolls, the details and the tree each
// have a table of their keys.
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	if msg.String() == "ctrl+c" {
		return tea.Quit
	}
	if m.dialog != nil {
		cmd, pass := m.dialogKey(msg)
		if !pass {
			return cmd
		}
	}
	if m.answerBox != nil {
		return m.answerKey(msg)
	}
	if m.prompt.typing {
		return m.filterKey(msg)
	}
	if cmd, ok := m.globalKey(msg); ok {
		return cmd
	}
	switch m.mode {
	case modeHelp:
		m.scrollHelp(msg)
		return nil
	case modeDetail:
		return m.detailKey(msg)
	}
	return m.treeKey(msg)
}

// globalKey handles the keys every mode has: quit, help and back. It
// reports whether msg was one of them.
func (m *Model) globalKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit, true
	case key.Matches(msg, k.Help):
		if m.mode == modeHelp {
			m.mode = modeTree
		} else {
			m.mode, m.helpTop = modeHelp, 0
		}
		return nil, true
	case key.Matches(msg, k.Back):
		m.back()
		return nil, true
	}
	return nil, false
}

// back is esc: it closes the event pane it has the focus of, leaves the
// details or the help, or clears the filters, the first that applies.
func (m *Model) back() {
	switch {
	case m.mode == modeTree && m.focus == focusEvents:
		m.eventsOpen, m.focus = false, focusTree
		m.scrollToCursor()
	case m.mode != modeTree:
		m.mode = modeTree
	case m.textFilter != "" || m.state != filterAll:
		m.state = filterAll
		m.setFilter("")
	}
}

func (m *Model) detailKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Details):
		m.mode = modeTree
	case m.scrollKey(&m.detailVP, msg):
		m.detailFollow = m.detailVP.AtBottom() &&
			(key.Matches(msg, k.Bottom) || key.Matches(msg, k.Down) || key.Matches(msg, k.PageDown))
	case key.Matches(msg, k.Events):
		m.eventsKeyPressed()
		return nil
	case key.Matches(msg, k.Copy):
		return m.copyID()
	case key.Matches(msg, k.Output):
		return m.openPager()
	case key.Matches(msg, k.Answer):
		return m.answer()
	}
	return m.actionKey(msg)
}

// actionKey opens the confirmation dialog of an action key, on the tree
// and in the detail pane alike; other keys do nothing.
func (m *Model) actionKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Kill):
		return m.openDialog(model.ActionKill, false)
	case key.Matches(msg, k.KillTree):
		return m.openDialog(model.ActionKill, true)
	case key.Matches(msg, k.Resume):
		return m.openDialog(model.ActionResume, false)
	case key.Matches(msg, k.Compact):
		return m.openDialog(model.ActionCompact, false)
	case key.Matches(msg, k.Merge):
		return m.openDialog(model.ActionMerge, false)
	}
	return nil
}

// collapse folds the selected node, or moves to its parent when it is a
// leaf or already folded (as file trees do).
func (m *Model) collapse() {
	n := m.selectedNode()
	if n == nil {
		return
	}
	if len(n.Children) > 0 && !m.collapsed[n.ID] {
		m.collapsed[n.ID] = true
		m.reflow()
		return
	}
	if p := m.snap.ParentOf(n); p != nil {
		if i, ok := m.rowOf(p.ID); ok {
			m.following = ""
			m.moveTo(i)
		}
	}
}

// jumpToAction moves to the next (dir 1) or previous (dir -1) node that
// needs action, in the order the tree shows, wrapping around; collapsed
// ancestors of the node it lands on are expanded. The state and text
// filters still apply: what they hide is not jumped to.
func (m *Model) jumpToAction(dir int) {
	if m.snap == nil {
		return
	}
	all := flatten(m.snap.Sessions, flatOptions{query: m.query, state: m.state, sort: m.sort})
	at := -1
	for i, r := range all {
		if r.node.ID == m.selected {
			at = i
			break
		}
	}
	if at < 0 && dir < 0 {
		at = 0
	}
	for step := 1; step <= len(all); step++ {
		i := ((at+dir*step)%len(all) + len(all)) % len(all)
		n := all[i].node
		if !operatorActs(n) || !all[i].match {
			continue
		}
		for _, p := range ancestorsOf(m.snap, n) {
			delete(m.collapsed, p.ID)
		}
		m.following = ""
		m.selected = n.ID
		m.reflow()
		at, _ = m.rowOf(n.ID)
		m.moveTo(at)
		return
	}
	m.setStatus("no node to act on (kill, resume, answer, compact, merge, surface)", false)
}

func (m *Model) click(ms tea.Mouse) {
	if ms.Button != tea.MouseLeft || m.dialog != nil || m.mode != modeTree {
		return
	}
	line := ms.Y - m.frame.headerH
	if line < 0 || line >= m.treeHeight() {
		return
	}
	if i := m.offset + line; i < len(m.rows) {
		m.following = ""
		m.moveTo(i)
		m.frame.dirty = true
	}
}

func (m *Model) wheel(ms tea.Mouse) {
	step := 0
	switch ms.Button {
	case tea.MouseWheelUp:
		step = -wheelStep
	case tea.MouseWheelDown:
		step = wheelStep
	default:
		return
	}
	if m.mode == modeDetail {
		m.detailVP, _ = m.detailVP.Update(tea.MouseWheelMsg(ms))
		m.detailFollow = m.detailVP.AtBottom() && ms.Button == tea.MouseWheelDown
		m.frame.dirty = true
		return
	}
	h := m.treeHeight()
	if m.eventsOpen && m.mode == modeTree && ms.Y >= m.frame.headerH+h {
		m.eventsVP, _ = m.eventsVP.Update(tea.MouseWheelMsg(ms))
		m.frame.dirty = true
		return
	}
	m.offset = max(0, min(m.offset+step, len(m.rows)-h))
	// The cursor stays on screen, so a key after scrolling acts on what is seen.
	if m.cursor < m.offset {
		m.moveTo(m.offset)
	} else if m.cursor >= m.offset+h {
		m.moveTo(m.offset + h - 1)
	}
	m.frame.dirty = true
}

// scrollHelp scrolls the `?` screen: up/down a line, pgup/pgdn a page, g/G to
// the ends; it stops where its last line is on screen.
func (m *Model) scrollHelp(msg tea.KeyPressMsg) {
	k := m.keys
	page := max(1, m.height-m.frame.headerH-footerLines)
	last := max(0, len(m.helpLines(m.width))-page)
	switch {
	case key.Matches(msg, k.Up):
		m.helpTop--
	case key.Matches(msg, k.Down):
		m.helpTop++
	case key.Matches(msg, k.PageUp):
		m.helpTop -= page - 1
	case key.Matches(msg, k.PageDown):
		m.helpTop += page - 1
	case key.Matches(msg, k.Top):
		m.helpTop = 0
	case key.Matches(msg, k.Bottom):
		m.helpTop = last
	default:
		return
	}
	m.helpTop = max(0, min(m.helpTop, last))
	m.frame.dirty = true
}
