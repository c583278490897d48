package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// withSession is snap with its session id replaced by a copy edited by
// edit (deleted when edit returns false), or a new session added.
func withSession(snap *model.Snapshot, id string, edit func(n *model.Node) bool) *model.Snapshot {
	next := *snap
	next.ByID = maps.Clone(snap.ByID)
	if next.ByID == nil {
		next.ByID = map[string]*model.Node{}
		for nid, n := range snap.Nodes() {
			next.ByID[nid] = n
		}
	}
	next.Sessions = nil
	found := false
	for _, s := range snap.Sessions {
		if s.ID != id {
			next.Sessions = append(next.Sessions, s)
			continue
		}
		found = true
		c := *s
		if !edit(&c) {
			delete(next.ByID, id)
			continue
		}
		next.Sessions = append(next.Sessions, &c)
		next.ByID[id] = &c
	}
	if !found {
		c := model.Node{ID: id, State: model.StateRunning, Action: model.ActionNone}
		edit(&c)
		next.Sessions = append(next.Sessions, &c)
		next.ByID[id] = &c
	}
	return &next
}

// watchClient reads a watch stream's events.
type watchClient struct {
	t    *testing.T
	resp *http.Response
	sc   *bufio.Scanner
}

func openWatch(t *testing.T, base, query string) *watchClient {
	t.Helper()
	resp, err := http.Get(base + WatchPath + query)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", WatchPath, resp.Status)
	}
	t.Cleanup(func() { resp.Body.Close() })
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	return &watchClient{t: t, resp: resp, sc: sc}
}

// next is the next event but heartbeats (skipped unless keepBeats).
func (c *watchClient) next(keepBeats bool) WatchEvent {
	c.t.Helper()
	for {
		if !c.sc.Scan() {
			c.t.Fatalf("the watch stream ended: %v", c.sc.Err())
		}
		var ev WatchEvent
		if err := json.Unmarshal(c.sc.Bytes(), &ev); err != nil {
			c.t.Fatalf("a line that is no event: %v: %q", err, c.sc.Bytes())
		}
		if ev.Type == EventHeartbeat && !keepBeats {
			continue
		}
		return ev
	}
}

func nodeIDs(ev WatchEvent) []string {
	var ids []string
	for _, n := range ev.Nodes {
		ids = append(ids, n.ID)
	}
	slices.Sort(ids)
	return ids
}

// The watch stream is a snapshot, then the diff of each change: the nodes
// that changed, the ids removed, the sessions' order when it changed, each
// under a new revision; a change to nothing makes no event.
func TestWatchSendsASnapshotThenEachChange(t *testing.T) {
	snap := fixtureSnapshot(t)
	var cur atomic.Pointer[model.Snapshot]
	cur.Store(snap)
	srv := New(Options{Snapshot: cur.Load, Now: func() time.Time { return fixedNow }})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	c := openWatch(t, ts.URL, "")
	first := c.next(false)
	if first.Type != EventSnapshot || first.Head == nil || first.Sessions == nil {
		t.Fatalf("the first event is %q, want a whole snapshot", first.Type)
	}
	if got, want := len(first.Nodes), snap.NodeCount(); got != want {
		t.Fatalf("the snapshot event holds %d nodes, want %d", got, want)
	}
	if got := *first.Sessions; !slices.Equal(got, []string{"A", "B"}) {
		t.Fatalf("sessions %v", got)
	}

	steps := []struct {
		name        string
		edit        func(*model.Snapshot) *model.Snapshot
		wantNodes   []string
		wantRemoved []string
		wantOrder   []string
	}{
		{"a state changes", func(s *model.Snapshot) *model.Snapshot {
			return withSession(s, "B", func(n *model.Node) bool { n.State = model.StateFinished; return true })
		}, []string{"B"}, nil, nil},
		{"a copy of a session that changes nothing", func(s *model.Snapshot) *model.Snapshot {
			return withSession(s, "A", func(*model.Node) bool { return true })
		}, nil, nil, nil},
		{"a session appears", func(s *model.Snapshot) *model.Snapshot {
			return withSession(s, "C", func(*model.Node) bool { return true })
		}, []string{"C"}, nil, []string{"A", "B", "C"}},
		{"a session goes", func(s *model.Snapshot) *model.Snapshot {
			return withSession(s, "B", func(*model.Node) bool { return false })
		}, nil, []string{"B"}, []string{"A", "C"}},
	}
	rev := first.Rev
	for _, step := range steps {
		next := step.edit(cur.Load())
		cur.Store(next)
		srv.Sync(next)
		if step.wantNodes == nil && step.wantRemoved == nil {
			continue // checked by the next step's event coming straight after
		}
		ev := c.next(false)
		if ev.Type != EventDiff || ev.Rev == rev {
			t.Fatalf("%s: event %q rev %s after %s, want a diff of a new revision", step.name, ev.Type, ev.Rev, rev)
		}
		rev = ev.Rev
		if got := nodeIDs(ev); !slices.Equal(got, step.wantNodes) {
			t.Errorf("%s: nodes %v, want %v", step.name, got, step.wantNodes)
		}
		if !slices.Equal(ev.Removed, step.wantRemoved) {
			t.Errorf("%s: removed %v, want %v", step.name, ev.Removed, step.wantRemoved)
		}
		var order []string
		if ev.Sessions != nil {
			order = *ev.Sessions
		}
		if !slices.Equal(order, step.wantOrder) {
			t.Errorf("%s: sessions %v, want %v", step.name, order, step.wantOrder)
		}
	}
}

