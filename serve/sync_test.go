package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// memForest is a forest of sessions sessions of 10 nodes (a session, 3
// children, 2 grandchildren each), indexed as a watcher's snapshot is.
func memForest(sessions int) *model.Snapshot {
	snap := &model.Snapshot{Roots: []string{"/r/.sessions"}, RootSources: []string{"native"},
		Thresholds: model.DefaultThresholds(), ByID: map[string]*model.Node{}}
	beat := time.Now().Add(-time.Minute)
	add := func(id string, parent *model.Node) *model.Node {
		n := &model.Node{ID: id, Root: "/r/.sessions", InfraDir: "/r/.sessions/" + id,
			HasHeartbeat: true, BeatMtime: beat, State: model.StateRunning, Parent: parent}
		if parent != nil {
			n.ParentID = parent.ID
			parent.Children = append(parent.Children, n)
		}
		snap.ByID[id] = n
		return n
	}
	for s := range sessions {
		sess := add(fmt.Sprintf("s%05d", s), nil)
		for c := range 3 {
			kid := add(fmt.Sprintf("%s/c/%d", sess.ID, c), sess)
			for g := range 2 {
				add(fmt.Sprintf("%s/g/%d", kid.ID, g), kid)
			}
		}
		snap.Sessions = append(snap.Sessions, sess)
	}
	snap.IndexSessions()
	return snap
}

// syncBytes is what a hub's sync allocates on average over rounds
// publishes that renew 10 sessions of forest, one node changed in each.
func syncBytes(t *testing.T, forest *model.Snapshot, rounds int) (float64, int) {
	t.Helper()
	h := newHub(time.Now)
	h.sync(forest)
	cur := forest
	var total uint64
	var ms runtime.MemStats
	for i := range rounds {
		renew := make([]int, 10)
		for k := range renew {
			renew[k] = (i*10 + k*7) % len(forest.Sessions)
		}
		cur = churned(cur, renew, time.Second)
		before := h.rev
		runtime.ReadMemStats(&ms)
		at := ms.TotalAlloc
		h.sync(cur)
		runtime.ReadMemStats(&ms)
		total += ms.TotalAlloc - at
		if h.rev != before+1 {
			t.Fatalf("round %d: no diff event for 10 changed nodes", i)
		}
	}
	return float64(total) / float64(rounds), len(h.members)
}

// A publish that renews a few sessions costs the hub those sessions: what
// a sync allocates does not grow with the sessions the forest shares with
// the last snapshot (it rebuilt maps of every session and counted every
// node for the head at each sync).
func TestSyncCostsTheSessionsItRenewsNotTheForest(t *testing.T) {
	small, _ := syncBytes(t, memForest(50), 20)
	large, members := syncBytes(t, memForest(2000), 20)
	if members != 2000 {
		t.Fatalf("the hub holds %d sessions, want 2000", members)
	}
	t.Logf("a sync of 10 renewed sessions allocates %.0f B among 50 sessions, %.0f B among 2,000", small, large)
	if large > small*1.25+2048 {
		t.Errorf("a sync among 2,000 sessions allocates %.0f B, among 50 %.0f B: it grows with the forest", large, small)
	}
}

