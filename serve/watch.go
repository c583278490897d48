package serve

// The watch stream (SPEC §4.2): list + watch, as Kubernetes clients follow
// a resource. One hub per server turns the live engine's snapshots into
// numbered events once, whatever the number of watchers; each watcher is
// sent a snapshot, then the events after it.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
)

// Event types of the watch stream.
const (
	EventSnapshot  = "snapshot"
	EventDiff      = "diff"
	EventHeartbeat = "heartbeat"
)

// DefaultHeartbeat is how often a quiet watch stream sends a heartbeat
// line: a client that hears nothing for three of them drops the
// connection as dead.
const DefaultHeartbeat = 5 * time.Second

// Ring bounds: the events kept for a watcher resuming with ?since, at most
// ringEvents of them and ringBytes of their lines; one older than the
// oldest kept is answered with a new snapshot.
const (
	ringEvents = 1024
	ringBytes  = 64 << 20
)

// watchWriteTimeout is how long one line may take to reach a watcher: a
// stream is long-lived, so the server's write timeout is set per line.
const watchWriteTimeout = 60 * time.Second

// WatchEvent is one line of /api/v1/watch (JSON lines). A snapshot event
// holds the whole forest: Head, Sessions and every node; a diff event the
// nodes that changed since the previous revision, the ids removed, Head
// when the roots, thresholds or problems changed and Sessions when the
// order of the sessions did; a heartbeat only the current revision.
type WatchEvent struct {
	Type string `json:"type"`
	// Rev is the revision after this event: "INSTANCE.N", opaque to a
	// client, which sends the last one it applied back as ?since=REV.
	Rev      string           `json:"rev"`
	Head     *report.Document `json:"head,omitempty"`
	Sessions *[]string        `json:"sessions,omitempty"`
	Nodes    []WatchNode      `json:"nodes,omitempty"`
	Removed  []string         `json:"removed,omitempty"`
}

// WatchNode is a node of a watch event: as the snapshot document shows it
// (ages measured when the event was made; its children an empty list),
// naming its children in order.
type WatchNode struct {
	report.NodeJSON
	Kids []string `json:"kids"`
}

// sigEpoch is the clock every node's signature is measured at: a node's
// ages and the age its reason quotes move with the clock, its signature
// only with its mtimes, so a node is sent again only when it changed.
var sigEpoch = time.Unix(1<<33, 0)

// hub numbers the live engine's changes and keeps the newest of them.
type hub struct {
	mu       sync.Mutex
	instance string // a new one each start: revisions of another run are unknown
	rev      uint64
	cur      *model.Snapshot
	sigs     map[string]uint64   // node id -> signature of its values and kids
	members  map[string][]string // session id -> the ids of its nodes
	sessions []string            // session ids, in order
	head     headKey             // what a watcher keeps of the head, to tell a change
	buf      bytes.Buffer        // a node's encoding, to sign it
	enc      *json.Encoder       // writes to buf
	sum      hash.Hash64         // FNV-1a of buf, reset for each node
	ring     []ringEvent
	ringSize int
	changed  chan struct{} // closed and replaced at every new revision
	now      func() time.Time
}

type ringEvent struct {
	rev  uint64
	line []byte
}

func newHub(now func() time.Time) *hub {
	var b [6]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	h := &hub{instance: hex.EncodeToString(b[:]), changed: make(chan struct{}), now: now}
	h.enc = json.NewEncoder(&h.buf)
	h.sum = fnv.New64a()
	return h
}

// revString is revision n of this hub.
func (h *hub) revString(n uint64) string { return h.instance + "." + strconv.FormatUint(n, 10) }

// parseSince is the revision of ?since that this hub made, or false.
func (h *hub) parseSince(s string) (uint64, bool) {
	inst, n, ok := strings.Cut(s, ".")
	if !ok || inst != h.instance {
		return 0, false
	}
	v, err := strconv.ParseUint(n, 10, 64)
	return v, err == nil
}

