package ui

import (
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/themes"
)

// paneScreens are the screens of the scrolling panes, the output tail, the
// answer and the filter prompt (SPEC §6), each a golden at 80×24, 120×40
// and in mono (what NO_COLOR selects).
var paneScreens = []struct {
	name  string
	opts  Options
	setup func(m *Model)
}{
	{name: "details_end", opts: Options{Journal: journalOf("the last journal entry")}, setup: func(m *Model) {
		m.moveTo(m.index["B/ask/3"])
		run(m, press(m, "enter"))
		press(m, "G")
	}},
	{name: "events_top", setup: func(m *Model) {
		var ts []model.Transition
		for i := range 60 {
			ts = append(ts, model.Transition{Time: clock12, ID: fmt.Sprintf("B/ask/%d", i), From: model.StateRunning, To: model.StateDead, Reason: "pid gone"})
		}
		m.Update(updateMsg{update: model.Update{Transitions: ts}})
		run(m, press(m, "enter"))
		press(m, "e")
		press(m, "g")
	}},
	{name: "events_subtree", setup: func(m *Model) {
		m.Update(updateMsg{update: model.Update{Transitions: []model.Transition{
			{Time: clock12, ID: "B/ask/3", From: model.StateRunning, To: model.StateDead, Reason: "in the subtree"},
			{Time: clock12, ID: "A/test/3", From: model.StateRunning, To: model.StateDead, Reason: "elsewhere"},
		}}})
		m.moveTo(m.index["B"])
		press(m, "E")
	}},
	{name: "copied", setup: func(m *Model) {
		m.moveTo(m.index["B/ask/3"])
		press(m, "y")
	}},
	{name: "filter_typing", setup: func(m *Model) {
		press(m, "/")
		m.Update(tea.PasteMsg{Content: "state:running te"})
	}},
	{name: "filter_error", setup: func(m *Model) {
		press(m, "/")
		m.Update(tea.PasteMsg{Content: "dead colour:red"})
	}},
}

func TestGoldenPanes(t *testing.T) {
	mono := themes.Set{Themes: themes.Builtins()}
	for i, th := range mono.Themes {
		if th.Name == themes.Mono {
			mono.Start = i
		}
	}
	sizes := []struct {
		name string
		w, h int
		set  themes.Set
	}{{"80x24", 80, 24, themes.Set{}}, {"120x40", 120, 40, themes.Set{}}, {"mono_80x24", 80, 24, mono}}
	for _, sc := range paneScreens {
		for _, sz := range sizes {
			t.Run(sc.name+"_"+sz.name, func(t *testing.T) {
				opts := sc.opts
				opts.Themes = sz.set
				m := newTestModel(t, sz.w, sz.h, opts)
				sc.setup(m)
				frame := m.View().Content
				checkFrame(t, frame, sz.w, sz.h)
				if sz.set.Themes != nil && carriesColour(frame) {
					t.Errorf("mono frame carries colour")
				}
				golden.RequireEqual(t, ansi.Strip(frame))
			})
		}
	}
}
