package report

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §4.1: the summary counts every flag and every recommended action,
// zeros included, next to the keys it always had.
func TestJSONSummaryCountsEveryFlagAndAction(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	node := func(id string, state model.State, action model.Action, flags ...model.Flag) *model.Node {
		return &model.Node{ID: id, Root: "/r", InfraDir: "/r/" + id, State: state, Action: action, Flags: flags}
	}
	lead := node("A", model.StateRunning, model.ActionNone, model.FlagQuiet)
	lead.Children = []*model.Node{
		node("A/b", model.StateRunning, model.ActionNone, model.FlagStarting),
		node("A/c", model.StateRunning, model.ActionNone, model.FlagPaused, model.FlagQuiet),
		node("A/d", model.StateDead, model.ActionWait),
	}
	legacy := node("L", model.StateRunning, model.ActionNone, model.FlagLegacy)
	dead := node("Z", model.StateDead, model.ActionResume)
	snap := &model.Snapshot{GeneratedAt: now, Roots: []string{"/r"}, Thresholds: model.DefaultThresholds(),
		Sessions: []*model.Node{lead, legacy, dead}}

	var buf bytes.Buffer
	if err := WriteJSON(&buf, snap); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary struct {
			Nodes   *int           `json:"nodes"`
			Dead    *int           `json:"dead"`
			Stalled *int           `json:"stalled"`
			Flags   map[string]int `json:"flags"`
			Actions map[string]int `json:"actions"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	sum := doc.Summary
	if sum.Nodes == nil || *sum.Nodes != 6 || sum.Dead == nil || *sum.Dead != 2 || sum.Stalled == nil || *sum.Stalled != 0 {
		t.Fatalf("the keys the summary always had changed: %s", buf.String())
	}
	tests := []struct {
		name   string
		counts map[string]int
		key    string
		want   int
	}{
		{"quiet", sum.Flags, "quiet", 2},
		{"starting", sum.Flags, "starting", 1},
		{"paused", sum.Flags, "paused", 1},
		{"legacy", sum.Flags, "legacy", 1},
		{"a flag nobody has is zero", sum.Flags, "kill_candidate", 0},
		{"another flag nobody has", sum.Flags, "clock_skew", 0},
		{"action none", sum.Actions, "none", 4},
		{"action wait", sum.Actions, "wait", 1},
		{"action resume", sum.Actions, "resume", 1},
		{"an action nobody has is zero", sum.Actions, "surface", 0},
		{"kill", sum.Actions, "kill", 0},
		{"answer", sum.Actions, "answer", 0},
		{"merge", sum.Actions, "merge", 0},
		{"compact", sum.Actions, "compact", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.counts[tt.key]
			if !ok || got != tt.want {
				t.Fatalf("%s = %d (present %v), want %d", tt.key, got, ok, tt.want)
			}
		})
	}
	for _, f := range model.Flags {
		if _, ok := sum.Flags[string(f)]; !ok {
			t.Errorf("summary.flags lacks %q", f)
		}
	}
	if len(sum.Actions) != 8 {
		t.Errorf("summary.actions = %v, want the eight actions of SPEC §3", sum.Actions)
	}
}
