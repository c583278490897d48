package ui

import (
	"bytes"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/dispatchtop/dispatchtop/model"
)

func waitOutput(t *testing.T, tm *teatest.TestModel, want string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte(want))
	}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

// End to end through a real program: the feed delivers a snapshot, it is
// drawn; an action goes through the dialog to the engine; q quits.
func TestEndToEndKillThroughDialog(t *testing.T) {
	feed := newFakeFeed()
	runner := &fakeRunner{}
	m := New(Options{Feed: feed, Runner: runner, Now: fixedNow, Tick: -1})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))

	feed.ch <- model.Update{Snapshot: exampleSnapshot()}
	waitOutput(t, tm, "tester")

	for range 4 {
		tm.Send(keyMsg("j"))
	}
	tm.Send(keyMsg("x"))
	waitOutput(t, tm, "would kill A/test/3")
	tm.Send(keyMsg("y"))
	waitOutput(t, tm, "kill done")

	feed.ch <- model.Update{Snapshot: exampleSnapshot(), Transitions: []model.Transition{
		{Time: clock12, ID: "A/test/3", From: model.StateRunning, To: model.StateDead, Reason: "pid 4104 gone"},
	}}
	tm.Send(keyMsg("e"))
	waitOutput(t, tm, "pid 4104 gone")

	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	final := tm.FinalModel(t).(*Model)

	var real []ActionRequest
	for _, r := range runner.requests() {
		if !r.DryRun {
			real = append(real, r)
		}
	}
	if len(real) != 1 || real[0].NodeID != "A/test/3" {
		t.Errorf("engine ran %+v, want one kill of A/test/3", real)
	}
	feed.mu.Lock()
	refreshed := feed.refreshed
	feed.mu.Unlock()
	if refreshed != 1 {
		t.Errorf("feed refreshed %d times after the action, want 1", refreshed)
	}
	if len(final.events) != 2 {
		t.Errorf("final events %+v, want the action and the transition", final.events)
	}
}

// A still picture (no feed) shows the initial snapshot and quits on ctrl+c.
func TestEndToEndStillPicture(t *testing.T) {
	m := New(Options{Initial: exampleSnapshot(), Now: fixedNow, Tick: -1, Readonly: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	waitOutput(t, tm, "read-only")
	tm.Send(keyMsg("?"))
	waitOutput(t, tm, "Keys")
	tm.Send(keyMsg("ctrl+c"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	if final := tm.FinalModel(t).(*Model); final.mode != modeHelp {
		t.Errorf("final mode %v, want help", final.mode)
	}
}

// Through a real program: a resize reflows, a click selects, the wheel scrolls.
func TestEndToEndResizeAndMouse(t *testing.T) {
	m := New(Options{Initial: bigSnapshot(200), Now: fixedNow, Tick: -1})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	waitOutput(t, tm, "1/200")
	tm.Send(tea.WindowSizeMsg{Width: 120, Height: 40})
	waitOutput(t, tm, "CFA")
	// The header is five lines (title, states, flags, notes, column head):
	// screen line 8 is the fourth row.
	tm.Send(tea.MouseClickMsg{X: 3, Y: 8, Button: tea.MouseLeft})
	waitOutput(t, tm, "4/200")
	for range 10 {
		tm.Send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	}
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	final := tm.FinalModel(t).(*Model)
	if final.width != 120 || final.height != 40 {
		t.Errorf("final size %dx%d", final.width, final.height)
	}
	if final.offset != 10*wheelStep {
		t.Errorf("offset %d after ten wheel steps, want %d", final.offset, 10*wheelStep)
	}
	if final.cursor < final.offset {
		t.Errorf("cursor %d above the screen (offset %d)", final.cursor, final.offset)
	}
}
