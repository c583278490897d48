package remote

// Following a host's watch stream (SPEC §4.2): one connection a host, its
// events applied to the host's forest a session at a time; a host without
// the stream is polled, with its ETag.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
	"github.com/dispatchtop/dispatchtop/serve"
)

// deadAfter is how long a watch stream may be silent before its
// connection is dropped as dead: three of the server's heartbeats.
const deadAfter = 3 * serve.DefaultHeartbeat

// coalesce is the least time between two updates the fleet publishes: a
// change after a quiet moment is published at once, the ones that follow
// it within coalesce are gathered into one update at its end (SPEC §8: a
// change on a host reaches the screen within 500 ms).
const coalesce = 200 * time.Millisecond

// gatherer says when the fleet publishes the changes it took: at once
// when the last update is coalesce old, else when it will be. Nothing is
// published twice within coalesce, and a lone change waits for nothing.
type gatherer struct {
	last    time.Time // the last update published
	pending bool      // a change taken since, its publish due at due
	due     time.Time
}

// changed notes a change at now: the wait before the update is published
// (0: now), or false when one is already due.
func (g *gatherer) changed(now time.Time) (time.Duration, bool) {
	if g.pending {
		return 0, false
	}
	g.pending = true
	g.due = g.last.Add(coalesce)
	if g.due.Before(now) {
		g.due = now
	}
	return g.due.Sub(now), true
}

// published notes the update published at now.
func (g *gatherer) published(now time.Time) { g.last, g.pending = now, false }

// watchURL is the watch endpoint beside a host's snapshot URL, or false
// when the URL names another path (then the host is polled).
func watchURL(snapshot string, since string) (string, bool) {
	u, err := url.Parse(snapshot)
	if err != nil || !strings.HasSuffix(u.Path, serve.SnapshotPath) {
		return "", false
	}
	u.Path = strings.TrimSuffix(u.Path, serve.SnapshotPath) + serve.WatchPath
	q := u.Query()
	q.Del("since")
	if since != "" {
		q.Set("since", since)
	}
	u.RawQuery = q.Encode()
	return u.String(), true
}

// hostEvent is what a host's follower hands the fleet: an event of its
// watch, a polled document (or its 304), or why the host failed.
type hostEvent struct {
	host     int
	at       time.Time
	watch    *serve.WatchEvent
	doc      *report.Document
	same     bool // the poll's answer was 304: the last document holds
	err      error
	read     bool // the failed answer's body was read (its cap, its JSON)
	retryAt  time.Time
	pollMode bool // the host has no watch stream: it is polled
}

// errNoWatch says a host answers no watch stream: it is polled instead.
var errNoWatch = errors.New("no watch stream")

