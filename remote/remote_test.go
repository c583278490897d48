package remote

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/serve"
)

var fixedNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

type fakeProbe map[int]time.Time

func (p fakeProbe) Lookup(pid int) liveness.ProcessInfo {
	if t, ok := p[pid]; ok {
		return liveness.ProcessInfo{Exists: true, CreateTime: t}
	}
	return liveness.ProcessInfo{}
}

// treeSnapshot scans a small tree at fixedNow holding every kind of fact
// the v1 document carries: a running lead with extra heartbeat fields, a
// finished child with CfA DONE, a missing registration with a task id, a
// dead resumable session with retries, a blocked agent and a legacy node.
func treeSnapshot(t testing.TB) *model.Snapshot {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".sessions")
	const started = 1795000000
	write := func(rel, name, body string, age time.Duration) {
		t.Helper()
		dir := filepath.Join(root, rel)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, fixedNow.Add(-age), fixedNow.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	hb := func(pid int, parent, role, status, extra string) string {
		ph := ""
		if parent != "" {
			ph = filepath.Join(root, parent, ".heartbeat")
		}
		return fmt.Sprintf(`{"pid": %d, "parent_heartbeat": %q, "role": %q, "started": %d, "status": %q%s}`, pid, ph, role, started, status, extra)
	}
	write("A", ".heartbeat", hb(101, "", "lead", "running", `, "model": "big"`), 10*time.Second)
	write("A", ".children",
		fmt.Sprintf(`{"heartbeat": %q, "team": "plan", "task_id": "t-1", "status": "active"}`+"\n", filepath.Join(root, "A/plan/1/.heartbeat"))+
			fmt.Sprintf(`{"heartbeat": %q, "team": "docs", "task_id": "t-4", "status": "active"}`+"\n", filepath.Join(root, "A/docs/4/.heartbeat")),
		10*time.Minute)
	write("A/plan/1", ".heartbeat", hb(102, "A", "planner", "completed", ""), time.Minute)
	write("A/plan/1", ".cfa-state.json", `{"state": "DONE", "history": [], "backtrack_count": 0, "task_id": "t-1"}`, time.Minute)
	write("A/ask/3", ".heartbeat", hb(103, "A", "asker", "running", ""), 20*time.Minute)
	write("A/ask/3", "blocked.json", `{"question": "which database?"}`, 20*time.Minute)
	write("A/ask/3", ".exec-stream.jsonl", "{}\n", 19*time.Minute)
	write("B", ".heartbeat", hb(105, "", "lead", "running", ""), 90*time.Second)
	write("B", ".cfa-state.json", `{"state": "EXECUTE", "history": [], "backtrack_count": 0, "task_id": "t-9"}`, 90*time.Second)
	write("B", ".retry-count", `{"total": 2, "by_phase": {"EXECUTE": 1}}`, 90*time.Second)
	write("C", ".running", "106", 5*time.Second)
	// A heartbeat without a status (JSON status null) is still a heartbeat.
	write("D", ".heartbeat", fmt.Sprintf(`{"pid": 107, "parent_heartbeat": "", "role": "statusless", "started": %d}`, started), 5*time.Second)
	snap, err := scanner.Scan(scanner.Options{
		Roots: []string{root}, Thresholds: model.DefaultThresholds(),
		Probe: fakeProbe{101: time.Unix(started, 0), 103: time.Unix(started, 0), 106: time.Time{}, 107: time.Unix(started, 0)},
		Now:   func() time.Time { return fixedNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func docBytes(t testing.TB, snap *model.Snapshot) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := report.WriteJSON(&b, snap); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Decoding the v1 JSON back into a snapshot loses nothing the document
// says: encoding the decoded snapshot again gives the same document.
func TestDecodeRoundTrip(t *testing.T) {
	snap := treeSnapshot(t)
	for _, id := range []string{"A", "A/plan/1", "A/docs/4", "A/ask/3", "B", "C", "D"} {
		if snap.Node(id) == nil {
			t.Fatalf("fixture lacks %s", id)
		}
	}
	// A node of another source, with the fields it shows.
	b := snap.Node("B")
	b.Source = "middle"
	b.EditRare(func(r *model.Rare) {
		r.SourceFields = []model.Field{{Name: "row", Value: "wf-7"}, {Name: "session", Value: "mid-7"}}
	})
	want := docBytes(t, snap)
	doc, err := Decode(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	got := docBytes(t, ToSnapshot(doc, fixedNow, "", nil))
	if !bytes.Equal(got, want) {
		t.Errorf("round trip differs:\n%s\nwant:\n%s", got, want)
	}
}

// A host prefix goes on every id and parent id; sessions hang under the
// host node; ages are measured from when the document arrived.
func TestToSnapshotPrefixesAndAges(t *testing.T) {
	doc, err := Decode(bytes.NewReader(docBytes(t, treeSnapshot(t))))
	if err != nil {
		t.Fatal(err)
	}
	host := &model.Node{ID: "host-a"}
	received := fixedNow.Add(time.Hour) // the viewer's clock, an hour ahead
	snap := ToSnapshot(doc, received, "host-a", host)
	tests := []struct {
		name string
		id   string
		want func(n *model.Node) string
		val  string
	}{
		{"session parent is the host", "host-a/A", func(n *model.Node) string { return n.ParentID }, "host-a"},
		{"child parent prefixed", "host-a/A/plan/1", func(n *model.Node) string { return n.ParentID }, "host-a/A"},
		{"beat age against the arrival", "host-a/A", func(n *model.Node) string { return received.Sub(n.BeatMtime).String() }, "10s"},
		{"activity age", "host-a/A/ask/3", func(n *model.Node) string { return received.Sub(n.ActivityMtime).String() }, "19m0s"},
		{"blocked question", "host-a/A/ask/3", func(n *model.Node) string { return n.Blocked.Question }, "which database?"},
		{"missing node keeps its team", "host-a/A/docs/4", func(n *model.Node) string { return n.Team() + " " + n.TaskID() }, "docs t-4"},
		{"legacy pid", "host-a/C", func(n *model.Node) string { return fmt.Sprint(n.PID(), n.Legacy) }, "106 true"},
		{"a heartbeat without status keeps its role", "host-a/D", func(n *model.Node) string { return fmt.Sprint(n.Role(), " ", n.PID(), " ", n.Legacy) }, "statusless 107 false"},
		{"state and action", "host-a/B", func(n *model.Node) string { return string(n.State) + " " + string(n.Action) }, "dead resume"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := snap.Node(tt.id)
			if n == nil {
				t.Fatalf("no node %s", tt.id)
			}
			if got := tt.want(n); got != tt.val {
				t.Errorf("%q, want %q", got, tt.val)
			}
		})
	}
	if s := snap.Sessions[0]; s.Parent != host {
		t.Errorf("session's parent %v, want the host node", s.Parent)
	}
}

func TestDecodeRejectsOtherSchemas(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"other schema", `{"schema": "dispatchtop/v2"}`, `schema "dispatchtop/v2"`},
		{"not json", `<html>`, "decode the snapshot"},
		{"empty", ``, "decode the snapshot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Decode(strings.NewReader(tt.body)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestParseHosts(t *testing.T) {
	tests := []struct {
		name    string
		specs   []string
		want    []Host
		wantErr string
	}{
		{name: "bare host:port", specs: []string{"127.0.0.1:9477"},
			want: []Host{{"127.0.0.1:9477", "http://127.0.0.1:9477/api/v1/snapshot"}}},
		{name: "comma list and names", specs: []string{"a=http://h1:1,b=https://h2:2/"},
			want: []Host{{"a", "http://h1:1/api/v1/snapshot"}, {"b", "https://h2:2/api/v1/snapshot"}}},
		{name: "explicit path kept", specs: []string{"http://h/custom/snap"},
			want: []Host{{"h", "http://h/custom/snap"}}},
		{name: "repeated flag", specs: []string{"h1:1", "h2:2"},
			want: []Host{{"h1:1", "http://h1:1/api/v1/snapshot"}, {"h2:2", "http://h2:2/api/v1/snapshot"}}},
		{name: "same name twice", specs: []string{"h:1,h:1"}, wantErr: "given twice"},
		{name: "bad scheme", specs: []string{"ftp://h:1"}, wantErr: "want http(s)"},
		{name: "nothing", specs: []string{" , "}, wantErr: "no URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHosts(tt.specs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// The fleet merges two served hosts under host rows; when one stops
// answering it is marked unreachable since that poll and keeps its last
// snapshot; the token travels as a bearer token.
func TestFleetMergesAndMarksUnreachable(t *testing.T) {
	snapA, snapB := treeSnapshot(t), treeSnapshot(t)
	srvA := serve.New(serve.Options{Snapshot: func() *model.Snapshot { return snapA }, Token: "tok", Now: func() time.Time { return fixedNow }})
	srvB := serve.New(serve.Options{Snapshot: func() *model.Snapshot { return snapB }, Token: "tok", Now: func() time.Time { return fixedNow }})
	a := httptest.NewServer(srvA.Handler())
	defer a.Close()
	var bDown atomic.Bool
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if bDown.Load() {
			// A stopped host: the connection drops without an answer.
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close()
			return
		}
		srvB.Handler().ServeHTTP(w, r)
	}))
	defer b.Close()
	hosts, err := ParseHosts([]string{"host-a=" + a.URL + ",host-b=" + b.URL})
	if err != nil {
		t.Fatal(err)
	}
	clock := fixedNow
	f := NewFleet(Options{Hosts: hosts, Token: "tok", Now: func() time.Time { return clock }})

	r := f.Poll(context.Background())
	if len(r.Snapshot.Sessions) != 2 || r.Snapshot.Sessions[0].ID != "host-a" || r.Snapshot.Sessions[1].ID != "host-b" {
		t.Fatalf("top-level rows %v, want host-a and host-b", ids(r.Snapshot.Sessions))
	}
	for _, h := range r.Hosts {
		if !h.Reachable || h.Nodes != 7 {
			t.Errorf("%s: reachable %v (%s), %d nodes; want reachable with 7", h.Name, h.Reachable, h.Err, h.Nodes)
		}
	}
	if n := r.Snapshot.Node("host-b/A/ask/3"); n == nil || !n.HasFlag(model.FlagBlocked) {
		t.Errorf("host-b's blocked node not in the merged forest")
	}
	if len(r.Transitions) != 0 {
		t.Errorf("first poll made transitions: %v", r.Transitions)
	}

	bDown.Store(true)
	clock = fixedNow.Add(2 * time.Second)
	r = f.Poll(context.Background())
	hb := r.Hosts[1]
	if hb.Reachable || !hb.Since.Equal(clock) || hb.Err == "" || !hb.LastSeen.Equal(fixedNow) {
		t.Errorf("host-b after stopping: %+v; want unreachable since %v, last seen %v", hb, clock, fixedNow)
	}
	if !r.Hosts[0].Reachable {
		t.Errorf("host-a marked unreachable: %s", r.Hosts[0].Err)
	}
	if n := r.Snapshot.Node("host-b/B"); n == nil {
		t.Error("host-b's last snapshot dropped")
	}
	if reason := r.Snapshot.Node("host-b").Reason; !strings.HasPrefix(reason, "unreachable since 12:00:02") {
		t.Errorf("host-b row reason %q", reason)
	}

	// Still down a poll later: the since does not move.
	clock = fixedNow.Add(4 * time.Second)
	if r = f.Poll(context.Background()); !r.Hosts[1].Since.Equal(fixedNow.Add(2 * time.Second)) {
		t.Errorf("since moved to %v", r.Hosts[1].Since)
	}

	// A state change on host-a is a transition of the prefixed id.
	snapA = treeSnapshot(t)
	snapA.Node("B").State = model.StateRunning
	if r = f.Poll(context.Background()); len(r.Transitions) != 1 || r.Transitions[0].ID != "host-a/B" ||
		r.Transitions[0].From != model.StateDead || r.Transitions[0].To != model.StateRunning {
		t.Errorf("transitions %+v, want host-a/B dead → running", r.Transitions)
	}
}

// Run publishes its polls on Updates, each with the hosts' reachability,
// without waiting for the reader, and closes Updates when ctx ends.
func TestFleetRunPublishesUntilCancelled(t *testing.T) {
	snap := treeSnapshot(t)
	srv := httptest.NewServer(serve.New(serve.Options{Snapshot: func() *model.Snapshot { return snap }}).Handler())
	defer srv.Close()
	hosts, _ := ParseHosts([]string{"host-a=" + srv.URL})
	f := NewFleet(Options{Hosts: hosts, Every: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.Run(ctx) }()
	time.Sleep(100 * time.Millisecond) // several polls nobody reads
	select {
	case u := <-f.Updates():
		if u.Snapshot.Node("host-a/B") == nil || len(u.Hosts) != 1 || !u.Hosts[0].Reachable {
			t.Errorf("update: hosts %+v, host-a/B %v", u.Hosts, u.Snapshot.Node("host-a/B"))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no update from Run")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return when ctx ended")
	}
	for range f.Updates() {
	} // closed, or this never ends
}

// Without the token the host answers 401 and is unreachable with that reason.
func TestFleetWithoutToken(t *testing.T) {
	snap := treeSnapshot(t)
	srv := httptest.NewServer(serve.New(serve.Options{Snapshot: func() *model.Snapshot { return snap }, Token: "tok"}).Handler())
	defer srv.Close()
	hosts, _ := ParseHosts([]string{srv.URL})
	r := NewFleet(Options{Hosts: hosts}).Poll(context.Background())
	if r.Hosts[0].Reachable || !strings.Contains(r.Hosts[0].Err, "401") {
		t.Errorf("status %+v, want unreachable with 401", r.Hosts[0])
	}
}

// A host slower than the timeout is unreachable; the others are not held up.
func TestFleetTimeout(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	hosts, _ := ParseHosts([]string{slow.URL})
	start := time.Now()
	r := NewFleet(Options{Hosts: hosts, Timeout: 100 * time.Millisecond}).Poll(context.Background())
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("poll took %v with a 100ms timeout", took)
	}
	if r.Hosts[0].Reachable || !strings.Contains(r.Hosts[0].Err, "deadline") {
		t.Errorf("status %+v, want a deadline error", r.Hosts[0])
	}
}

func ids(ns []*model.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.ID)
	}
	return out
}
