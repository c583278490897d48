package ui

import (
	tea "charm.land/bubbletea/v2"
)

// copyID is `y`: the selected node's id goes to the clipboard through the
// terminal (OSC 52). Whether the terminal honours it cannot be known (tmux
// needs set-clipboard on), so the status line says what was sent.
func (m *Model) copyID() tea.Cmd {
	n := m.selectedNode()
	if n == nil {
		return nil
	}
	m.setStatus("copied "+n.ID+" (OSC 52; a terminal may not allow it)", false)
	return tea.SetClipboard(n.ID)
}