// sync makes next the hub's snapshot: the first one is its base, each
// later one a diff event of a new revision when any node, the sessions'
// order or the head changed. A snapshot it holds already costs nothing;
// another costs the sessions it renewed, added or dropped: the sessions of
// both, sorted by id, are walked side by side, a session shared with the
// previous snapshot is neither signed nor looked up, and the head is
// compared by its fields, not counted.
func (h *hub) sync(next *model.Snapshot) {
	if next == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if next == h.cur {
		return
	}
	prev := h.cur
	h.cur = next
	if prev == nil {
		h.sigs, h.members = map[string]uint64{}, map[string][]string{}
		for _, s := range next.Sessions {
			h.members[s.ID] = h.sign(s, nil, nil)
		}
		h.sessions = sessionIDs(next)
		h.head = keyOfHead(next)
		return
	}
	ev := WatchEvent{Type: EventDiff}
	now := h.now()
	ps, ns := sortedSessions(prev.Sessions), sortedSessions(next.Sessions)
	var changed []*model.Node
	var dropped [][]string // the ids of the sessions renewed or gone
	for i, j := 0, 0; i < len(ps) || j < len(ns); {
		switch {
		case j == len(ns) || i < len(ps) && ps[i].ID < ns[j].ID: // gone
			dropped = append(dropped, h.members[ps[i].ID])
			i++
		case i == len(ps) || ns[j].ID < ps[i].ID: // new
			dropped = append(dropped, h.members[ns[j].ID]) // a session again: none, or its last ids
			h.members[ns[j].ID] = h.sign(ns[j], &changed, nil)
			j++
		default:
			if ps[i] != ns[j] {
				dropped = append(dropped, h.members[ns[j].ID])
				h.members[ns[j].ID] = h.sign(ns[j], &changed, nil)
			}
			i++
			j++
		}
	}
	for _, n := range changed {
		ev.Nodes = append(ev.Nodes, watchNode(n, now))
	}
	// The ids of the sessions renewed or gone that no session holds now.
	for _, ids := range dropped {
		for _, id := range ids {
			if next.Node(id) == nil {
				ev.Removed = append(ev.Removed, id)
				delete(h.sigs, id)
			}
		}
	}
	for i, j := 0, 0; i < len(ps); i++ { // forget the sessions gone
		for j < len(ns) && ns[j].ID < ps[i].ID {
			j++
		}
		if j == len(ns) || ns[j].ID != ps[i].ID {
			delete(h.members, ps[i].ID)
		}
	}
	slices.Sort(ev.Removed)
	ev.Removed = slices.Compact(ev.Removed)
	if !sameOrder(next, h.sessions) {
		order := sessionIDs(next)
		h.sessions = order
		ev.Sessions = &order
	}
	if !h.head.of(next) {
		h.head = keyOfHead(next)
		doc := report.DocumentHead(next)
		ev.Head = &doc
	}
	if len(ev.Nodes) == 0 && len(ev.Removed) == 0 && ev.Sessions == nil && ev.Head == nil {
		return
	}
	h.rev++
	ev.Rev = h.revString(h.rev)
	line, err := json.Marshal(ev)
	if err != nil {
		// A value no JSON holds (a non-finite number is written as null by
		// the document; anything else is a bug): the watchers re-read whole.
		line = nil
	}
	h.push(ringEvent{rev: h.rev, line: append(line, '\n')})
	close(h.changed)
	h.changed = make(chan struct{})
}

// sortedSessions is sessions sorted by id: as a snapshot holds them (no
// copy), or a sorted copy of a forest that is not.
func sortedSessions(sessions []*model.Node) []*model.Node {
	byID := func(a, b *model.Node) int { return strings.Compare(a.ID, b.ID) }
	if slices.IsSortedFunc(sessions, byID) {
		return sessions
	}
	return slices.SortedStableFunc(slices.Values(sessions), byID)
}

// sameOrder tells whether snap's sessions are ids, in order.
func sameOrder(snap *model.Snapshot, ids []string) bool {
	if len(snap.Sessions) != len(ids) {
		return false
	}
	for i, s := range snap.Sessions {
		if s.ID != ids[i] {
			return false
		}
	}
	return true
}

// sign records the signatures of sess's nodes, listing in changed (when
// not nil) those whose signature differs from the last; it returns the
// session's ids.
func (h *hub) sign(sess *model.Node, changed *[]*model.Node, ids []string) []string {
	sess.Walk(func(n *model.Node) {
		ids = append(ids, n.ID)
		h.buf.Reset()
		err := h.enc.Encode(watchNode(n, sigEpoch))
		h.sum.Reset()
		h.sum.Write(h.buf.Bytes())
		sum := h.sum.Sum64()
		if err != nil {
			sum = 0 // always sent: the line's encoding fails and watchers re-read
		}
		if old, ok := h.sigs[n.ID]; ok && old == sum && err == nil {
			return
		}
		h.sigs[n.ID] = sum
		if changed != nil {
			*changed = append(*changed, n)
		}
	})
	return ids
}

// push keeps ev in the ring, dropping the oldest past its bounds.
func (h *hub) push(ev ringEvent) {
	h.ring = append(h.ring, ev)
	h.ringSize += len(ev.line)
	drop := 0
	for len(h.ring)-drop > ringEvents || h.ringSize > ringBytes && len(h.ring)-drop > 1 {
		h.ringSize -= len(h.ring[drop].line)
		drop++
	}
	if drop > 0 {
		h.ring = slices.Delete(h.ring, 0, drop)
	}
}

