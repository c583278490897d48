package ui

import (
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// TestShortHelpFollowsModeWidthAndTheme: the keys' line is made once and
// kept, yet is always the line its mode, width and theme make.
func TestShortHelpFollowsModeWidthAndTheme(t *testing.T) {
	m := newTestModel(t, 120, 30, Options{})
	fresh := func() string {
		bindings := m.keys.ShortHelp()
		if m.mode == modeDetail {
			bindings = detailKeys{m.keys}.ShortHelp()
		}
		return m.shortHelpEndingWith(bindings, []key.Binding{m.keys.Help, m.keys.Quit}, m.width)
	}
	steps := []struct {
		name   string
		change func()
	}{
		{"start", func() {}},
		{"narrower", func() { m.Update(tea.WindowSizeMsg{Width: 50, Height: 30}) }},
		{"details", func() { press(m, "enter") }},
		{"wider details", func() { m.Update(tea.WindowSizeMsg{Width: 100, Height: 30}) }},
		{"tree", func() { press(m, "esc") }},
		{"theme", func() { press(m, "t") }},
	}
	for _, st := range steps {
		st.change()
		if got, want := m.renderShortHelp(m.width), fresh(); got != want {
			t.Errorf("%s: short help %q, made afresh %q", st.name, got, want)
		}
	}
}
