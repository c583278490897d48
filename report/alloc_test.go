package report

import (
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// forestOf is a snapshot of sessions sessions of a lead and two workers,
// every value the document shows set, reasons without a moving age.
func forestOf(sessions int) *model.Snapshot {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	snap := &model.Snapshot{GeneratedAt: now, Roots: []string{"/r"}, Thresholds: model.DefaultThresholds(), ByID: map[string]*model.Node{}}
	for s := range sessions {
		var nodes []*model.Node
		for k := range 3 {
			id := fmt.Sprintf("s%d", s)
			if k > 0 {
				id += fmt.Sprintf("/t/w%d", k)
			}
			n := &model.Node{ID: id, Root: "/r", InfraDir: "/r/" + id, HeartbeatPath: "/r/" + id + "/.heartbeat", HasHeartbeat: true,
				Heartbeat: &model.Heartbeat{PID: 100 + k, Role: "worker", Started: 1.7e9, Status: "running", HeartbeatOptional: &model.HeartbeatOptional{TaskID: "t"}, HasStatusField: true},
				BeatMtime: now.Add(-time.Second), ActivityMtime: now.Add(-2 * time.Second),
				Cfa: &model.CfaState{State: "EXECUTE"}, Blocked: &model.Blocked{Question: "q"},
				State: model.StateRunning, Flags: []model.Flag{model.FlagIdle}, Action: model.ActionNone, Reason: "beating"}
			if k > 0 {
				n.Parent, n.ParentID = nodes[0], nodes[0].ID
				nodes[0].Children = append(nodes[0].Children, n)
			}
			nodes = append(nodes, n)
			snap.ByID[id] = n
		}
		snap.Sessions = append(snap.Sessions, nodes[0])
	}
	return snap
}

// The document is written session by session: a node costs no allocation
// of its own (the values it shows are not boxed one by one on the heap),
// so at 100,000 nodes the report adds no garbage for the collector.
func TestJSONWritesNodesWithoutAllocatingForEach(t *testing.T) {
	small, large := forestOf(50), forestOf(150)
	allocs := func(snap *model.Snapshot) float64 {
		return testing.AllocsPerRun(5, func() {
			if err := WriteJSON(io.Discard, snap); err != nil {
				t.Fatal(err)
			}
		})
	}
	perNode := (allocs(large) - allocs(small)) / float64(3*(150-50))
	if perNode > 0.1 {
		t.Errorf("%.2f allocations a node, want none", perNode)
	}
}

// A value encoding/json refuses (an extra field's bytes that are not JSON)
// fails the document with encoding/json's error, in whichever session and
// encoder it is met. (A non-finite float is no such value: it is null.)
func TestJSONFailsWithEncodingJSONsError(t *testing.T) {
	for _, at := range []int{0, 17, 99} {
		snap := forestOf(100)
		snap.Sessions[at].Heartbeat.SetOptional(model.HeartbeatOptional{Extra: map[string]json.RawMessage{"x": json.RawMessage(`{not json`)}})
		_, want := json.Marshal(BuildDocument(snap))
		err := WriteJSON(io.Discard, snap)
		if want == nil || err == nil || err.Error() != want.Error() {
			t.Errorf("+Inf in session %d: %v, want %v", at, err, want)
		}
	}
}
