package ui

import (
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/internal/glyph"
	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §6 Keys: `?` shows the legend beside the keys: every glyph the
// screen draws with its word, read from where the glyphs are defined; a
// help longer than the screen scrolls to it.
func TestHelpShowsTheLegend(t *testing.T) {
	var wants []string
	for _, s := range model.States {
		wants = append(wants, glyph.State(s)+" "+string(s))
	}
	for _, f := range model.Flags {
		wants = append(wants, glyph.Flag(f)+" "+string(f))
	}
	for _, a := range model.Actions {
		if a != model.ActionNone {
			wants = append(wants, glyph.Action(a)+" "+string(a))
		}
	}
	wants = append(wants, "▾ expanded", "▸ collapsed", "* marked", hostGlyph+" host")
	for _, sz := range operatorSizes {
		t.Run(sz.name, func(t *testing.T) {
			m := newTestModel(t, sz.w, sz.h, Options{})
			press(m, "?")
			seen := stripped(m)
			checkFrame(t, seen, sz.w, sz.h)
			for range 40 {
				press(m, "pgdown")
				frame := stripped(m)
				checkFrame(t, frame, sz.w, sz.h)
				seen += "\n" + frame
			}
			for _, w := range wants {
				if !strings.Contains(seen, w) {
					t.Errorf("the help never shows %q", w)
				}
			}
			if !strings.Contains(seen, "q   quit") {
				t.Errorf("the help lost its keys")
			}
		})
	}
}
