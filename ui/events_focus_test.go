package ui

import (
	"strings"
	"testing"
)

// keyLine is the stripped key line of m's frame.
func keyLine(m *Model) string {
	lines := strings.Split(stripped(m), "\n")
	return lines[len(lines)-1]
}

// SPEC §6 Event pane: esc closes the pane it has the focus of; `e` is all
// the events, whatever `E` scoped before; the key line says the pane's own
// keys while it has the focus.
func TestEventPaneFocus(t *testing.T) {
	t.Run("esc closes the focused pane", func(t *testing.T) {
		m := newTestModel(t, 80, 24, Options{})
		press(m, "e")
		press(m, "esc")
		if m.eventsOpen || m.focus != focusTree {
			t.Errorf("after e, esc: pane open %v, focus %v; want closed, the tree's", m.eventsOpen, m.focus)
		}
	})
	t.Run("e after E shows every event", func(t *testing.T) {
		m := newTestModel(t, 80, 24, Options{})
		m.moveTo(m.rowIndex("B"))
		press(m, "E")
		press(m, "e")
		if m.eventScope != "" || !m.eventsOpen || m.focus != focusEvents {
			t.Errorf("after E, e: scope %q, open %v, focus %v; want all events, open, focused", m.eventScope, m.eventsOpen, m.focus)
		}
		if strings.Contains(stripped(m), "events of B") {
			t.Errorf("the pane's title still names B's subtree:\n%s", stripped(m))
		}
	})
	t.Run("the key line is the pane's while it has the focus", func(t *testing.T) {
		m := newTestModel(t, 80, 24, Options{})
		tree := keyLine(m)
		press(m, "e")
		pane := keyLine(m)
		if pane == tree || !strings.Contains(pane, "esc close") || !strings.HasSuffix(pane, "? help · q quit") {
			t.Errorf("key line with the pane focused %q (the tree's: %q)", pane, tree)
		}
		press(m, "tab")
		if m.focus != focusTree || !m.eventsOpen || keyLine(m) != tree {
			t.Errorf("tab: focus %v, open %v, key line %q; want the tree's focus and line, the pane open", m.focus, m.eventsOpen, keyLine(m))
		}
	})
}