// follow follows host i until ctx ends: its watch stream, reconnecting
// with ?since after a failure (a host that failed to be read waits as
// Poll's back-off says), or, when the host has none, a poll each interval.
func (f *Fleet) follow(ctx context.Context, i int, out chan<- hostEvent) {
	h := f.opts.Hosts[i]
	send := func(ev hostEvent) bool {
		ev.host = i
		select {
		case out <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	}
	since, fails := "", 0
	for ctx.Err() == nil {
		u, ok := watchURL(h.URL, since)
		if !ok {
			break
		}
		if f.resync[i].Swap(false) {
			since = ""
		}
		rev, read, err := f.watch(ctx, i, u, since == "", send)
		if rev != "" {
			since = rev
			fails = 0
		}
		if errors.Is(err, errNoWatch) {
			break
		}
		if ctx.Err() != nil {
			return
		}
		wait := f.opts.Every
		if read {
			fails++
			wait = backoff(f.opts.Every, fails)
		}
		at := f.opts.Now()
		if !send(hostEvent{at: at, err: err, read: read, retryAt: at.Add(wait)}) || !sleep(ctx, wait) {
			return
		}
	}
	// Polled, with the ETag of the last document.
	etag := ""
	for {
		start := f.opts.Now()
		doc, tag, read, err := f.fetch(ctx, h, etag)
		if ctx.Err() != nil {
			return
		}
		wait := f.opts.Every
		ev := hostEvent{at: f.opts.Now(), doc: doc, same: err == nil && doc == nil, err: err, read: read, pollMode: true}
		if err == nil {
			etag, fails = tag, 0
		} else if read {
			fails++
			wait = backoff(f.opts.Every, fails)
			ev.retryAt = start.Add(wait)
		}
		if !send(ev) || !sleep(ctx, wait) {
			return
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// watch reads one connection of a watch stream, handing each event on,
// until it fails; rev is the last revision handed on, read says an
// answer's body was read before the failure (a cap, invalid JSON).
func (f *Fleet) watch(ctx context.Context, i int, u string, whole bool, send func(hostEvent) bool) (rev string, read bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", false, fmt.Errorf("GET %s: %w", u, err)
	}
	req.Header.Set("Accept", "application/x-ndjson")
	if f.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+f.opts.Token)
	}
	// The answer's headers within the timeout; then the stream is dead
	// when it says nothing for deadAfter.
	dead := time.AfterFunc(f.opts.Timeout, cancel)
	defer dead.Stop()
	resp, err := f.opts.Client.Do(req)
	if err != nil {
		return "", false, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return "", false, errNoWatch
	default:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return "", false, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	dead.Reset(f.opts.DeadAfter)
	g := newEventGuard(resp.Body, capsOf(f.opts.MaxBody, f.opts.MaxNodes), 2*f.opts.MaxBody, time.Now)
	lines := eventLines{r: bufio.NewReaderSize(g, lineBuffer)}
	var dec eventDecoder
	for {
		line, err := lines.next()
		if g.err != nil {
			return rev, true, fmt.Errorf("GET %s: %w", u, g.err)
		}
		evs, derr := dec.events(line)
		for _, ev := range evs {
			dead.Reset(f.opts.DeadAfter)
			switch {
			case whole && ev.Type != serve.EventSnapshot:
				return "", true, fmt.Errorf("GET %s: a %q event before any snapshot", u, ev.Type)
			case ev.Type != serve.EventSnapshot && ev.Type != serve.EventDiff && ev.Type != serve.EventHeartbeat:
				return rev, true, fmt.Errorf("GET %s: an event of unknown type %q", u, ev.Type)
			}
			whole = false
			if !send(hostEvent{at: f.opts.Now(), watch: ev}) {
				return rev, false, ctx.Err()
			}
			if f.resync[i].Load() {
				// The fleet could not apply it: the host is read again whole.
				return "", true, fmt.Errorf("GET %s: the stream's events could not be applied", u)
			}
			rev = ev.Rev
		}
		if derr != nil || err != nil {
			if derr == nil {
				derr = err
			}
			if ctx.Err() != nil {
				derr = fmt.Errorf("no event for %s: %w", f.opts.DeadAfter, derr)
			}
			return rev, !errors.Is(derr, io.EOF) && !errors.Is(derr, io.ErrUnexpectedEOF) && ctx.Err() == nil,
				fmt.Errorf("GET %s: %w", u, derr)
		}
	}
}

// lineBuffer is what a stream's reader holds between events; a longer
// event (a snapshot) is gathered apart and let go once read.
const lineBuffer = 64 << 10

// eventLines splits a guarded watch stream into its events: the guard
// ends each value at the top level with a line break (whatever white
// space the host put there), and folds any break inside one.
type eventLines struct {
	r    *bufio.Reader
	long []byte // a line longer than the reader's buffer, gathered
}

// next is the next line (the reader's bytes until the next call) and the
// read's error: a last line the stream cut has no break.
func (l *eventLines) next() ([]byte, error) {
	if cap(l.long) > lineBuffer {
		l.long = nil // a snapshot's bytes are not held while the stream is quiet
	}
	l.long = l.long[:0]
	for {
		line, err := l.r.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			if len(l.long) == 0 {
				return line, err
			}
			l.long = append(l.long, line...)
			return l.long, err
		}
		l.long = append(l.long, line...)
	}
}

// wireHost is a watched host's forest as its events built it. It keeps
// each node as it was built (no event's JSON: a node sent is built at once,
// and a node of a session rebuilt that was not sent is copied), and the
// sessions in their order; the forest it hands out shares every session
// no event touched with the one before, and its index too while no id
// came or went and no edge moved (model.Snapshot.RenewSessions).
type wireHost struct {
	head  report.Document
	order []string       // the sessions' ids as sent, in order
	pos   map[string]int // each prefixed session id's place in order
	recs  map[string]wireRec
	// kids are the children of the nodes whose built node does not name
	// them all (a child not sent, or held elsewhere): a hostile or torn
	// stream's, so none most of the time.
	kids map[string][]string
	// sessions[i] is order[i]'s session as built (nil: none to build).
	sessions []*model.Node
	// sub is the forest last handed out; renewed, the places of the
	// sessions rebuilt since; reshaped, that an id came or went or an edge
	// moved since (the next forest is indexed whole).
	sub      *model.Snapshot
	renewed  map[int]bool
	reshaped bool
	words    interner
}

// wireRec is a node of the host by its prefixed id: the node as last
// built, the prefixed id of the session that holds it ("" while none does).
type wireRec struct {
	node    *model.Node
	session string
}

// apply folds ev into w, rebuilding the sessions it touched under the host row hostID;
// an event the stream should not send (a diff before any snapshot, an
// unknown type, more nodes than maxNodes) is an error: the host is read
// again whole.
//
// With trans, the transitions of a diff's nodes are appended to it, as
// model.DiffFor lists them of the forests before and after (view's, in
// tree order, the vanished after them by id): a node sent whose state or
// flags changed, or that a session now holds and none did, and a node
// removed that one held. A diff sends its nodes in tree order.
func (w *wireHost) apply(ev *serve.WatchEvent, got time.Time, hostID string, maxNodes int,
	trans *[]model.Transition, view model.TransitionView) error {
	switch ev.Type {
	case serve.EventHeartbeat:
		return nil
	case serve.EventSnapshot:
		if ev.Head == nil || ev.Sessions == nil {
			return errors.New("a snapshot event without its head or sessions")
		}
		words := w.words
		*w = wireHost{recs: make(map[string]wireRec, len(ev.Nodes)), pos: map[string]int{}, renewed: map[int]bool{},
			reshaped: true, words: words}
	case serve.EventDiff:
		if w.recs == nil {
			return errors.New("a diff before any snapshot")
		}
	default:
		return fmt.Errorf("an event of unknown type %q", ev.Type)
	}
	if len(w.recs)+len(ev.Nodes)-len(ev.Removed) > maxNodes {
		// Counted before anything is built: the records can only be
		// fewer (a node sent again, an id removed twice).
		if n := w.countAfter(ev, hostID); n > maxNodes {
			return &CapError{What: capNodes, Cap: int64(maxNodes)}
		}
	}
	if ev.Head != nil {
		w.head = *ev.Head
	}
	b := builder{received: got, prefix: hostID, words: &w.words}
	touched := map[string]bool{}
	was := w.pos // the sessions' places before ev: those of w.sessions
	// moved: an id came or went, or an edge or a session's place moved;
	// else every node stays in the session that holds it.
	moved := ev.Type == serve.EventSnapshot || ev.Sessions != nil
	if ev.Sessions != nil {
		w.order = *ev.Sessions
		w.pos = make(map[string]int, len(w.order))
		for i, id := range w.order {
			w.pos[b.id(id)] = i
		}
		for sid := range was {
			if _, ok := w.pos[sid]; !ok {
				touched[sid] = true // gone: its nodes let go
			}
		}
		for sid := range w.pos {
			if _, ok := was[sid]; !ok {
				touched[sid] = true // new: built
			}
		}
		w.reshaped = true // the places moved
	}
	// The nodes sent, built at once; the sessions that hold them touched.
	// A node whose kids are those it had keeps its children by their
	// nodes (sentFor: the node built in place of each one sent; same: each
	// with its last node), and their ids are made only if some node moved.
	fresh := make(map[string][]string, len(ev.Nodes))
	sentFor := make(map[*model.Node]*model.Node, len(ev.Nodes))
	var before []wireRec // with trans: each node sent as it was
	if trans != nil {
		before = make([]wireRec, 0, len(ev.Nodes))
	}
	type keptKids struct {
		id   string
		last *model.Node
	}
	var same []keptKids
	for _, j := range ev.Nodes {
		id := b.id(j.ID)
		rec, ok := w.recs[id]
		if trans != nil {
			before = append(before, rec)
		}
		n := b.values(j.NodeJSON, nil)
		if ok {
			// Its id as last held, which its children's parent ids share.
			n.ID = rec.node.ID
		}
		_, twice := fresh[id]
		if ok && !twice && w.sameKids(b.prefix, j.Kids, id, rec.node) {
			sentFor[rec.node] = n
			same = append(same, keptKids{id, rec.node})
			fresh[id] = nil
		} else {
			// New, sent twice, or with other kids: built by ids.
			w.reshaped, moved = true, true
			kids := make([]string, len(j.Kids))
			for i, k := range j.Kids {
				kids[i] = b.id(k)
			}
			fresh[id] = kids
		}
		if rec.session != "" {
			touched[rec.session] = true
		}
		if _, root := w.pos[id]; root {
			touched[id] = true
		}
		rec.node = n
		w.recs[id] = rec
	}
	var vanished []model.Transition
	for _, id := range ev.Removed {
		id = b.id(id)
		if rec, ok := w.recs[id]; ok {
			if rec.session != "" {
				touched[rec.session] = true
				if trans != nil && rec.node.State != "" {
					vanished = append(vanished, model.VanishedTransition(rec.node, got, goneReason))
				}
			}
			delete(w.recs, id)
			delete(w.kids, id)
			w.reshaped, moved = true, true
		}
	}
	if moved {
		for _, k := range same {
			fresh[k.id] = w.kidsOf(k.id, k.last)
		}
	}
	// The touched sessions let their nodes go, then are built again: a
	// node moved from one to another is held by the one that takes it,
	// and a parent it named by being under it is its new one (wasUnder:
	// each node's parent as last built). When none moved, each is built
	// of the nodes it held.
	var wasUnder map[string]string
	for sid := range touched {
		if !moved {
			break
		}
		i, ok := was[sid]
		if !ok || i >= len(w.sessions) || w.sessions[i] == nil || w.sessions[i].ID != sid {
			continue
		}
		if wasUnder == nil {
			wasUnder = map[string]string{}
		}
		s := w.sessions[i]
		var release func(n *model.Node, parent string)
		release = func(n *model.Node, parent string) {
			if rec, ok := w.recs[n.ID]; ok && rec.session == s.ID {
				rec.session = ""
				w.recs[n.ID] = rec
				wasUnder[n.ID] = parent
			}
			for _, c := range n.Children {
				release(c, n.ID)
			}
		}
		release(s, hostID)
	}
	if ev.Sessions != nil {
		// The places moved: each kept session to its new place.
		sessions := make([]*model.Node, len(w.order))
		for _, s := range w.sessions {
			if s == nil {
				continue
			}
			if i, ok := w.pos[s.ID]; ok && !touched[s.ID] {
				sessions[i] = s
			}
		}
		w.sessions = sessions
	}
	for sid := range touched {
		i, ok := w.pos[sid]
		if !ok {
			continue
		}
		var root *model.Node // the session as last built, in its place
		if j, ok := was[sid]; ok && j == i && i < len(w.sessions) {
			root = w.sessions[i]
		}
		w.sessions[i] = w.build(sid, hostID, root, fresh, sentFor, moved, wasUnder)
		w.renewed[i] = true
		if w.sessions[i] == nil {
			w.reshaped = true // a place left empty
		}
	}
	if trans != nil {
		w.transitions(ev, b, got, before, vanished, len(fresh) < len(ev.Nodes), trans, view)
	}
	return nil
}

// goneReason is the reason of a node's transition when it vanished.
const goneReason = "gone from its host's snapshot"

// transitions appends to trans those of ev's nodes, each sent node as it
// was in before, and the vanished (model.DiffFor's order and view); dup:
// some node was sent twice.
func (w *wireHost) transitions(ev *serve.WatchEvent, b builder, got time.Time, before []wireRec, vanished []model.Transition, dup bool,
	trans *[]model.Transition, view model.TransitionView) {
	var seen map[string]bool
	if dup {
		seen = make(map[string]bool, len(ev.Nodes))
	}
	var out []model.Transition
	for i, j := range ev.Nodes {
		id := b.id(j.ID)
		if seen != nil {
			if seen[id] {
				continue // sent twice: from as it was to as it is
			}
			seen[id] = true
		}
		rec, was := w.recs[id], before[i]
		if rec.session == "" || rec.node == nil {
			continue // no session holds it: not in the forest
		}
		if was.session == "" {
			was.node = nil // in no session before: new to the forest
		}
		if t, ok := model.NodeTransition(was.node, rec.node, got); ok {
			out = append(out, t)
		}
	}
	slices.SortFunc(vanished, func(a, b model.Transition) int { return strings.Compare(a.ID, b.ID) })
	*trans = append(*trans, view.Keep(append(out, vanished...))...)
}

// countAfter is how many records w holds once ev is applied.
func (w *wireHost) countAfter(ev *serve.WatchEvent, prefix string) int {
	b := builder{prefix: prefix}
	n := len(w.recs)
	added := map[string]bool{}
	for _, j := range ev.Nodes {
		if id := b.id(j.ID); w.recs[id].node == nil && !added[id] {
			added[id] = true
			n++
		}
	}
	for _, id := range ev.Removed {
		if id = b.id(id); w.recs[id].node != nil {
			n--
		}
	}
	return n
}

// sameKids reports whether sent, a node's kids as an event names them
// (not prefixed), are the children of node id (n) as last sent.
func (w *wireHost) sameKids(prefix string, sent []string, id string, n *model.Node) bool {
	if k, ok := w.kids[id]; ok {
		if len(k) != len(sent) {
			return false
		}
		for i, kid := range k {
			if !prefixedIs(prefix, sent[i], kid) {
				return false
			}
		}
		return true
	}
	if n == nil || len(n.Children) != len(sent) {
		return n == nil && len(sent) == 0
	}
	for i, c := range n.Children {
		if !prefixedIs(prefix, sent[i], c.ID) {
			return false
		}
	}
	return true
}

// prefixedIs reports whether full is id with prefix, as builder.id makes it.
func prefixedIs(prefix, id, full string) bool {
	if prefix == "" {
		return full == id
	}
	return len(full) == len(prefix)+1+len(id) && full[len(prefix)] == '/' && full[len(prefix)+1:] == id &&
		full[:len(prefix)] == prefix
}

// kidsOf are the prefixed ids of the children of node id as last sent.
func (w *wireHost) kidsOf(id string, n *model.Node) []string {
	if k, ok := w.kids[id]; ok {
		return k
	}
	if n == nil {
		return nil
	}
	ids := make([]string, len(n.Children))
	for i, c := range n.Children {
		ids[i] = c.ID
	}
	return ids
}

// build makes the session sid of the records, each id once (a cycle or a
// second parent of a hostile host's is not followed; claim: the nodes of
// the session are those it takes, else those it held): a node sent in this
// event is the node built of it; any other is its last, or a copy of it
// when its children or its parent changed. Nodes know their parent by id
// (no pointer): a changed node costs a copy of its ancestors, whose lists
// of children changed, not of its session.
//
// Not claim, the session is rebuilt of its tree as last built (root):
// each node is found by its last node, sentFor giving the node sent in
// its place, not by its id. Claim, each node is found by its id, fresh
// holding the kids of those sent, and wasUnder each released node's
// parent as last built.
func (w *wireHost) build(sid, hostID string, root *model.Node, fresh map[string][]string, sentFor map[*model.Node]*model.Node,
	claim bool, wasUnder map[string]string) *model.Node {
	var built []*model.Node // the children of the nodes being built, a stack
	var node func(id, parent string, was *model.Node) *model.Node
	node = func(id, parent string, was *model.Node) *model.Node {
		var rec wireRec
		var kids []string      // its children by id
		var last []*model.Node // its children as last built, when they are all those last sent
		sent := false
		if !claim && was != nil {
			rec = wireRec{node: was, session: sid}
			if n, ok := sentFor[was]; ok {
				rec.node, sent = n, true
			}
			if k, ok := w.kids[id]; ok {
				kids = k
			} else {
				last = was.Children
			}
		} else {
			var ok bool
			if rec, ok = w.recs[id]; !ok {
				return nil
			}
			switch {
			case !claim:
				if rec.session != sid {
					return nil // another session's, as when last built
				}
			case rec.session != "":
				return nil
			}
			if rec.session != sid {
				rec.session = sid // taken before its children: a cycle ends here
				w.recs[id] = rec
			}
			kids, sent = fresh[id]
			if !sent {
				if k, ok := w.kids[id]; ok {
					kids = k
				} else {
					last = rec.node.Children
				}
			}
		}
		from := len(built)
		for _, k := range kids {
			if c := node(k, rec.node.ID, nil); c != nil {
				built = append(built, c)
			}
		}
		for _, k := range last {
			if c := node(k.ID, rec.node.ID, k); c != nil {
				built = append(built, c)
			}
		}
		children := built[from:]
		built = built[:from]
		// Its parent: the one it names, else (or when it named the one it
		// was under) the one it is under now, whose string it shares.
		parentID := rec.node.ParentID
		if parentID == "" || parentID == parent || (!sent && claim && parentID == wasUnder[id]) {
			parentID = parent
		}
		n := rec.node
		if sent || parentID != n.ParentID || !slices.Equal(children, n.Children) {
			if !sent {
				c := *n
				n = &c
			}
			n.Parent, n.ParentID = nil, parentID
			n.Children = slices.Clone(children)
			if n.Children == nil {
				n.Children = []*model.Node{}
			}
			rec.node = n
			w.recs[id] = rec
		}
		if len(children) != len(kids)+len(last) {
			if w.kids == nil {
				w.kids = map[string][]string{}
			}
			if last != nil {
				kids = make([]string, len(last))
				for i, k := range last {
					kids[i] = k.ID
				}
			}
			w.kids[id] = kids
		} else if w.kids != nil {
			delete(w.kids, id)
		}
		return n
	}
	if claim || root == nil || root.ID != sid {
		root = nil
	}
	return node(sid, hostID, root)
}

// nodes is how many nodes the host sent and did not remove.
func (w *wireHost) nodes() int { return len(w.recs) }

// snapshot is the host's forest as ToSnapshot makes it of a document.
// It shares with the last the sessions no event touched since, and its
// index while nothing was reshaped: a diff costs the sessions it touched.
func (w *wireHost) snapshot(got time.Time) *model.Snapshot {
	snap := &model.Snapshot{}
	if w.sub != nil && !w.reshaped && len(w.sub.Sessions) == len(w.sessions) {
		*snap = *w.sub // its index with it, renewed below
		snap.Sessions = slices.Clone(w.sub.Sessions)
		for i := range w.renewed {
			snap.Sessions[i] = w.sessions[i]
		}
		snap.RenewSessions(maps.Keys(w.renewed))
	} else {
		snap.Sessions = make([]*model.Node, 0, len(w.sessions))
		for _, s := range w.sessions {
			if s != nil {
				snap.Sessions = append(snap.Sessions, s)
			}
		}
		snap.IndexSessions()
		w.reshaped = len(snap.Sessions) != len(w.sessions) // a place empty: never renewed in place
	}
	snap.GeneratedAt, snap.Roots, snap.Thresholds, snap.Problems = got, w.head.Roots, thresholdsOf(&w.head), w.head.Problems
	w.sub = snap
	clear(w.renewed)
	return snap
}