// after is the lines of the revisions after rev, or false when one of them
// is no longer kept (or could not be encoded): the watcher needs a
// snapshot. It also returns the channel closed at the next revision.
func (h *hub) after(rev uint64) ([][]byte, uint64, bool, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if rev == h.rev {
		return nil, rev, true, h.changed
	}
	if rev > h.rev || len(h.ring) == 0 || h.ring[0].rev > rev+1 {
		return nil, rev, false, h.changed
	}
	var lines [][]byte
	for _, ev := range h.ring {
		if ev.rev <= rev {
			continue
		}
		if len(ev.line) <= 1 {
			return nil, rev, false, h.changed
		}
		lines = append(lines, ev.line)
	}
	return lines, h.rev, true, h.changed
}

// snapshotLine is the snapshot event of the hub's current revision.
func (h *hub) snapshotLine() ([]byte, uint64, error) {
	h.mu.Lock()
	snap, rev := h.cur, h.rev
	h.mu.Unlock()
	now := h.now()
	order := sessionIDs(snap)
	head := report.DocumentHead(snap)
	ev := WatchEvent{Type: EventSnapshot, Rev: h.revString(rev), Head: &head, Sessions: &order,
		Nodes: make([]WatchNode, 0, snap.NodeCount())}
	for _, s := range snap.Sessions {
		s.Walk(func(n *model.Node) { ev.Nodes = append(ev.Nodes, watchNode(n, now)) })
	}
	line, err := json.Marshal(ev)
	if err != nil {
		return nil, rev, fmt.Errorf("encode the snapshot event: %w", err)
	}
	return append(line, '\n'), rev, nil
}

func watchNode(n *model.Node, now time.Time) WatchNode {
	w := WatchNode{NodeJSON: report.NodeValues(n, now), Kids: make([]string, len(n.Children))}
	for i, c := range n.Children {
		w.Kids[i] = c.ID
	}
	return w
}

func sessionIDs(snap *model.Snapshot) []string {
	ids := make([]string, len(snap.Sessions))
	for i, s := range snap.Sessions {
		ids[i] = s.ID
	}
	return ids
}

// headKey is what a watcher keeps of the head: the values of the
// document's head but its summary and time (a watcher counts its nodes
// itself), read off the snapshot rather than counted from its nodes.
type headKey struct {
	roots, rootSources []string
	thresholds         model.Thresholds
	problems           []model.Problem
}

func keyOfHead(snap *model.Snapshot) headKey {
	return headKey{roots: slices.Clone(snap.Roots), rootSources: slices.Clone(snap.RootSources),
		thresholds: snap.Thresholds, problems: slices.Clone(snap.Problems)}
}

// of tells whether k is snap's head.
func (k headKey) of(snap *model.Snapshot) bool {
	return k.thresholds == snap.Thresholds && slices.Equal(k.roots, snap.Roots) &&
		slices.Equal(k.rootSources, snap.RootSources) && slices.Equal(k.problems, snap.Problems)
}

// serveWatch streams the watch: a snapshot (unless ?since names a revision
// still kept), then every later revision's diff as it is made, a heartbeat
// line each Heartbeat when there is none, until the client leaves or the
// server stops. A watcher that falls behind the kept revisions is sent a
// new snapshot.
func (s *Server) serveWatch(w http.ResponseWriter, r *http.Request) {
	snap := s.opts.Snapshot()
	if snap == nil {
		http.Error(w, "no snapshot yet", http.StatusServiceUnavailable)
		return
	}
	s.hub.sync(snap)
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	// Lines sent together (a watcher resuming, or woken after a burst of
	// revisions) are written and then flushed once.
	put := func(line []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(watchWriteTimeout))
		_, err := w.Write(line)
		return err == nil
	}
	flush := func() bool { return rc.Flush() == nil }
	write := func(line []byte) bool { return put(line) && flush() }
	rev, resumed := s.hub.parseSince(r.URL.Query().Get("since"))
	ctx := r.Context()
	beat := time.NewTicker(s.opts.Heartbeat)
	defer beat.Stop()
	for {
		lines, at, ok, changed := s.hub.after(rev)
		if !ok || !resumed {
			line, at2, err := s.hub.snapshotLine()
			if err != nil {
				s.logf("GET %s: %v", WatchPath, err)
				return
			}
			if !write(line) {
				return
			}
			rev, resumed = at2, true
			continue
		}
		for _, line := range lines {
			if !put(line) {
				return
			}
		}
		if len(lines) > 0 && !flush() {
			return
		}
		rev = at
		if len(lines) > 0 {
			beat.Reset(s.opts.Heartbeat)
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-beat.C:
			line, _ := json.Marshal(WatchEvent{Type: EventHeartbeat, Rev: s.hub.revString(rev)})
			if !write(append(line, '\n')) {
				return
			}
		}
	}
}

// Sync hands the server a snapshot outside Follow (tests, embedding).
func (s *Server) Sync(snap *model.Snapshot) { s.hub.sync(snap) }

// etag is the snapshot endpoint's validator: the revision of the
// classification (a weak one: the ages of a later answer move with the
// clock, its nodes do not).
func (s *Server) etag(snap *model.Snapshot) string {
	s.hub.sync(snap)
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return `W/"` + s.hub.revString(s.hub.rev) + `"`
}
