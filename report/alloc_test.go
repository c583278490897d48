package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
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

// sessionOf is a snapshot of one session of nodes nodes, ten children a
// node, every value the document shows set, each node with source fields.
func sessionOf(nodes int) *model.Snapshot {
	snap := forestOf(1)
	lead := snap.Sessions[0]
	lead.Children = nil
	all := []*model.Node{lead}
	for i := 1; i < nodes; i++ {
		parent := all[(i-1)/10]
		n := *lead
		n.Children = nil
		n.ID = fmt.Sprintf("s0/w%d", i)
		n.Parent, n.ParentID = parent, parent.ID
		n.EditRare(func(r *model.Rare) {
			r.SourceFields = []model.Field{{Name: "conversation", Value: n.ID}, {Name: "state", Value: "active"}}
		})
		parent.Children = append(parent.Children, &n)
		all = append(all, &n)
		snap.ByID[n.ID] = &n
	}
	return snap
}

// loneNodesOf is a forest of sessions each of one node, forestOf's lead.
func loneNodesOf(sessions int) *model.Snapshot {
	snap := forestOf(sessions)
	for _, s := range snap.Sessions {
		for _, c := range s.Children {
			delete(snap.ByID, c.ID)
		}
		s.Children = nil
	}
	return snap
}

// writeSizes records the size of every write it is given.
type writeSizes struct {
	total, largest int
}

func (w *writeSizes) Write(b []byte) (int, error) {
	w.total += len(b)
	w.largest = max(w.largest, len(b))
	return len(b), nil
}

// A session is written as it is walked: its bytes reach the writer in
// parts of about spillAt, and neither they nor its nodes' values are held
// whole (one TeaParty bus is a session of a million nodes: held whole, its
// bytes were 1.5 GB, doubled as they grew).
func TestJSONWritesALargeSessionAsItGoes(t *testing.T) {
	snap := sessionOf(12000)
	var w writeSizes
	if err := WriteJSON(&w, snap); err != nil {
		t.Fatal(err)
	}
	if w.total < 8*spillAt || w.largest > 2*spillAt {
		t.Errorf("a document of %d bytes written in parts of up to %d, want parts of at most %d", w.total, w.largest, 2*spillAt)
	}
	heap := func(snap *model.Snapshot) float64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := WriteJSON(io.Discard, snap); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc - before.TotalAlloc)
	}
	small, large := sessionOf(3000), sessionOf(12000)
	heap(small) // the package's first use
	if perNode := (heap(large) - heap(small)) / (12000 - 3000); perNode > 16 {
		t.Errorf("%.0f bytes allocated a node of one session, want none", perNode)
	}
}

// largeSessions is a snapshot of count sessions of nodes nodes each.
func largeSessions(count, nodes int) *model.Snapshot {
	snap := sessionOf(nodes)
	for i := 1; i < count; i++ {
		more := sessionOf(nodes)
		lead := more.Sessions[0]
		lead.ID = fmt.Sprintf("s%d", i)
		snap.Sessions = append(snap.Sessions, lead)
	}
	return snap
}

// failingWriter fails every write after the first after bytes.
type failingWriter struct{ after int }

func (w *failingWriter) Write(b []byte) (int, error) {
	if w.after -= len(b); w.after < 0 {
		return 0, errors.New("disk full")
	}
	return len(b), nil
}

// A write that fails in the middle of a session ends the document with its
// error, whichever encoder was writing: no encoder is left waiting.
func TestJSONStopsAtAFailedWriteInASession(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, snap := range []*model.Snapshot{sessionOf(3000), largeSessions(9, 1500)} {
		for _, after := range []int{0, spillAt / 2, 3 * spillAt} {
			err := WriteJSON(&failingWriter{after: after}, snap)
			if err == nil || err.Error() != "disk full" {
				t.Errorf("%d sessions, a write failing after %d bytes: %v, want disk full", len(snap.Sessions), after, err)
			}
		}
	}
}
