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

// SPEC §6 event pane: a producer that lists only what the pane shows
// (EventTransitions) leaves the same lines in it as one that lists every
// transition, for a fleet crossing thresholds in one update with more
// transitions than the pane holds, quiet flaps, new nodes and vanished
// ones among them.
func TestEventPaneShowsTheSameLinesWhenTheProducerListsOnlyThose(t *testing.T) {
	now := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
	forest := func(n int, state func(i int) (model.State, []model.Flag), skip func(i int) bool) *model.Snapshot {
		snap := &model.Snapshot{GeneratedAt: now, ByID: map[string]*model.Node{}}
		for i := range n {
			if skip(i) {
				continue
			}
			s, f := state(i)
			node := &model.Node{ID: fmt.Sprintf("s%05d", i), State: s, Flags: f, Reason: "r" + string(s)}
			snap.Sessions = append(snap.Sessions, node)
			snap.ByID[node.ID] = node
		}
		return snap
	}
	const n = 3 * maxEvents
	prev := forest(n, func(int) (model.State, []model.Flag) { return model.StateRunning, nil }, func(i int) bool { return i%97 == 1 })
	next := forest(n, func(i int) (model.State, []model.Flag) {
		switch i % 3 {
		case 0:
			return model.StateRunning, []model.Flag{model.FlagQuiet} // a flap the pane skips
		case 1:
			return model.StateRunning, []model.Flag{model.FlagStalled}
		}
		return model.StateDead, nil
	}, func(i int) bool { return i%89 == 2 })
	lines := func(trans []model.Transition) []string {
		m := newTestModel(t, 120, 40, Options{})
		m.Update(updateMsg{update: model.Update{Transitions: trans}})
		out := make([]string, len(m.events))
		for i, e := range m.events {
			out[i] = fmt.Sprintf("%s %s %s (%s)", e.time.Format(time.TimeOnly), e.id, e.text, e.reason)
		}
		return out
	}
	all := model.Diff(prev, next, now, "vanished from disk")
	shown := model.DiffFor(prev, next, now, "vanished from disk", EventTransitions())
	if len(shown) > maxEvents || len(all) <= maxEvents {
		t.Fatalf("%d transitions listed for the pane of %d, of %d in all: want at most the pane, of more", len(shown), maxEvents, len(all))
	}
	want, got := lines(all), lines(shown)
	if len(got) != len(want) {
		t.Fatalf("%d lines in the pane, %d when every transition is listed", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("line %d is %q, %q when every transition is listed", i, got[i], want[i])
		}
	}
}
