package ui

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
	"github.com/dispatchtop/dispatchtop/serve"
)

// goneProbe says every pid is gone.
type goneProbe struct{}

func (goneProbe) Lookup(int) liveness.ProcessInfo { return liveness.ProcessInfo{} }

// classifiedSnapshot is a session the classifier judged at classified:
//
//	s          running quiet, no pid: "beating, quiet: last beat 1m05s ago"
//	s/asker    dead and blocked, its question quoting an age of its own
//	s/legacy   running from .running: ".running written 10s ago"
func classifiedSnapshot(classified time.Time) *model.Snapshot {
	hb := func(id string, pid int, beat time.Duration) *model.Node {
		return &model.Node{ID: id, InfraDir: "/r/" + id, HeartbeatPath: "/r/" + id + "/.heartbeat", HasHeartbeat: true,
			Heartbeat: &model.Heartbeat{PID: pid, Status: "running", Role: "agent", Started: float64(classified.Add(-time.Hour).Unix())},
			BeatMtime: classified.Add(-beat)}
	}
	lead := hb("s", 0, 65*time.Second)
	asker := hb("s/asker", 9, time.Hour)
	asker.Blocked = &model.Blocked{Path: "/r/s/asker/blocked.json", Question: "last beat 3s ago?"}
	old := &model.Node{ID: "s/legacy", InfraDir: "/r/s/legacy", Legacy: true, BeatMtime: classified.Add(-10 * time.Second)}
	for _, c := range []*model.Node{asker, old} {
		c.Parent, c.ParentID = lead, lead.ID
		lead.Children = append(lead.Children, c)
	}
	snap := &model.Snapshot{GeneratedAt: classified, Roots: []string{"/r"}, Thresholds: model.DefaultThresholds(),
		Sessions: []*model.Node{lead}, ByID: map[string]*model.Node{}, Watch: model.WatchInfo{Mode: "fsnotify"}}
	lead.Walk(func(n *model.Node) { snap.ByID[n.ID] = n })
	liveness.ClassifyForest(snap.Sessions, goneProbe{}, classified, snap.Thresholds)
	return snap
}

// statusReason is the reason the status line shows for the node id.
func statusReason(t *testing.T, m *Model, id string) string {
	t.Helper()
	m.moveTo(m.rowIndex(id))
	m.frame.dirty = true
	lines := strings.Split(stripped(m), "\n")
	status := lines[len(lines)-2]
	// The reason leads; the position and the id follow.
	reason, where, ok := strings.Cut(status, "  · ")
	if !ok || !strings.HasSuffix(strings.TrimRight(where, " "), "  "+id) {
		t.Fatalf("status line %q does not name %s", status, id)
	}
	return reason
}

// SPEC §3 ages, §6 tree: the age a reason quotes reads as the beat column
// beside it does, measured at the same clock and written the same way.
func TestReasonQuotesTheBeatColumnsAge(t *testing.T) {
	classified := clock12.Add(-2 * time.Minute)
	snap := classifiedSnapshot(classified)
	m := newTestModel(t, 200, 20, Options{Initial: snap})
	row := ""
	for _, l := range strings.Split(stripped(m), "\n") {
		if strings.Contains(l, "beating, quiet") && row == "" {
			row = l // the tree row; the status line below quotes it too
		}
	}
	if !strings.Contains(row, " 3m05s ") || !strings.HasSuffix(strings.TrimRight(row, " "), "beating, quiet: last beat 3m05s ago") {
		t.Errorf("the lead's row, two minutes after its classification, want beat 3m05s quoted alike:\n%s", row)
	}
}

// A reason's own beat age moves with the clock; text an agent wrote into
// it (a blocked question quoting an age) never does.
func TestReasonShowsOnlyItsOwnAgeMoving(t *testing.T) {
	classified := clock12.Add(-time.Minute)
	m := newTestModel(t, 200, 20, Options{Initial: classifiedSnapshot(classified)})
	want := "pid 9 gone; last beat 1h01m ago; waiting for a human: last beat 3s ago?"
	if got := statusReason(t, m, "s/asker"); got != want {
		t.Errorf("shown %q\nwant  %q", got, want)
	}
}

// One node, one now: the dashboard and serve's API say the same reason,
// because both render it with the same function at their own clock.
func TestReasonIsTheSameInTheDashboardAndTheAPI(t *testing.T) {
	classified := clock12.Add(-90 * time.Second)
	snap := classifiedSnapshot(classified)
	srv := serve.New(serve.Options{Snapshot: func() *model.Snapshot { return snap }, Now: fixedNow})
	req := httptest.NewRequest(http.MethodGet, serve.SnapshotPath, nil)
	req.Host = "127.0.0.1:9477"
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", serve.SnapshotPath, rec.Code, rec.Body)
	}
	var doc report.Document
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	api := map[string]string{}
	var walk func([]report.NodeJSON)
	walk = func(ns []report.NodeJSON) {
		for _, n := range ns {
			api[n.ID] = n.Reason
			walk(n.Children)
		}
	}
	walk(doc.Sessions)

	m := newTestModel(t, 300, 20, Options{Initial: snap})
	for _, id := range []string{"s", "s/asker", "s/legacy"} {
		shown := statusReason(t, m, id)
		if shown != api[id] {
			t.Errorf("%s: the dashboard shows %q, the API says %q", id, shown, api[id])
		}
		if shown == snap.Node(id).Reason {
			t.Errorf("%s: %q is the reason as classified 90 s earlier, not as of now", id, shown)
		}
	}
}
