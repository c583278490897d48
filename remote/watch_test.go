package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/serve"
)

// withState is snap with its session id a copy in state st.
func withState(snap *model.Snapshot, id string, st model.State) *model.Snapshot {
	next := *snap
	next.ByID = map[string]*model.Node{}
	for nid, n := range snap.Nodes() {
		next.ByID[nid] = n
	}
	next.Sessions = slices.Clone(snap.Sessions)
	for i, s := range next.Sessions {
		if s.ID == id {
			c := *s
			c.State = st
			next.Sessions[i], next.ByID[id] = &c, &c
		}
	}
	return &next
}

// liveHost is a serve whose snapshot a test changes, whose watch
// connections it can drop, and whose server it can restart (a new run).
type liveHost struct {
	cur     atomic.Pointer[model.Snapshot]
	srv     atomic.Pointer[serve.Server]
	ts      *httptest.Server
	mu      sync.Mutex
	drops   []context.CancelFunc
	watches atomic.Int32 // watch connections opened
	polls   atomic.Int32 // snapshot bodies sent whole (200)
	noWatch bool         // answer 404 on the watch path, as a serve before it
}

func newLiveHost(t *testing.T, snap *model.Snapshot, noWatch bool) *liveHost {
	h := &liveHost{noWatch: noWatch}
	h.cur.Store(snap)
	h.restart()
	h.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == serve.WatchPath {
			if h.noWatch {
				http.NotFound(w, r)
				return
			}
			h.watches.Add(1)
			ctx, cancel := context.WithCancel(r.Context())
			h.mu.Lock()
			h.drops = append(h.drops, cancel)
			h.mu.Unlock()
			r = r.WithContext(ctx)
		}
		rec := &statusRecorder{ResponseWriter: w}
		h.srv.Load().Handler().ServeHTTP(rec, r)
		if r.URL.Path == serve.SnapshotPath && rec.code == http.StatusOK {
			h.polls.Add(1)
		}
	}))
	t.Cleanup(func() { h.drop(); h.ts.Close() })
	return h
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) { r.code = code; r.ResponseWriter.WriteHeader(code) }
func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}
func (r *statusRecorder) Flush()                      { r.ResponseWriter.(http.Flusher).Flush() }
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (h *liveHost) restart() {
	h.srv.Store(serve.New(serve.Options{Snapshot: h.cur.Load, Heartbeat: 50 * time.Millisecond}))
}

// set publishes a new snapshot, as the live engine's Follow would.
func (h *liveHost) set(snap *model.Snapshot) {
	h.cur.Store(snap)
	h.srv.Load().Sync(snap)
}

// drop cuts every watch connection open.
func (h *liveHost) drop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.drops {
		c()
	}
	h.drops = nil
}

// fleetRecorder runs a fleet and keeps what its updates say.
type fleetRecorder struct {
	mu    sync.Mutex
	trans []model.Transition
	last  model.Update
	n     int
}

