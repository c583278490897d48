package ui

// The tree's keys, as a table: each binding and what it does. A key that
// is none of them may be an action's (actionKey).

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

// treeKeyAction is one row of the tree's key table.
type treeKeyAction struct {
	binding key.Binding
	run     func(*Model) tea.Cmd
}

// treeKey handles a key on the tree: the event pane scrolls when it has
// the focus, else the first binding of the table that matches runs, else
// the key may open an action's dialog.
func (m *Model) treeKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.focus == focusEvents && m.eventsOpen && m.scrollKey(&m.eventsVP, msg) {
		return nil
	}
	for _, a := range m.treeKeyTable() {
		if key.Matches(msg, a.binding) {
			return a.run(m)
		}
	}
	return m.actionKey(msg)
}

// treeKeyTable is every key of the tree but the actions', in the order
// they are matched.
func (m *Model) treeKeyTable() []treeKeyAction {
	k := &m.keys
	return []treeKeyAction{
		{k.Up, func(m *Model) tea.Cmd { return m.goTo(m.cursor - 1) }},
		{k.Down, func(m *Model) tea.Cmd { return m.goTo(m.cursor + 1) }},
		{k.PageUp, func(m *Model) tea.Cmd { return m.goTo(m.cursor - m.treeHeight()) }},
		{k.PageDown, func(m *Model) tea.Cmd { return m.goTo(m.cursor + m.treeHeight()) }},
		{k.Top, func(m *Model) tea.Cmd { return m.goTo(0) }},
		{k.Bottom, func(m *Model) tea.Cmd { return m.goTo(len(m.rows) - 1) }},
		{k.Collapse, (*Model).collapseKey},
		{k.Expand, (*Model).expand},
		{k.Toggle, (*Model).toggle},
		{k.CollapseAll, (*Model).collapseAll},
		{k.ExpandAll, (*Model).expandAll},
		{k.NextAction, func(m *Model) tea.Cmd { m.jumpToAction(1); return nil }},
		{k.PrevAction, func(m *Model) tea.Cmd { m.jumpToAction(-1); return nil }},
		{k.Sort, (*Model).cycleSort},
		{k.Mark, (*Model).mark},
		{k.Filter, (*Model).openFilter},
		{k.StateFilter, (*Model).cycleStateFilter},
		{k.Details, (*Model).openDetails},
		{k.Events, func(m *Model) tea.Cmd { m.eventsKeyPressed(); return nil }},
		{k.EventScope, func(m *Model) tea.Cmd { m.eventScopeKeyPressed(); return nil }},
		{k.Focus, func(m *Model) tea.Cmd { m.focusKeyPressed(); return nil }},
		{k.Copy, (*Model).copyID},
		{k.Output, (*Model).openPager},
		{k.Answer, (*Model).answer},
		{k.Pause, (*Model).togglePause},
		{k.Follow, (*Model).toggleFollow},
		{k.Theme, (*Model).cycleTheme},
	}
}

// goTo moves the cursor to row i, the operator's own move: following stops.
func (m *Model) goTo(i int) tea.Cmd {
	m.following = ""
	m.moveTo(i)
	return nil
}

func (m *Model) collapseKey() tea.Cmd {
	m.collapse()
	return nil
}

func (m *Model) expand() tea.Cmd {
	if n := m.selectedNode(); n != nil && m.collapsed[n.ID] {
		delete(m.collapsed, n.ID)
		m.reflow()
	}
	return nil
}

func (m *Model) toggle() tea.Cmd {
	if n := m.selectedNode(); n != nil && len(n.Children) > 0 {
		if m.collapsed[n.ID] {
			delete(m.collapsed, n.ID)
		} else {
			m.collapsed[n.ID] = true
		}
		m.reflow()
	}
	return nil
}

// collapseAll folds every node with children; the selection moves up to
// its session, which stays visible.
func (m *Model) collapseAll() tea.Cmd {
	if m.snap != nil {
		for _, s := range m.snap.Sessions {
			s.Walk(func(n *model.Node) {
				if len(n.Children) > 0 {
					m.collapsed[n.ID] = true
				}
			})
		}
		if n := m.selectedNode(); n != nil {
			if up := ancestorsOf(m.snap, n); len(up) > 0 {
				n = up[len(up)-1]
			}
			m.selected = n.ID
		}
	}
	m.reflow()
	return nil
}

func (m *Model) expandAll() tea.Cmd {
	clear(m.collapsed)
	m.reflow()
	return nil
}

func (m *Model) cycleSort() tea.Cmd {
	m.sort = (m.sort + 1) % sortCount
	m.reflow()
	m.setStatus("sort: "+m.sort.String(), false)
	return nil
}

// mark marks or unmarks the selected node and moves to the next row.
func (m *Model) mark() tea.Cmd {
	if n := m.selectedNode(); n != nil {
		if m.marked[n.ID] {
			delete(m.marked, n.ID)
		} else {
			m.marked[n.ID] = true
		}
		m.goTo(m.cursor + 1)
	}
	return nil
}

func (m *Model) cycleStateFilter() tea.Cmd {
	m.state = (m.state + 1) % filterCount
	m.reflow()
	return nil
}

// openDetails shows the selected node's details and reads what they show.
func (m *Model) openDetails() tea.Cmd {
	n := m.selectedNode()
	if n == nil {
		return nil
	}
	m.mode = modeDetail
	m.detailVP.GotoTop()
	m.detailFollow = false
	return tea.Batch(m.loadJournal(n), m.loadOutput(n), m.loadFiles(n))
}

func (m *Model) toggleFollow() tea.Cmd {
	if m.following != "" {
		m.following = ""
		m.setStatus("follow off", false)
	} else if n := m.selectedNode(); n != nil {
		m.following = n.ID
		m.setStatus("following "+termtext.Line(n.ID), false)
		m.reflow()
	}
	return nil
}

func (m *Model) cycleTheme() tea.Cmd {
	m.theme = (m.theme + 1) % len(m.themes.Themes)
	m.applyTheme()
	m.setStatus("theme "+m.themes.Themes[m.theme].Name, false)
	return nil
}
