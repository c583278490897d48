package ui

import (
	"fmt"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §6 event pane and §8 budgets: a whole fleet crossing a threshold in
// one update (10,000 nodes going stalled together) leaves the newest
// maxEvents transitions in the pane, in order, quiet-only flaps skipped.
func TestApplyTransitionBurstKeepsNewest(t *testing.T) {
	tests := []struct {
		name      string
		n         int
		quietEach int // every quietEach-th transition only toggles quiet (0: none)
	}{
		{"fewer than the pane holds", maxEvents / 2, 0},
		{"exactly the pane", maxEvents, 0},
		{"a fleet-wide burst", 10000, 0},
		{"a burst with quiet flaps", 10000, 3},
	}
	now := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestModel(t, 120, 40, Options{})
			var tr []model.Transition
			var want []string
			for i := range tt.n {
				id := fmt.Sprintf("s/%05d", i)
				if tt.quietEach > 0 && i%tt.quietEach == 0 {
					tr = append(tr, model.Transition{Time: now, ID: id, From: model.StateRunning, To: model.StateRunning,
						ToFlags: []model.Flag{model.FlagQuiet}})
					continue
				}
				tr = append(tr, model.Transition{Time: now, ID: id, From: model.StateRunning, To: model.StateRunning,
					ToFlags: []model.Flag{model.FlagStalled}, Reason: "alive but not beating for 2m0s"})
				want = append(want, id)
			}
			if len(want) > maxEvents {
				want = want[len(want)-maxEvents:]
			}
			m.Update(updateMsg{update: model.Update{Transitions: tr}})
			if len(m.events) != len(want) {
				t.Fatalf("%d events in the pane, want %d", len(m.events), len(want))
			}
			for i, e := range m.events {
				if e.id != want[i] {
					t.Fatalf("event %d is %s, want %s", i, e.id, want[i])
				}
			}
		})
	}
}
