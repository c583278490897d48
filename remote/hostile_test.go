package remote

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/serve"
)

// A host one of whose nodes has a started that is no number (a store's
// +Inf) is reachable, its node shown with started unknown: serve writes
// it as null, where it used to answer 200 with an empty body.
func TestFleetShowsAHostWhoseNodeHasAnInfiniteStarted(t *testing.T) {
	snap := treeSnapshot(t)
	snap.Node("A").Heartbeat.Started = math.Inf(1)
	srv := httptest.NewServer(serve.New(serve.Options{Snapshot: func() *model.Snapshot { return snap }, Now: func() time.Time { return fixedNow }}).Handler())
	defer srv.Close()
	hosts, _ := ParseHosts([]string{"host-a=" + srv.URL})
	r := NewFleet(Options{Hosts: hosts, Now: func() time.Time { return fixedNow }}).Poll(context.Background())
	if !r.Hosts[0].Reachable || r.Hosts[0].Nodes != 7 {
		t.Fatalf("host %+v: want reachable with 7 nodes", r.Hosts[0])
	}
	n := r.Snapshot.Node("host-a/A")
	if n == nil || n.Heartbeat == nil || n.Heartbeat.Started != 0 || n.Heartbeat.PID != 101 {
		t.Errorf("host-a/A: %+v, want pid 101 and started unknown (0)", n)
	}
}

// tokenRecorder is a server that serves a snapshot (without asking for a
// token) and records every Authorization header it is sent.
type tokenRecorder struct {
	*httptest.Server
	requests atomic.Int32
	got      atomic.Value // string: the last Authorization seen
}

func newTokenRecorder(t *testing.T, snap *model.Snapshot) *tokenRecorder {
	t.Helper()
	tr := &tokenRecorder{}
	h := serve.New(serve.Options{Snapshot: func() *model.Snapshot { return snap }}).Handler()
	tr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.requests.Add(1)
		if a := r.Header.Get("Authorization"); a != "" {
			tr.got.Store(a)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(tr.Close)
	return tr
}

// The bearer token goes only to the origin named (scheme, host, port): a
// redirect to another port of the same host, or from https to http on it,
// is not followed, and the host is marked with why; a redirect within the
// origin is followed, the token with it.
func TestFleetSendsTheTokenOnlyToTheOriginNamed(t *testing.T) {
	snap := treeSnapshot(t)
	redirectTo := func(target string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target, http.StatusFound)
		})
	}
	tests := []struct {
		name string
		// start makes the host named and the server a redirect may reach.
		start        func(t *testing.T, other *tokenRecorder) (url string, client *http.Client)
		reachable    bool
		otherGetsTok bool
	}{
		{name: "to another port of the same host: refused", start: func(t *testing.T, other *tokenRecorder) (string, *http.Client) {
			s := httptest.NewServer(redirectTo(other.URL + serve.SnapshotPath))
			t.Cleanup(s.Close)
			return s.URL, nil
		}},
		{name: "from https to http on the same host: refused", start: func(t *testing.T, other *tokenRecorder) (string, *http.Client) {
			s := httptest.NewTLSServer(redirectTo(other.URL + serve.SnapshotPath))
			t.Cleanup(s.Close)
			return s.URL, s.Client()
		}},
		{name: "to the same host by another name (localhost): refused", start: func(t *testing.T, other *tokenRecorder) (string, *http.Client) {
			s := httptest.NewServer(redirectTo(strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + serve.SnapshotPath))
			t.Cleanup(s.Close)
			return s.URL, nil
		}},
		{name: "within the origin: followed, with the token", reachable: true, otherGetsTok: true,
			start: func(t *testing.T, other *tokenRecorder) (string, *http.Client) {
				// The host named is the recorder itself, at a path that
				// redirects to its snapshot.
				mux := http.NewServeMux()
				mux.Handle("/old", redirectTo(serve.SnapshotPath))
				mux.Handle("/", other.Config.Handler)
				other.Config.Handler = mux
				return other.URL + "/old", nil
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := newTokenRecorder(t, snap)
			named, client := tt.start(t, other)
			f := NewFleet(Options{Hosts: []Host{{Name: "h", URL: named}}, Token: "secret", Client: client, Now: func() time.Time { return fixedNow }})
			r := f.Poll(context.Background())
			got, _ := other.got.Load().(string)
			if gotTok := got == "Bearer secret"; gotTok != tt.otherGetsTok {
				t.Errorf("the other server got Authorization %q (%d requests)", got, other.requests.Load())
			}
			if !tt.otherGetsTok && other.requests.Load() != 0 {
				t.Errorf("the redirect was followed: %d requests", other.requests.Load())
			}
			if h := r.Hosts[0]; h.Reachable != tt.reachable {
				t.Fatalf("host %+v, want reachable %v", h, tt.reachable)
			}
			if h := r.Hosts[0]; !tt.reachable && !strings.Contains(h.Err, "another origin") {
				t.Errorf("host error %q does not say the redirect went to another origin", h.Err)
			}
		})
	}
	// The client given is not changed: only the fleet's copy refuses.
	c := &http.Client{}
	NewFleet(Options{Client: c})
	if c.CheckRedirect != nil {
		t.Error("NewFleet changed the caller's client")
	}
}

