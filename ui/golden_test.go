package ui

import (
	"context"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/themes"
)

// Goldens live in testdata/<TestName>/<case>.golden; `go test -update`
// rewrites them (the flag belongs to x/exp/golden).
// newTestModel is the worked example at a fixed clock and size.
func newTestModel(t testing.TB, w, h int, opts Options) *Model {
	t.Helper()
	if opts.Initial == nil {
		opts.Initial = exampleSnapshot()
	}
	opts.Now = fixedNow
	opts.Tick = -1
	m := New(opts)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// run delivers the message a command produces, the way the program would,
// and the messages of the commands that follow from it.
func run(m *Model, cmd tea.Cmd) {
	for depth := 0; cmd != nil && depth < 8; depth++ {
		msg := cmd()
		if msg == nil {
			return
		}
		if batch, ok := msg.(tea.BatchMsg); ok {
			// A batch (the dry runs of marked nodes) delivers each of its messages.
			for _, c := range batch {
				run(m, c)
			}
			return
		}
		_, cmd = m.Update(msg)
	}
}

func stripped(m *Model) string { return ansi.Strip(m.View().Content) }

func journalOf(lines ...string) JournalLoader {
	return func(_ context.Context, n *model.Node) ([]string, error) {
		return append([]string{`{"action":"kill","node":"` + n.ID + `"}`}, lines...), nil
	}
}

// checkFrame asserts the SPEC §6 shape: never more lines than the screen,
// never a line wider than it (rows are truncated, never wrapped).
func checkFrame(t *testing.T, frame string, w, h int) {
	t.Helper()
	lines := strings.Split(frame, "\n")
	if len(lines) > h {
		t.Errorf("frame has %d lines, screen has %d", len(lines), h)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got > w {
			t.Errorf("line %d is %d cells wide, screen is %d: %q", i, got, w, ansi.Strip(l))
		}
	}
}

// SPEC §6: golden views of the main screen, details, help and a
// confirmation dialog at 80×24 and 120×40.
func TestGoldenViews(t *testing.T) {
	sizes := []struct {
		name string
		w, h int
	}{{"80x24", 80, 24}, {"120x40", 120, 40}}
	screens := []struct {
		name  string
		setup func(m *Model)
	}{
		{name: "main", setup: func(m *Model) {}},
		{name: "details", setup: func(m *Model) {
			m.moveTo(m.rowIndex("B/ask/3"))
			run(m, press(m, "enter"))
		}},
		{name: "help", setup: func(m *Model) { press(m, "?") }},
		{name: "confirm", setup: func(m *Model) {
			m.moveTo(m.rowIndex("A/test/3"))
			run(m, press(m, "x"))
		}},
		{name: "events", setup: func(m *Model) {
			m.Update(updateMsg{update: model.Update{Snapshot: exampleSnapshot(), Transitions: []model.Transition{
				{Time: clock12, ID: "B", From: model.StateRunning, To: model.StateDead, Reason: "pid 4201 gone"},
				{Time: clock12, ID: "A/test/3", From: model.StateRunning, FromFlags: []model.Flag{model.FlagStalled}, To: model.StateRunning, ToFlags: []model.Flag{model.FlagStalled, model.FlagKillCandidate}, Reason: "alive but not beating for 6m"},
			}}})
			press(m, "e")
		}},
	}
	for _, sz := range sizes {
		for _, sc := range screens {
			t.Run(sc.name+"_"+sz.name, func(t *testing.T) {
				m := newTestModel(t, sz.w, sz.h, Options{Runner: &fakeRunner{}, Journal: journalOf()})
				sc.setup(m)
				frame := m.View().Content
				checkFrame(t, frame, sz.w, sz.h)
				golden.RequireEqual(t, ansi.Strip(frame))
			})
		}
	}
}

// SPEC §6 Themes: every theme renders the same layout, and mono reads from
// glyph and word alone: no colour at all.
func TestGoldenThemes(t *testing.T) {
	for _, th := range themes.Builtins() {
		t.Run(th.Name, func(t *testing.T) {
			set := themes.Set{Themes: themes.Builtins()}
			for i, b := range set.Themes {
				if b.Name == th.Name {
					set.Start = i
				}
			}
			m := newTestModel(t, 80, 24, Options{Themes: set})
			frame := m.View().Content
			checkFrame(t, frame, 80, 24)
			golden.RequireEqual(t, ansi.Strip(frame))
			hasColour := carriesColour(frame)
			if th.Name == themes.Mono && hasColour {
				t.Errorf("mono frame carries colour: %q", frame)
			}
			if th.Name != themes.Mono && !hasColour {
				t.Errorf("%s frame carries no colour", th.Name)
			}
			for _, word := range []string{"● 5 running", "✖ 3 dead", "✔ 1 finished", "○ 1 missing", "kill_candidate"} {
				if !strings.Contains(ansi.Strip(frame), word) {
					t.Errorf("%s: %q not readable in the frame", th.Name, word)
				}
			}
		})
	}
}

var sgr = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// carriesColour reports whether any SGR sequence in s sets a foreground or
// background colour (30–49, 90–107); bold, faint and reverse do not count.
func carriesColour(s string) bool {
	for _, m := range sgr.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			n := 0
			for _, d := range p {
				n = n*10 + int(d-'0')
			}
			if (n >= 30 && n <= 49) || (n >= 90 && n <= 107) {
				return true
			}
		}
	}
	return false
}

// The demo's fleet as its fixture has it (demoSpecs, held to the demo by
// TestReadmeScreenshotIsTheDemo) at the README's 100×28, folded as the
// README's frame is (the crashed session, the coding sub-lead, jobs 101 and
// 103, each to its roll-up). The README's screenshot itself is drawn from
// the live demo (TestReadmeScreenshotIsTheLiveDemo at the module's root).
func TestGoldenDemoFixture(t *testing.T) {
	m := newTestModel(t, 100, 28, Options{Initial: demoSnapshot()})
	for _, id := range []string{"20261122-090000/coding/20261122-090105", "20261122-091500", "job-101--refactor-parser", "job-103--upgrade-deps"} {
		m.moveTo(m.rowIndex(id))
		press(m, "space")
	}
	m.moveTo(0)
	frame := m.View().Content
	checkFrame(t, frame, 100, 28)
	golden.RequireEqual(t, ansi.Strip(frame))
}
