package glyph

import (
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/model"
)

// Every state, flag and action the model knows has a glyph of its own (but
// none and unknown_status), in the model's order, one cell wide and one
// rune long, so the text tree's columns and the dashboard's agree.
func TestEveryStateFlagAndActionHasItsOwnOneCellGlyph(t *testing.T) {
	type mark struct{ word, glyph string }
	var marks []mark
	var states []model.State
	for _, g := range States {
		states = append(states, g.State)
		marks = append(marks, mark{string(g.State), g.Glyph})
	}
	if !slices.Equal(states, model.States) {
		t.Errorf("the table's states %v, the model's %v", states, model.States)
	}
	var flags []model.Flag
	for _, g := range Flags {
		flags = append(flags, g.Flag)
		marks = append(marks, mark{string(g.Flag), g.Glyph})
	}
	if want := slices.DeleteFunc(slices.Clone(model.Flags), func(f model.Flag) bool { return f == model.FlagUnknownStatus }); !slices.Equal(flags, want) {
		t.Errorf("the table's flags %v, the model's %v", flags, want)
	}
	var actions []model.Action
	for _, g := range Actions {
		actions = append(actions, g.Action)
		marks = append(marks, mark{string(g.Action), g.Glyph})
	}
	if want := slices.DeleteFunc(slices.Clone(model.Actions), func(a model.Action) bool { return a == model.ActionNone }); !slices.Equal(actions, want) {
		t.Errorf("the table's actions %v, the model's %v", actions, want)
	}
	seen := map[string]string{UnknownState: "an unknown state", Other: "the others"}
	for _, m := range marks {
		if w, n := ansi.StringWidth(m.glyph), utf8.RuneCountInString(m.glyph); w != 1 || n != 1 {
			t.Errorf("%s: glyph %q is %d cells, %d runes: want one of each", m.word, m.glyph, w, n)
		}
		if other, dup := seen[m.glyph]; dup {
			t.Errorf("%s and %s share the glyph %q", m.word, other, m.glyph)
		}
		seen[m.glyph] = m.word
	}
}

func TestLookupsAnswerFromTheTable(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{State(model.StateDead), "✖"},
		{State("zombie"), UnknownState},
		{Flag(model.FlagClockSkew), "±"},
		{Flag(model.FlagUnknownStatus), Other},
		{Action(model.ActionKill), "⊘"},
		{Action(model.ActionNone), Other},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