// ?since=REV resumes after REV: the revisions after it, each once, no
// snapshot; a revision this server never made (another run's, or one not
// kept) is answered with a whole snapshot.
func TestWatchResumesSinceARevision(t *testing.T) {
	snap := fixtureSnapshot(t)
	var cur atomic.Pointer[model.Snapshot]
	cur.Store(snap)
	srv := New(Options{Snapshot: cur.Load, Now: func() time.Time { return fixedNow }})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	c := openWatch(t, ts.URL, "")
	first := c.next(false)
	states := []model.State{model.StateFinished, model.StateDead, model.StateRunning}
	var revs []string
	for _, st := range states {
		next := withSession(cur.Load(), "B", func(n *model.Node) bool { n.State = st; return true })
		cur.Store(next)
		srv.Sync(next)
		revs = append(revs, c.next(false).Rev)
	}
	c.resp.Body.Close() // the connection drops

	// Two changes while no one watches.
	for _, st := range []model.State{model.StateFinished, model.StateDead} {
		next := withSession(cur.Load(), "B", func(n *model.Node) bool { n.State = st; return true })
		cur.Store(next)
		srv.Sync(next)
	}
	r := openWatch(t, ts.URL, "?since="+revs[0])
	var got []model.State
	for range 4 {
		ev := r.next(false)
		if ev.Type != EventDiff {
			t.Fatalf("resumed with %q, want only diffs", ev.Type)
		}
		got = append(got, ev.Nodes[0].State)
	}
	want := []model.State{model.StateDead, model.StateRunning, model.StateFinished, model.StateDead}
	if !slices.Equal(got, want) {
		t.Errorf("resumed after %s: states %v, want %v (each transition once, none lost)", revs[0], got, want)
	}

	for _, since := range []string{"0123456789ab.1", first.Rev + "999", "garbage"} {
		o := openWatch(t, ts.URL, "?since="+since)
		if ev := o.next(false); ev.Type != EventSnapshot || len(ev.Nodes) != snap.NodeCount() {
			t.Errorf("since=%s: %q with %d nodes, want a whole snapshot", since, ev.Type, len(ev.Nodes))
		}
	}
}

// A quiet stream sends a heartbeat line each Heartbeat, so a client
// notices a dead connection.
func TestWatchSendsHeartbeatsWhenQuiet(t *testing.T) {
	snap := fixtureSnapshot(t)
	srv := New(Options{Snapshot: func() *model.Snapshot { return snap }, Heartbeat: 20 * time.Millisecond})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	c := openWatch(t, ts.URL, "")
	first := c.next(false)
	for range 2 {
		ev := c.next(true)
		if ev.Type != EventHeartbeat || ev.Rev != first.Rev {
			t.Fatalf("a quiet stream sent %q rev %s, want a heartbeat of %s", ev.Type, ev.Rev, first.Rev)
		}
	}
}

// A watcher that stays longer than the server's write timeout is not cut:
// the deadline is set per line.
func TestWatchOutlivesTheWriteTimeout(t *testing.T) {
	snap := fixtureSnapshot(t)
	srv := New(Options{Snapshot: func() *model.Snapshot { return snap }, Heartbeat: 20 * time.Millisecond})
	srv.timeouts.write = 100 * time.Millisecond
	ln := listenLoopback(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx, ln)
	c := openWatch(t, "http://"+ln.Addr().String(), "")
	c.next(false)
	deadline := time.Now().Add(400 * time.Millisecond)
	for time.Now().Before(deadline) {
		c.next(true)
	}
}

// /api/v1/snapshot carries an ETag, the classification's revision; asked
// with it in If-None-Match, the answer is 304 until a node changes.
func TestSnapshotETagAnswers304UntilAChange(t *testing.T) {
	snap := fixtureSnapshot(t)
	var cur atomic.Pointer[model.Snapshot]
	cur.Store(snap)
	srv := New(Options{Snapshot: cur.Load, Now: func() time.Time { return fixedNow }})
	get := func(inm string) *httptest.ResponseRecorder {
		req := localRequest(http.MethodGet, SnapshotPath)
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		return rec
	}
	first := get("")
	tag := first.Header().Get("ETag")
	if first.Code != http.StatusOK || tag == "" {
		t.Fatalf("GET: %d, ETag %q", first.Code, tag)
	}
	tests := []struct {
		name string
		inm  string
		want int
	}{
		{"the same tag", tag, http.StatusNotModified},
		{"the tag in a list", `"x", ` + tag, http.StatusNotModified},
		{"another tag", `W/"other.1"`, http.StatusOK},
	}
	for _, tt := range tests {
		if rec := get(tt.inm); rec.Code != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, rec.Code, tt.want)
		}
	}
	// A copy that changes nothing keeps the tag; a change gives a new one.
	cur.Store(withSession(cur.Load(), "A", func(*model.Node) bool { return true }))
	if rec := get(tag); rec.Code != http.StatusNotModified {
		t.Errorf("after a copy of an unchanged session: %d, want 304", rec.Code)
	}
	cur.Store(withSession(cur.Load(), "B", func(n *model.Node) bool { n.State = model.StateFinished; return true }))
	rec := get(tag)
	if rec.Code != http.StatusOK || rec.Header().Get("ETag") == tag {
		t.Errorf("after a change: %d with ETag %q, want 200 with a new tag", rec.Code, rec.Header().Get("ETag"))
	}
}

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