// lastEvent is the hub's newest diff event.
func lastEvent(t *testing.T, h *hub) WatchEvent {
	t.Helper()
	var ev WatchEvent
	if err := json.Unmarshal(h.ring[len(h.ring)-1].line, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// The sessions of two snapshots are walked side by side: a diff sends the
// nodes of a session added and a node changed in a renewed one, removes
// every id of a session gone, and names the new order of the sessions.
func TestSyncDiffNamesTheSessionsRenewedAddedAndGone(t *testing.T) {
	ids := func(n *model.Node) (out []string) {
		n.Walk(func(n *model.Node) { out = append(out, n.ID) })
		return out
	}
	other := memForest(6)
	for _, tc := range []struct {
		name        string
		edit        func(s []*model.Node) []*model.Node
		nodes, gone []string
		order       bool
	}{
		{name: "a renewed session sends its changed node",
			edit: func(s []*model.Node) []*model.Node {
				c := copyTree(s[2], nil)
				c.Children[0].BeatMtime = c.Children[0].BeatMtime.Add(time.Second)
				s[2] = c
				return s
			},
			nodes: []string{"s00002/c/0"}},
		{name: "a session gone removes its ids",
			edit:  func(s []*model.Node) []*model.Node { return slices.Delete(s, 1, 2) },
			gone:  ids(memForest(2).Sessions[1]),
			order: true},
		{name: "the first and last sessions gone",
			edit:  func(s []*model.Node) []*model.Node { return s[1:4] },
			gone:  append(ids(memForest(5).Sessions[0]), ids(memForest(5).Sessions[4])...),
			order: true},
		{name: "a session added sends its nodes",
			edit:  func(s []*model.Node) []*model.Node { return append(s, other.Sessions[5]) },
			nodes: ids(other.Sessions[5]),
			order: true},
		{name: "a session added first, one gone last",
			edit: func(s []*model.Node) []*model.Node {
				extra := copyTree(s[0], nil)
				extra.Walk(func(n *model.Node) { n.ID = "a" + n.ID })
				return append([]*model.Node{extra}, s[:4]...)
			},
			nodes: func() (out []string) {
				for _, id := range ids(memForest(1).Sessions[0]) {
					out = append(out, "a"+id)
				}
				return out
			}(),
			gone:  ids(memForest(5).Sessions[4]),
			order: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := memForest(5)
			h := newHub(time.Now)
			h.sync(base)
			next := *base
			next.Sessions = tc.edit(slices.Clone(base.Sessions))
			next.IndexSessions()
			h.sync(&next)
			ev := lastEvent(t, h)
			var sent []string
			for _, n := range ev.Nodes {
				sent = append(sent, n.ID)
			}
			slices.Sort(sent)
			want := slices.Sorted(slices.Values(tc.nodes))
			gone := slices.Sorted(slices.Values(tc.gone))
			if !slices.Equal(sent, want) || !slices.Equal(ev.Removed, gone) || (ev.Sessions != nil) != tc.order {
				t.Fatalf("nodes %v removed %v order sent %v; want nodes %v removed %v order sent %v",
					sent, ev.Removed, ev.Sessions != nil, want, gone, tc.order)
			}
			if ev.Sessions != nil && !sameOrder(&next, *ev.Sessions) {
				t.Errorf("order %v is not the snapshot's", *ev.Sessions)
			}
			for sid := range h.members {
				if next.Node(sid) == nil {
					t.Errorf("the hub still holds session %s", sid)
				}
			}
			if len(h.members) != len(next.Sessions) || len(h.sigs) != next.NodeCount() {
				t.Errorf("the hub holds %d sessions, %d signatures; want %d, %d",
					len(h.members), len(h.sigs), len(next.Sessions), next.NodeCount())
			}
		})
	}
}

// flushCounter is a response that counts its flushes.
type flushCounter struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushCounter) Flush() { f.flushes++; f.ResponseRecorder.Flush() }

// A watcher that resumes behind several revisions (or wakes after a
// burst of them) is sent them all and flushed once: a write to its
// connection for the batch, not one a line.
func TestWatchFlushesABatchOfLinesOnce(t *testing.T) {
	base := memForest(20)
	var cur atomic.Pointer[model.Snapshot]
	cur.Store(base)
	srv := New(Options{Snapshot: cur.Load})
	srv.Sync(base)
	since := srv.hub.revString(srv.hub.rev)
	for i := range 5 {
		next := churned(cur.Load(), []int{i}, time.Second)
		cur.Store(next)
		srv.Sync(next)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the watcher leaves once it was sent what it asked
	req := localRequest(http.MethodGet, WatchPath+"?since="+since).WithContext(ctx)
	w := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
	srv.serveWatch(w, req)
	lines := strings.Count(w.Body.String(), "\n")
	if lines != 5 {
		t.Fatalf("%d lines sent, want the 5 revisions after %s:\n%s", lines, since, w.Body)
	}
	if w.flushes != 1 {
		t.Errorf("5 lines flushed %d times, want once", w.flushes)
	}
}
