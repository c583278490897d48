package ui

import (
	"bytes"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/themes"
)

// on16 is what a 16-colour terminal (TERM=xterm) gets of s: its colours
// brought down as the program's renderer brings them down.
func on16(s string) string {
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.ANSI}
	w.WriteString(s)
	return b.String()
}

// SPEC §6 Themes: on a 16-colour terminal every theme keeps dead, the
// warning flags (stalled, kill_candidate), the blocked flag and the
// actions apart; an action cell of `-` carries no colour at all.
func TestThemesDegradeToDistinctColours(t *testing.T) {
	for _, th := range themes.Builtins() {
		if th.Name == themes.Mono {
			continue
		}
		t.Run(th.Name, func(t *testing.T) {
			set := themes.Set{Themes: themes.Builtins()}
			for i, b := range set.Themes {
				if b.Name == th.Name {
					set.Start = i
				}
			}
			m := newTestModel(t, 120, 40, Options{Initial: demoSnapshot(), Themes: set})
			m.Update(tea.ColorProfileMsg{Profile: colorprofile.ANSI})
			st := m.styles
			parts := map[string]lipgloss.Style{
				"dead": st.State[model.StateDead], "warning flags": st.Warning,
				"blocked": st.Blocked, "action": st.Action, "running": st.State[model.StateRunning],
			}
			seen := map[string]string{}
			for name, style := range parts {
				sgr := on16(style.Render("x"))
				if !carriesColour(sgr) {
					t.Errorf("%s has no colour on 16 colours: %q", name, sgr)
				}
				open := sgr[:strings.Index(sgr, "x")]
				if other, ok := seen[open]; ok {
					t.Errorf("%s and %s are the same colour on 16 colours (%q)", name, other, open)
				}
				seen[open] = name
			}
			// A row with nothing to do: its `-` is plain.
			m.moveTo(m.rowIndex("20261122-090000"))
			found := false
			for _, l := range strings.Split(on16(m.View().Content), "\n") {
				if !strings.Contains(l, "20261122-080000") {
					continue
				}
				found = true
				rest := l[strings.Index(l, "legacy")+len("legacy"):]
				before := rest[:strings.Index(rest, "-")]
				if seqs := sgr.FindAllString(before, -1); len(seqs) > 0 && carriesColour(seqs[len(seqs)-1]) {
					t.Errorf("the `-` action is coloured (%q before it)", seqs[len(seqs)-1])
				}
			}
			if !found {
				t.Fatal("no row of 20261122-080000")
			}
		})
	}
}
