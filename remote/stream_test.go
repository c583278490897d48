package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/serve"
)

// recordedStream is a real serve's watch stream of a generated tree, as
// a fleet reads it: its snapshot event, then diff events each of which
// flips the state of some of its nodes (running <-> finished), as a
// fleet churning does.
type recordedStream struct {
	nodes int
	lines [][]byte // the snapshot's, then the diffs'
}

// recordStream generates sessions × per nodes, scans them, and records
// diffs events of flips nodes each from a serve.
func recordStream(tb testing.TB, sessions, per, diffs, flips int) recordedStream {
	tb.Helper()
	root := filepath.Join(tb.TempDir(), ".sessions")
	now := time.Now()
	if err := treegen.Generate(root, sessions, per, 3, now); err != nil {
		tb.Fatal(err)
	}
	snap, err := scanner.Scan(scanner.Options{Roots: []string{root}, Probe: liveness.SystemProbe{},
		Thresholds: model.DefaultThresholds(), Now: func() time.Time { return now }})
	if err != nil {
		tb.Fatal(err)
	}
	var cur atomic.Pointer[model.Snapshot]
	cur.Store(snap)
	srv := serve.New(serve.Options{Snapshot: cur.Load, Heartbeat: time.Hour})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+serve.WatchPath, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReaderSize(resp.Body, 1<<20)
	line := func() []byte {
		b, err := r.ReadBytes('\n')
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	rec := recordedStream{nodes: snap.NodeCount(), lines: [][]byte{line()}}
	rng := rand.New(rand.NewPCG(1, 2))
	ids := make([]string, 0, snap.NodeCount())
	for id := range snap.Nodes() {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for range diffs {
		flipped := map[string]bool{}
		for len(flipped) < flips {
			flipped[ids[rng.IntN(len(ids))]] = true
		}
		snap = flip(snap, flipped)
		cur.Store(snap)
		srv.Sync(snap)
		rec.lines = append(rec.lines, line())
	}
	return rec
}

// flip is snap with the nodes of ids running if they were not, finished
// if they were: their sessions copied, the others shared.
func flip(snap *model.Snapshot, ids map[string]bool) *model.Snapshot {
	next := &model.Snapshot{GeneratedAt: snap.GeneratedAt, Roots: snap.Roots, RootSources: snap.RootSources,
		Thresholds: snap.Thresholds, Problems: snap.Problems, Watch: snap.Watch, ByID: map[string]*model.Node{}}
	var cp func(n, parent *model.Node) *model.Node
	cp = func(n, parent *model.Node) *model.Node {
		c := *n
		c.Parent = parent
		if ids[c.ID] {
			if c.State == model.StateRunning {
				c.State, c.Flags, c.Reason = model.StateFinished, nil, "completed"
			} else {
				c.State, c.Flags, c.Reason = model.StateRunning, nil, "alive"
			}
		}
		c.Children = make([]*model.Node, len(n.Children))
		for i, k := range n.Children {
			c.Children[i] = cp(k, &c)
		}
		return &c
	}
	for _, s := range snap.Sessions {
		touched := false
		s.Walk(func(n *model.Node) { touched = touched || ids[n.ID] })
		if touched {
			s = cp(s, nil)
		}
		next.Sessions = append(next.Sessions, s)
		s.Walk(func(n *model.Node) { next.ByID[n.ID] = n })
	}
	return next
}

// events decodes the recorded lines as the fleet's follower does.
func (r recordedStream) events(tb testing.TB) []*serve.WatchEvent {
	evs := make([]*serve.WatchEvent, len(r.lines))
	for i, l := range r.lines {
		evs[i] = &serve.WatchEvent{}
		if err := json.Unmarshal(l, evs[i]); err != nil {
			tb.Fatal(err)
		}
	}
	return evs
}