func runFleet(t *testing.T, hosts []Host) *fleetRecorder {
	t.Helper()
	f := NewFleet(Options{Hosts: hosts, Every: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	rec := &fleetRecorder{}
	done := make(chan struct{})
	go f.Run(ctx)
	go func() {
		defer close(done)
		for u := range f.Updates() {
			rec.mu.Lock()
			rec.trans = append(rec.trans, u.Transitions...)
			rec.last, rec.n = u, rec.n+1
			rec.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return rec
}

// waitFor waits until cond holds of the recorder, or fails.
func (r *fleetRecorder) waitFor(t *testing.T, what string, cond func(*fleetRecorder) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		ok := cond(r)
		r.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t.Fatalf("%s: not within 5 s; transitions %v, hosts %+v", what, r.trans, r.last.Hosts)
}

func stateOf(id string, want model.State) func(*fleetRecorder) bool {
	return func(r *fleetRecorder) bool {
		if r.last.Snapshot == nil {
			return false
		}
		n := r.last.Snapshot.Node(id)
		return n != nil && n.State == want
	}
}

// A fleet follows each host's watch: a change on the host reaches the
// fleet's updates without a poll of the whole snapshot, and a watch
// resumed after its connection dropped loses no transition and repeats
// none.
func TestFleetFollowsTheWatchAndResumesWithoutLossOrRepeat(t *testing.T) {
	h := newLiveHost(t, treeSnapshot(t), false)
	rec := runFleet(t, []Host{{Name: "h", URL: h.ts.URL + serve.SnapshotPath}})
	rec.waitFor(t, "the first snapshot", stateOf("h/B", model.StateDead))

	states := []model.State{model.StateFinished, model.StateRunning, model.StateDead, model.StateFinished, model.StateRunning}
	for i, st := range states {
		if i == 2 {
			h.drop() // the changes 2 and 3 happen while the watch is cut
		}
		h.set(withState(h.cur.Load(), "B", st))
		if i == 1 || i == 3 || i == 4 {
			rec.waitFor(t, fmt.Sprintf("change %d (B %s)", i, st), stateOf("h/B", st))
		}
	}
	var got []string
	rec.mu.Lock()
	for _, tr := range rec.trans {
		if tr.ID == "h/B" {
			got = append(got, string(tr.From)+">"+string(tr.To))
		}
	}
	rec.mu.Unlock()
	want := []string{"dead>finished", "finished>running", "running>dead", "dead>finished", "finished>running"}
	if !slices.Equal(got, want) {
		t.Errorf("h/B's transitions %v, want %v (each once, none lost)", got, want)
	}
	if h.watches.Load() < 2 {
		t.Errorf("%d watch connections, want a second after the drop", h.watches.Load())
	}
	if n := h.polls.Load(); n != 0 {
		t.Errorf("the whole snapshot was polled %d times beside the watch", n)
	}
}

// A server restarted under a watcher (a new run: its revisions unknown)
// is read again whole: the fleet shows its state, not the old one's.
func TestFleetRereadsARestartedServerWhole(t *testing.T) {
	h := newLiveHost(t, treeSnapshot(t), false)
	rec := runFleet(t, []Host{{Name: "h", URL: h.ts.URL + serve.SnapshotPath}})
	rec.waitFor(t, "the first snapshot", stateOf("h/B", model.StateDead))
	h.cur.Store(withState(h.cur.Load(), "B", model.StateFinished))
	h.restart()
	h.drop()
	rec.waitFor(t, "the restarted server's state", stateOf("h/B", model.StateFinished))
	if h.watches.Load() < 2 {
		t.Errorf("%d watch connections, want a new one", h.watches.Load())
	}
}

// A host without a watch stream (a serve before it) is polled, and re-read
// whole only when its ETag changes.
func TestFleetPollsAHostWithoutAWatch(t *testing.T) {
	h := newLiveHost(t, treeSnapshot(t), true)
	rec := runFleet(t, []Host{{Name: "h", URL: h.ts.URL + serve.SnapshotPath}})
	rec.waitFor(t, "the first poll", stateOf("h/B", model.StateDead))
	time.Sleep(200 * time.Millisecond) // ten polls of a quiet host
	if n := h.polls.Load(); n != 1 {
		t.Errorf("a quiet host's snapshot was sent whole %d times, want once (then 304)", n)
	}
	h.set(withState(h.cur.Load(), "B", model.StateFinished))
	rec.waitFor(t, "the change, polled", stateOf("h/B", model.StateFinished))
}

// A silent watch (no heartbeat) is dropped as dead (and asked again); the
// host is marked unreachable and keeps its last state on screen.
func TestFleetDropsASilentWatch(t *testing.T) {
	snap := treeSnapshot(t)
	line := firstLine(t, snap)
	stall := make(chan struct{})
	var conns atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != serve.WatchPath {
			http.NotFound(w, r)
			return
		}
		if conns.Add(1) > 1 {
			http.Error(w, "gone", http.StatusServiceUnavailable)
			return
		}
		w.Write(line)
		w.(http.Flusher).Flush()
		select {
		case <-stall:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(stall); ts.Close() })
	f := NewFleet(Options{Hosts: []Host{{Name: "h", URL: ts.URL + serve.SnapshotPath}}, Every: 20 * time.Millisecond, DeadAfter: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Run(ctx)
	deadline := time.After(5 * time.Second)
	for {
		select {
		case u := <-f.Updates():
			if !u.Hosts[0].Reachable && conns.Load() > 1 {
				if u.Snapshot.Node("h/B") == nil {
					t.Fatal("the silent host's last state was dropped")
				}
				return
			}
		case <-deadline:
			t.Fatal("a silent watch was not dropped")
		}
	}
}

// firstLine is the snapshot event a serve of snap sends first.
func firstLine(t *testing.T, snap *model.Snapshot) []byte {
	t.Helper()
	srv := serve.New(serve.Options{Snapshot: func() *model.Snapshot { return snap }})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+serve.WatchPath, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b []byte
	buf := make([]byte, 64<<10)
	for !strings.HasSuffix(string(b), "\n") {
		n, err := resp.Body.Read(buf)
		b = append(b, buf[:n]...)
		if err != nil {
			break
		}
	}
	return b
}

// A hostile watch stream costs the fleet bounded memory and never a crash:
// each event is held to the caps, the stream to its bytes a minute;
// what is no event marks the host with why; a redirect to another origin
// is not followed, so the token stays with the host named.
func TestFleetHoldsAHostileWatchToTheCaps(t *testing.T) {
	snap := treeSnapshot(t)
	line := firstLine(t, snap)
	endless := func(chunk string) func(w http.ResponseWriter, r *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			b := []byte(strings.Repeat(chunk, 4096))
			for r.Context().Err() == nil {
				if _, err := w.Write(b); err != nil {
					return
				}
			}
		}
	}
	other := newTokenRecorder(t, snap)
	tests := []struct {
		name    string
		handle  func(w http.ResponseWriter, r *http.Request)
		wantErr string
	}{
		{"an endless string", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"type":"snapshot","rev":"`))
			endless("x")(w, r)
		}, "cap"},
		{"an event over the byte cap", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"type":"snapshot","rev":"1","nodes":[`))
			endless(`{"id":"n"},`)(w, r)
		}, "cap"},
		{"endless heartbeats past the minute's bytes", func(w http.ResponseWriter, r *http.Request) {
			w.Write(line)
			endless(`{"type":"heartbeat","rev":"x.1"}`+"\n")(w, r)
		}, "a minute"},
		{"invalid JSON", func(w http.ResponseWriter, r *http.Request) {
			w.Write(line)
			w.Write([]byte("{not json}\n"))
		}, "invalid character"},
		{"a diff before any snapshot", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"type":"diff","rev":"x.2","nodes":[{"id":"n","kids":[]}]}` + "\n"))
		}, "before any snapshot"},
		{"an event of an unknown type", func(w http.ResponseWriter, r *http.Request) {
			w.Write(line)
			w.Write([]byte(`{"type":"\u001b[2J","rev":"x.2"}` + "\n"))
		}, "unknown type"},
		{"a redirect to another origin", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+serve.WatchPath, http.StatusFound)
		}, "another origin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != serve.WatchPath {
					http.Error(w, "no", http.StatusServiceUnavailable)
					return
				}
				tt.handle(w, r)
			}))
			t.Cleanup(ts.Close)
			f := NewFleet(Options{Hosts: []Host{{Name: "h", URL: ts.URL + serve.SnapshotPath}}, Token: "secret",
				Every: time.Second, MaxBody: 64 << 10, MaxNodes: 100})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go f.Run(ctx)
			deadline := time.After(10 * time.Second)
			for {
				select {
				case u := <-f.Updates():
					if h := u.Hosts[0]; !h.Reachable && strings.Contains(h.Err, tt.wantErr) {
						if got, _ := other.got.Load().(string); got != "" {
							t.Errorf("the other origin got Authorization %q", got)
						}
						return
					}
				case <-deadline:
					t.Fatalf("the host was not marked with %q", tt.wantErr)
				}
			}
		})
	}
}

