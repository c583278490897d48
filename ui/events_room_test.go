package ui

import (
	"fmt"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §8, the fleet view under churn: an update's transitions enter a full
// event pane at the cost of one shift of it, not one shift a transition.
// Timed against the same update into an empty pane (the least time of
// several tries each): a shift a transition made it some 100 times slower.
func TestApplyIntoAFullEventPaneShiftsItOnce(t *testing.T) {
	now := time.Now()
	transitions := func(prefix string, n int) []model.Transition {
		tr := make([]model.Transition, n)
		for i := range tr {
			tr[i] = model.Transition{Time: now, ID: fmt.Sprintf("%s/%05d", prefix, i), From: model.StateRunning,
				To: model.StateFinished, Reason: "completed"}
		}
		return tr
	}
	tests := []struct {
		name string
		full bool
	}{
		{"into an empty pane", false},
		{"into a full pane", true},
	}
	const burst = 400
	took := map[bool]time.Duration{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			best := time.Duration(1 << 62)
			for range 5 {
				m := newTestModel(t, 120, 40, Options{})
				if tt.full {
					m.Update(updateMsg{update: model.Update{Transitions: transitions("old", maxEvents)}})
				}
				u := updateMsg{update: model.Update{Transitions: transitions("new", burst)}}
				start := time.Now()
				m.Update(u)
				best = min(best, time.Since(start))
				if len(m.events) != min(maxEvents, burst+map[bool]int{true: maxEvents}[tt.full]) {
					t.Fatalf("%d events in the pane", len(m.events))
				}
				if last := m.events[len(m.events)-1].id; last != fmt.Sprintf("new/%05d", burst-1) {
					t.Fatalf("the newest event is %s", last)
				}
				if tt.full {
					if first := m.events[0].id; first != fmt.Sprintf("old/%05d", burst) {
						t.Fatalf("the oldest event kept is %s, want old/%05d", first, burst)
					}
				}
			}
			took[tt.full] = best
		})
	}
	if took[true] > 10*took[false]+5*time.Millisecond {
		t.Errorf("%d transitions took %s into a full pane, %s into an empty one: the pane is shifted for each",
			burst, took[true], took[false])
	}
}
