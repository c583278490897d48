package ui

import (
	"context"
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
		m.moveTo(m.rowIndex("B/ask/3"))
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
		m.moveTo(m.rowIndex("B"))
		press(m, "E")
	}},
	{name: "output_tail", opts: Options{Output: fixedOutput}, setup: func(m *Model) {
		m.moveTo(m.rowIndex("A/test/3"))
		run(m, press(m, "enter"))
		press(m, "G")
	}},
	{name: "question", opts: Options{Initial: longQuestion()}, setup: func(m *Model) {
		m.moveTo(m.rowIndex("B/ask/3"))
		run(m, press(m, "enter"))
	}},
	{name: "answer_elsewhere", opts: Options{Initial: middleQuestion()}, setup: func(m *Model) {
		m.moveTo(m.rowIndex("B/ask/3"))
		press(m, "a")
	}},
	{name: "copied", setup: func(m *Model) {
		m.moveTo(m.rowIndex("B/ask/3"))
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

// fixedOutput is an output reader that reads nothing: the tail of a wrap log.
func fixedOutput(_ context.Context, n *model.Node) (OutputTail, error) {
	return OutputTail{Path: n.InfraDir + "/.wrap.log", Size: 70000, Cut: true,
		Lines: []string{"running suite 1/3", "ok   pkg/a  0.2s", "FAIL pkg/b  1.4s", "--- FAIL: TestB (1.40s)"}}, nil
}

func longQuestion() *model.Snapshot {
	s := exampleSnapshot()
	s.Node("B/ask/3").Blocked.Question = "Ship the release to production now?\n\nThe canary ran for an hour: error rate 0.1 %, latency p99 240 ms, both under the budget the plan set; the rollback is ready."
	return s
}

func middleQuestion() *model.Snapshot {
	s := exampleSnapshot()
	s.Node("B/ask/3").Source = "middle"
	return s
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