// A watch stream's events are read however the host spaces them: one
// indented over many lines (CRLF), the next right after it with no break
// between; each event is one line only as serve writes it.
func TestFleetReadsWatchEventsHoweverSpaced(t *testing.T) {
	line := firstLine(t, treeSnapshot(t))
	var ev serve.WatchEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		t.Fatal(err)
	}
	var b serve.WatchNode
	for _, n := range ev.Nodes {
		if n.ID == "B" {
			b = n
		}
	}
	if b.State != model.StateDead {
		t.Fatalf("node B: %+v", b)
	}
	b.State = model.StateFinished
	diff, err := json.Marshal(serve.WatchEvent{Type: serve.EventDiff, Rev: ev.Rev + "1", Nodes: []serve.WatchNode{b}})
	if err != nil {
		t.Fatal(err)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, bytes.TrimSpace(line), "\r\n", "  "); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != serve.WatchPath {
			http.Error(w, "no", http.StatusServiceUnavailable)
			return
		}
		w.Write(indented.Bytes())
		w.Write(diff)
		w.Write([]byte(" \r\n\t"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(ts.Close)
	rec := runFleet(t, []Host{{Name: "h", URL: ts.URL + serve.SnapshotPath}})
	rec.waitFor(t, "the diff after the indented snapshot", stateOf("h/B", model.StateFinished))
}

// The fleet publishes a change after a quiet moment at once, and gathers
// the changes that follow within coalesce of its last update into one at
// its end: never two updates within coalesce, and a lone change waits for
// nothing (it waited the whole 200 ms before).
func TestFleetPublishesALoneChangeAtOnceAndGathersTheRest(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type step struct {
		change  bool // a change taken at ms; else the update published at ms
		ms      int
		arm     bool
		waitsMS int // how long the update armed waits
	}
	for _, tt := range []struct {
		name  string
		steps []step
	}{
		{"a change on a quiet fleet", []step{{true, 1000, true, 0}}},
		{"changes while one is due", []step{{true, 1000, true, 0}, {true, 1000, false, 0}, {false, 1001, false, 0},
			{true, 1050, true, 151}, {true, 1100, false, 0}, {true, 1190, false, 0}, {false, 1201, false, 0}}},
		{"a change just after an update", []step{{false, 500, false, 0}, {true, 510, true, 190}}},
		{"a change once the update is old", []step{{false, 500, false, 0}, {true, 700, true, 0}, {false, 700, false, 0}, {true, 1500, true, 0}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var g gatherer
			for i, s := range tt.steps {
				if !s.change {
					g.published(at(s.ms))
					continue
				}
				wait, arm := g.changed(at(s.ms))
				if arm != s.arm || arm && wait != time.Duration(s.waitsMS)*time.Millisecond {
					t.Errorf("step %d, a change at %d ms: armed %v, waits %s; want %v, %d ms", i, s.ms, arm, wait, s.arm, s.waitsMS)
				}
			}
		})
	}
}
