package remote

// Following a host's watch stream (SPEC §4.2): one connection a host, its
// events applied to the host's forest a session at a time; a host without
// the stream is polled, with its ETag.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
	"github.com/dispatchtop/dispatchtop/serve"
)

// deadAfter is how long a watch stream may be silent before its
// connection is dropped as dead: three of the server's heartbeats.
const deadAfter = 3 * serve.DefaultHeartbeat

// coalesce is how long the fleet gathers the events of its hosts before
// it publishes one update of them (SPEC §8: a change on a host reaches the
// screen within 500 ms).
const coalesce = 200 * time.Millisecond

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
	dec := json.NewDecoder(g)
	for {
		var ev serve.WatchEvent
		err := dec.Decode(&ev)
		if g.err != nil {
			return rev, true, fmt.Errorf("GET %s: %w", u, g.err)
		}
		if err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("no event for %s: %w", f.opts.DeadAfter, err)
			}
			return rev, !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && ctx.Err() == nil,
				fmt.Errorf("GET %s: %w", u, err)
		}
		dead.Reset(f.opts.DeadAfter)
		switch {
		case whole && ev.Type != serve.EventSnapshot:
			return "", true, fmt.Errorf("GET %s: a %q event before any snapshot", u, ev.Type)
		case ev.Type != serve.EventSnapshot && ev.Type != serve.EventDiff && ev.Type != serve.EventHeartbeat:
			return rev, true, fmt.Errorf("GET %s: an event of unknown type %q", u, ev.Type)
		}
		whole = false
		if !send(hostEvent{at: f.opts.Now(), watch: &ev}) {
			return rev, false, ctx.Err()
		}
		if f.resync[i].Load() {
			// The fleet could not apply it: the host is read again whole.
			return "", true, fmt.Errorf("GET %s: the stream's events could not be applied", u)
		}
		rev = ev.Rev
	}
}

// wireHost is a watched host's forest as its events built it: each node's
// values and children by id, and the sessions built from them, rebuilt
// only when one of their nodes changed.
type wireHost struct {
	head  report.Document
	order []string
	recs  map[string]wireRec
	// built are the sessions by id, members the ids each holds, sessionOf
	// the session of each id built.
	built     map[string]*model.Node
	members   map[string][]string
	sessionOf map[string]string
	byID      map[string]*model.Node // every node built, by prefixed id
}

type wireRec struct {
	node serve.WatchNode
	got  time.Time // when its ages were measured
}

// apply folds ev into w, rebuilding the sessions it touched under host;
// an event the stream should not send (a diff before any snapshot, an
// unknown type, more nodes than maxNodes) is an error: the host is read
// again whole.
func (w *wireHost) apply(ev *serve.WatchEvent, got time.Time, host *model.Node, maxNodes int) error {
	touched := map[string]bool{}
	switch ev.Type {
	case serve.EventHeartbeat:
		return nil
	case serve.EventSnapshot:
		if ev.Head == nil || ev.Sessions == nil {
			return errors.New("a snapshot event without its head or sessions")
		}
		*w = wireHost{recs: make(map[string]wireRec, len(ev.Nodes)), built: map[string]*model.Node{},
			members: map[string][]string{}, sessionOf: map[string]string{}, byID: map[string]*model.Node{}}
	case serve.EventDiff:
		if w.recs == nil {
			return errors.New("a diff before any snapshot")
		}
	default:
		return fmt.Errorf("an event of unknown type %q", ev.Type)
	}
	if ev.Head != nil {
		w.head = *ev.Head
	}
	if ev.Sessions != nil {
		for _, id := range w.order {
			touched[id] = true // gone or kept, looked at again
		}
		w.order = *ev.Sessions
		for _, id := range w.order {
			touched[id] = true
		}
	}
	for _, n := range ev.Nodes {
		n.Children = nil
		w.recs[n.ID] = wireRec{node: n, got: got}
		if s, ok := w.sessionOf[n.ID]; ok {
			touched[s] = true
		}
	}
	for _, id := range ev.Removed {
		if s, ok := w.sessionOf[id]; ok {
			touched[s] = true
		}
		delete(w.recs, id)
	}
	if len(w.recs) > maxNodes {
		return &CapError{What: capNodes, Cap: int64(maxNodes)}
	}
	inOrder := make(map[string]bool, len(w.order))
	for _, id := range w.order {
		inOrder[id] = true
	}
	for sid := range touched {
		for _, id := range w.members[sid] {
			delete(w.byID, host.ID+"/"+id)
			delete(w.sessionOf, id)
		}
		delete(w.members, sid)
		delete(w.built, sid)
		if inOrder[sid] {
			w.build(sid, host)
		}
	}
	return nil
}

// build makes the session sid from the records, each id once (a cycle
// or a second parent of a hostile host's is not followed).
func (w *wireHost) build(sid string, host *model.Node) {
	var ids []string
	var node func(id string, parent *model.Node) *model.Node
	node = func(id string, parent *model.Node) *model.Node {
		rec, ok := w.recs[id]
		if _, taken := w.sessionOf[id]; !ok || taken {
			return nil
		}
		w.sessionOf[id] = sid
		ids = append(ids, id)
		b := builder{received: rec.got, prefix: host.ID, byID: w.byID}
		n := b.values(rec.node.NodeJSON, parent)
		n.Children = make([]*model.Node, 0, len(rec.node.Kids))
		for _, k := range rec.node.Kids {
			if c := node(k, n); c != nil {
				n.Children = append(n.Children, c)
			}
		}
		return n
	}
	if s := node(sid, host); s != nil {
		w.built[sid] = s
	}
	w.members[sid] = ids
}

// snapshot is the host's forest as ToSnapshot makes it of a document,
// with an index of its own (the next event changes w's).
func (w *wireHost) snapshot(got time.Time) *model.Snapshot {
	snap := &model.Snapshot{GeneratedAt: got, Roots: w.head.Roots, Thresholds: thresholdsOf(&w.head),
		Problems: w.head.Problems, ByID: maps.Clone(w.byID), Sessions: make([]*model.Node, 0, len(w.order))}
	for _, id := range w.order {
		if s := w.built[id]; s != nil {
			snap.Sessions = append(snap.Sessions, s)
		}
	}
	return snap
}
