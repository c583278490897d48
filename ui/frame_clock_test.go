package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/themes"
)

// stepClock is a screen clock a test moves by hand.
type stepClock struct{ t time.Time }

func (c *stepClock) now() time.Time { return c.t }

// phasedSpecs are n running sessions whose beats lie at every phase of a
// second (137 ms apart), as the rows of a store written at random do: the
// age of one or another of them turns over at almost any instant.
func phasedSpecs(n int) []spec {
	specs := make([]spec, n)
	for i := range specs {
		specs[i] = spec{id: fmt.Sprintf("wf-%04d", i), role: "worker", state: model.StateRunning,
			pid: 4000 + i, beat: 2*time.Second + time.Duration(i)*137*time.Millisecond, reason: "running"}
	}
	return specs
}

// SPEC §6, §8: the screen's clock moves with the clock's seconds, not with
// every update: an update between two ticks that changes only rows off
// screen leaves the frame the very same string (the renderer then writes
// nothing), where taking the clock to the update's instant moved the age
// of every row on screen whose second turned over in between: with a store
// written at 50 rows a second, almost every update redrew the whole frame.
// A row on screen that changed is drawn again; an update in the next
// second moves the clock, as the tick would.
func TestAnUpdateMovesTheScreensClockOnlyByWholeSeconds(t *testing.T) {
	const sessions, offScreen, onScreen = 200, 150, 2
	base := clock12.Add(100 * time.Millisecond)
	tests := []struct {
		name    string
		at      time.Duration // the update's instant, after base
		changed int           // the session whose beat the update renews
		// want: the lines the frame changes in, by what they hold
		want []string
	}{
		{"a row off screen, later in the same second", 500 * time.Millisecond, offScreen, nil},
		{"a row on screen, later in the same second", 500 * time.Millisecond, onScreen, []string{"wf-0002"}},
		{"a row off screen, in the next second", 1200 * time.Millisecond, offScreen, []string{"12:00:01"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := &stepClock{t: base}
			specs := phasedSpecs(sessions)
			m := New(Options{Initial: buildSnapshot("/srv/store", clock12, specs), Now: clk.now, Tick: -1})
			m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
			before := strings.Split(m.View().Content, "\n")

			clk.t = base.Add(tc.at)
			specs[tc.changed].beat = -clk.t.Sub(clock12) // beat at the update's instant
			m.Update(updateMsg{update: model.Update{Snapshot: buildSnapshot("/srv/store", clock12, specs)}})
			after := strings.Split(m.View().Content, "\n")
			if len(after) != len(before) {
				t.Fatalf("the frame has %d lines, had %d", len(after), len(before))
			}
			var moved []string
			for i := range after {
				if after[i] != before[i] {
					moved = append(moved, after[i])
				}
			}
			if len(tc.want) == 0 && len(moved) > 0 {
				t.Errorf("the frame changed in %d lines, want none; the first:\n%s", len(moved), moved[0])
			}
			for _, w := range tc.want {
				found := false
				for _, l := range moved {
					found = found || strings.Contains(l, w)
				}
				if !found {
					t.Errorf("no changed line holds %q; changed: %d lines", w, len(moved))
				}
			}
			if len(tc.want) > 0 && tc.at < time.Second && len(moved) > len(tc.want)+1 {
				// The row, and the status line when it is the selected one.
				t.Errorf("the frame changed in %d lines, want the row's alone:\n%s", len(moved), strings.Join(moved, "\n"))
			}
		})
	}
}

// SPEC §8: the header's first line and the column head are kept while what
// they show holds: an update that moves neither (a store's row changed,
// the clock within its second) draws neither again, which layout did at
// every update; a second later the clock is drawn again, and a theme
// restyles the head as a dashboard drawn afresh does.
func TestAnUpdateDrawsTheTitleAndColumnHeadOnlyWhenTheyMove(t *testing.T) {
	clk := &stepClock{t: clock12.Add(100 * time.Millisecond)}
	specs := phasedSpecs(50)
	m := New(Options{Initial: buildSnapshot("/srv/store", clock12, specs), Now: clk.now, Tick: -1})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	m.View()
	clk.t = clk.t.Add(300 * time.Millisecond)
	specs[3].beat = 0
	next := buildSnapshot("/srv/store", clock12, specs)
	next.Roots = m.snap.Roots // a watcher's snapshots share their roots
	m.Update(updateMsg{update: model.Update{Snapshot: next}})
	if got := bytesOf(func() { m.renderTitle(m.width); m.renderColumnHead(m.width) }); got != 0 {
		t.Errorf("the title and the column head, unmoved, allocated %d bytes: drawn again", got)
	}
	clk.t = clk.t.Add(time.Second)
	m.Update(updateMsg{update: model.Update{Snapshot: next}})
	if title := ansi.Strip(m.View().Content); !strings.Contains(strings.SplitN(title, "\n", 2)[0], "12:00:01") {
		t.Errorf("a second later the title says %q, want 12:00:01", strings.SplitN(title, "\n", 2)[0])
	}
	press(m, "t")
	fresh := New(Options{Initial: next, Now: clk.now, Tick: -1, Themes: func() themes.Set { s := m.themes; s.Start = m.theme; return s }()})
	fresh.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	if got, want := m.renderColumnHead(160), fresh.renderColumnHead(160); got != want {
		t.Errorf("after a theme the column head is\n%q\nwant (drawn afresh)\n%q", got, want)
	}
}