// hostile is a server that answers every request with body (gzipped as
// sent when gz), counting the requests.
type hostile struct {
	*httptest.Server
	requests atomic.Int32
}

func newHostile(t *testing.T, body []byte, gz bool) *hostile {
	t.Helper()
	h := &hostile{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if gz {
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.Write(body)
	}))
	t.Cleanup(h.Close)
	return h
}

// gzipped is b compressed.
func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return z.Bytes()
}

// minimalDoc is a v1 document of sessions minimal nodes, each with per
// children, padded with spaces inside its object to pad bytes when pad is
// larger.
func minimalDoc(sessions, per, pad int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"schema": "dispatchtop/v1", "summary": {"nodes": ` + fmt.Sprint(sessions*(1+per)) + `}, "sessions": [`)
	for s := range sessions {
		if s > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id": "s%d", "children": [`, s)
		for c := range per {
			if c > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id": "s%d/c%d", "children": []}`, s, c)
		}
		b.WriteString(`]}`)
	}
	b.WriteString(`]`)
	if pad > b.Len()+1 {
		b.WriteString(strings.Repeat(" ", pad-b.Len()-1))
	}
	b.WriteString(`}`)
	return b.Bytes()
}

// A host's answer is held to the caps: bytes counted decompressed (a gzip
// bomb meets the cap as a plain answer does) and nodes counted as they
// are read, at any depth; an answer at a cap is read, one past it marks
// the host with an error naming the cap, never "unexpected EOF".
func TestFleetHoldsAHostsAnswerToTheCaps(t *testing.T) {
	const maxBody, maxNodes = 256 << 10, 1000
	bigString := []byte(`{"schema": "dispatchtop/v1", "roots": ["` + strings.Repeat("a", 1<<20) + `"]}`)
	tests := []struct {
		name  string
		body  []byte
		gz    bool
		nodes int    // for an answer read: the nodes of the forest
		err   string // for one refused: what the host's error says
	}{
		{name: "one string longer than the cap", body: bigString, err: "the snapshot exceeds the 256 KiB cap (counted decompressed)"},
		{name: "a gzip bomb: 4 MiB of spaces in a few KiB", body: gzipped(t, append([]byte(`{"schema": "dispatchtop/v1", "x": 1`), bytes.Repeat([]byte(" "), 4<<20)...)), gz: true,
			err: "the snapshot exceeds the 256 KiB cap (counted decompressed)"},
		{name: "exactly the cap, gzipped: read", body: gzipped(t, minimalDoc(2, 3, maxBody)), gz: true, nodes: 8},
		{name: "one byte past the cap: refused", body: minimalDoc(2, 3, maxBody+1), err: "exceeds the 256 KiB cap"},
		{name: "1,000 nodes, the cap: read", body: minimalDoc(100, 9, 0), nodes: 1000},
		{name: "1,001 nodes in sessions: refused", body: minimalDoc(1001, 0, 0), err: "the snapshot exceeds the 1,000-node cap"},
		{name: "1,001 nodes in one session: refused", body: minimalDoc(1, 1000, 0), err: "the snapshot exceeds the 1,000-node cap"},
		{name: "nodes under keys spelled as encoding/json matches them: counted", err: "1,000-node cap",
			body: []byte(`{"schema": "dispatchtop/v1", "SESSIONS": [{"id": "s", "\u0063hildren": [` + strings.Repeat(`{"id": "c"},`, 1000) + `{"id": "c"}]}]}`)},
		{name: "objects elsewhere are no nodes", nodes: 1,
			body: []byte(`{"schema": "dispatchtop/v1", "problems": [` + strings.Repeat(`{"path": "p", "error": "e"},`, 2000) + `{"path": "p", "error": "\"children\": ["}], "sessions": [{"id": "s", "extra": {"children": [{}]}, "children": []}]}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newHostile(t, tt.body, tt.gz)
			f := NewFleet(Options{Hosts: []Host{{Name: "h", URL: srv.URL}}, MaxBody: maxBody, MaxNodes: maxNodes,
				Timeout: time.Minute, Now: func() time.Time { return fixedNow }})
			r := f.Poll(context.Background())
			h := r.Hosts[0]
			if tt.err == "" {
				if !h.Reachable {
					t.Fatalf("host unreachable: %s", h.Err)
				}
				if got := r.Snapshot.NodeCount() - 1; got != tt.nodes {
					t.Errorf("%d nodes, want %d", got, tt.nodes)
				}
				return
			}
			if h.Reachable || !strings.Contains(h.Err, tt.err) || strings.Contains(h.Err, "EOF") {
				t.Errorf("host reachable %v, error %q; want %q", h.Reachable, h.Err, tt.err)
			}
			if !strings.Contains(r.Snapshot.Node("h").Reason, tt.err) {
				t.Errorf("the host's row says %q", r.Snapshot.Node("h").Reason)
			}
		})
	}
}

// The default caps are the ones SPEC §4.2 and §8 name, and their errors
// say which was met.
func TestDefaultCaps(t *testing.T) {
	if c := capsOf(DefaultMaxBody, DefaultMaxNodes); c != (caps{body: 128 << 20, nodes: 150_000, values: 6_000_000, str: 8 << 20}) {
		t.Errorf("caps %+v", c)
	}
	for _, tt := range []struct {
		err  *CapError
		want string
	}{
		{&CapError{What: capBytes, Cap: DefaultMaxBody}, "the snapshot exceeds the 128 MiB cap (counted decompressed)"},
		{&CapError{What: capNodes, Cap: DefaultMaxNodes}, "the snapshot exceeds the 150,000-node cap"},
		{&CapError{What: capValues, Cap: 6_000_000}, "the snapshot exceeds the 6,000,000-value cap"},
		{&CapError{What: capString, Cap: 8 << 20}, "the snapshot has a string over the 8 MiB cap"},
		{&CapError{What: capBytes, Cap: 1500}, "the snapshot exceeds the 1500-byte cap (counted decompressed)"},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%q, want %q", got, tt.want)
		}
	}
}

// A host whose answer cannot be read is asked again after 4 s, then 8,
// 16, 32 and 60 s at most, not at every 2 s poll at full cost; its row
// keeps the error and says when it is asked next. A good answer ends the
// wait; a host that does not answer at all is asked at every poll.
func TestFleetBacksOffAHostWhoseAnswerCannotBeRead(t *testing.T) {
	var good atomic.Bool
	var requests atomic.Int32
	snap := treeSnapshot(t)
	api := serve.New(serve.Options{Snapshot: func() *model.Snapshot { return snap }}).Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if good.Load() {
			api.ServeHTTP(w, r)
			return
		}
		w.Write(minimalDoc(20, 0, 0))
	}))
	defer srv.Close()
	clock := fixedNow
	// The clock moves on while a poll runs, as a real one does.
	tick := func() time.Time { clock = clock.Add(time.Millisecond); return clock }
	f := NewFleet(Options{Hosts: []Host{{Name: "h", URL: srv.URL + serve.SnapshotPath}}, MaxNodes: 10, Now: tick})
	asked := func(at time.Duration) bool {
		t.Helper()
		clock = fixedNow.Add(at)
		before := requests.Load()
		r := f.Poll(context.Background())
		if !good.Load() && (r.Hosts[0].Reachable || !strings.Contains(r.Hosts[0].Err, "10-node cap")) {
			t.Fatalf("at %v: host %+v", at, r.Hosts[0])
		}
		if good.Load() && requests.Load() > before && !r.Hosts[0].Reachable {
			t.Errorf("at %v: host %+v after a good answer", at, r.Hosts[0])
		}
		return requests.Load() > before
	}
	// Polled every 2 s: asked at 0, then 4 s later, 8, 16, 32, 60, 60.
	want := map[time.Duration]bool{0: true, 4 * time.Second: true, 12 * time.Second: true, 28 * time.Second: true,
		60 * time.Second: true, 120 * time.Second: true, 180 * time.Second: true}
	for at := time.Duration(0); at <= 190*time.Second; at += 2 * time.Second {
		if got := asked(at); got != want[at] {
			t.Errorf("at %v: asked %v, want %v", at, got, want[at])
		}
	}
	clock = fixedNow.Add(190 * time.Second)
	if reason := f.Poll(context.Background()).Snapshot.Node("h").Reason; !strings.Contains(reason, "asked again at 12:04:00") {
		t.Errorf("the host's row says %q, want when it is asked again (12:04:00)", reason)
	}

	// Good again: asked at its time, then at every poll.
	good.Store(true)
	for at := 192 * time.Second; at <= 250*time.Second; at += 2 * time.Second {
		got := asked(at)
		if at < 240*time.Second && got {
			t.Errorf("at %v: asked before its time", at)
		}
		if at >= 240*time.Second && !got {
			t.Errorf("at %v: not asked after a good answer", at)
		}
	}

	// A host that does not answer costs nothing: asked at every poll.
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	g := NewFleet(Options{Hosts: []Host{{Name: "d", URL: downURL}}, Now: func() time.Time { return clock }})
	for range 3 {
		if r := g.Poll(context.Background()); r.Hosts[0].Reachable || strings.Contains(r.Snapshot.Node("d").Reason, "asked again") {
			t.Errorf("a host not answering: %+v, %q", r.Hosts[0], r.Snapshot.Node("d").Reason)
		}
		clock = clock.Add(2 * time.Second)
	}
}

// Decode, the API, holds the default node cap (the byte cap's default is
// TestDefaultCaps's; reading 128 MiB is a benchmark's work, as is
// decoding 150,000 nodes: the caps' edges are TestFleetHoldsAHostsAnswerToTheCaps's).
func TestDecodeHoldsTheDefaultNodeCap(t *testing.T) {
	// The smallest node there is: {}.
	body := `{"schema": "dispatchtop/v1", "sessions": [{"children": [` + strings.Repeat(`{},`, DefaultMaxNodes-1) + `{}]}]}`
	if _, err := Decode(strings.NewReader(body)); err == nil || !strings.Contains(err.Error(), "150,000-node cap") {
		t.Errorf("error %v, want the node cap", err)
	}
}

// What is no node is held too: one string longer than its cap (8 MiB: no
// file a document quotes is read past 1 MiB), or more values than 40 a
// node of the node cap (a list of a million numbers decodes to more than
// its bytes), is refused as it is read; at the caps, the answer is read.
// (Small caps here; the defaults are TestDefaultCaps's.)
func TestDecodeHoldsTheStringAndValueCaps(t *testing.T) {
	c := caps{body: 1 << 20, nodes: 100, values: 1000, str: 1024}
	doc := func(member string) io.Reader {
		return strings.NewReader(`{"schema": "dispatchtop/v1", "x": ` + member + `}`)
	}
	values := func(n int) string { return "[" + strings.Repeat("0,", n-1) + "0]" } // n+1 values: the list and its n
	tests := []struct {
		name string
		r    io.Reader
		err  string
	}{
		{"a string at the cap: read", doc(`"` + strings.Repeat("a", 1024) + `"`), ""},
		{"a string one byte longer: refused", doc(`"` + strings.Repeat("a", 1025) + `"`), "the snapshot has a string over the 1 KiB cap"},
		{"escapes count as written", doc(`"` + strings.Repeat(`\n`, 512) + `a"`), "the snapshot has a string over the 1 KiB cap"},
		{"values at the cap: read", doc(values(1000 - 2)), ""},
		{"one value more: refused", doc(values(1000 - 1)), "the snapshot exceeds the 1,000-value cap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decode(tt.r, c)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || err.Error() != tt.err) {
				t.Errorf("error %v, want %q", err, tt.err)
			}
		})
	}
}
