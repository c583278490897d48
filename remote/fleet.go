package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
	"github.com/dispatchtop/dispatchtop/serve"
)

// Defaults of the fleet view.
const (
	DefaultEvery   = 2 * time.Second
	DefaultTimeout = 1500 * time.Millisecond
	// MaxBackoff is the longest a host whose snapshot could not be read
	// waits before it is asked again.
	MaxBackoff = time.Minute
	// maxRedirects is as many as net/http follows by default.
	maxRedirects = 10
)

// Host is one `dispatchtop serve` to poll.
type Host struct {
	Name string // the top-level row's id and the prefix of its node ids
	URL  string // the snapshot endpoint
}

// ParseHosts reads --remote values: each is URL or NAME=URL, several may be
// comma-separated. A URL without a scheme is http; one without a path gets
// /api/v1/snapshot. The name defaults to the URL's host:port. Names must be
// unique and must not contain '/', which separates them from node ids.
func ParseHosts(specs []string) ([]Host, error) {
	var hosts []Host
	seen := map[string]bool{}
	for _, spec := range specs {
		for _, item := range strings.Split(spec, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			name, raw, named := strings.Cut(item, "=")
			if !named || strings.Contains(name, "/") || strings.Contains(name, ":") {
				// "=" inside a URL's query, or no name at all.
				name, raw = "", item
			}
			if !strings.Contains(raw, "://") {
				raw = "http://" + raw
			}
			u, err := url.Parse(raw)
			if err != nil {
				return nil, fmt.Errorf("--remote %q: %w", item, err)
			}
			if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
				return nil, fmt.Errorf("--remote %q: want http(s)://HOST:PORT", item)
			}
			if u.Path == "" || u.Path == "/" {
				u.Path = serve.SnapshotPath
			}
			if name == "" {
				name = u.Host
			}
			if seen[name] {
				return nil, fmt.Errorf("--remote %q: host name %q given twice (use NAME=URL)", item, name)
			}
			seen[name] = true
			hosts = append(hosts, Host{Name: name, URL: u.String()})
		}
	}
	if len(hosts) == 0 {
		return nil, errors.New("--remote: no URL given")
	}
	return hosts, nil
}

// Options configure a Fleet.
type Options struct {
	Hosts   []Host
	Token   string        // sent as a bearer token when not empty
	Timeout time.Duration // per request; 0 means DefaultTimeout
	Every   time.Duration // Run's interval; 0 means DefaultEvery
	// Client makes the requests (nil: a client of its own); the fleet uses
	// a copy that follows a redirect only within the origin named.
	Client *http.Client
	// MaxBody and MaxNodes cap a host's answer (DefaultMaxBody and
	// DefaultMaxNodes when 0 or less).
	MaxBody  int64
	MaxNodes int
	Now      func() time.Time
	// Transitions is what the consumer of Updates shows of them: an update
	// lists only those (model.DiffFor). The zero value lists every one.
	Transitions model.TransitionView
	// DeadAfter is how long Run lets a watch stream be silent before it
	// drops the connection (0: three of serve's heartbeats).
	DeadAfter time.Duration
}

// Fleet polls hosts and merges their snapshots. Poll and Run are not safe
// for concurrent use: one goroutine polls.
type Fleet struct {
	opts Options
	// resync[i] tells host i's follower that its stream's events could
	// not be applied: it reconnects without ?since, to read it whole.
	resync  []atomic.Bool
	state   []hostState
	prev    *model.Snapshot
	updates chan model.Update
	byName  map[string]int // each host's place, by its name
}

type hostState struct {
	status model.Host
	doc    *report.Document // last good document
	got    time.Time        // when it arrived
	// fails counts the polls in a row whose answer could not be read; the
	// host is not asked again before retryAt.
	fails   int
	retryAt time.Time
	// etag is the last document's validator: a poll sends it, a 304 keeps
	// the document.
	etag string
	// sub is the host's forest, made of doc or of wire, kept until either
	// changes: a merge rebuilds no host that did not.
	sub  *model.Snapshot
	wire *wireHost // the host's watch stream's state (nil: polled)
	// unsettled: wire took diffs since sub was made of it (settle).
	unsettled bool
	// row is the host's top-level node of the last merge, made over the
	// forest rowOf: kept while neither it nor the row's values change.
	row   *model.Node
	rowOf *model.Snapshot
}

// NewFleet builds a fleet; nothing is fetched yet.
func NewFleet(opts Options) *Fleet {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Every <= 0 {
		opts.Every = DefaultEvery
	}
	client := http.Client{}
	if opts.Client != nil {
		client = *opts.Client // the caller's keeps its own redirect policy
	}
	client.CheckRedirect = sameOrigin
	opts.Client = &client
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.MaxNodes <= 0 {
		opts.MaxNodes = DefaultMaxNodes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.DeadAfter <= 0 {
		opts.DeadAfter = deadAfter
	}
	f := &Fleet{opts: opts, state: make([]hostState, len(opts.Hosts)), updates: make(chan model.Update, 1),
		resync: make([]atomic.Bool, len(opts.Hosts))}
	f.byName = make(map[string]int, len(opts.Hosts))
	for i, h := range opts.Hosts {
		f.state[i].status = model.Host{Name: h.Name, URL: h.URL}
		f.byName[h.Name] = i
	}
	return f
}

// Poll fetches every host at once, each within the timeout, and merges
// their snapshots into one forest: one top-level node per host (its id is
// the host name, its State empty), each host's sessions below it with ids
// prefixed "name/"; an unreachable host keeps its last snapshot. A host
// whose answer could not be read (over a cap, not a document, cut off) is
// asked again only after a delay that doubles with each such poll in a
// row, from twice the interval up to MaxBackoff: a hostile or broken host
// does not cost a full read every interval. The update's transitions are
// the changes of the hosts' nodes since the previous poll; its hosts,
// every host's reachability.
func (f *Fleet) Poll(ctx context.Context) model.Update {
	type answer struct {
		asked bool
		doc   *report.Document
		tag   string
		at    time.Time
		err   error
		read  bool // the answer's body was read (status 200)
	}
	answers := make([]answer, len(f.opts.Hosts))
	start := f.opts.Now()
	var wg sync.WaitGroup
	for i, h := range f.opts.Hosts {
		if start.Before(f.state[i].retryAt) {
			continue
		}
		etag := f.state[i].etag
		if f.state[i].doc == nil {
			etag = ""
		}
		wg.Go(func() {
			doc, tag, read, err := f.fetch(ctx, h, etag)
			answers[i] = answer{asked: true, doc: doc, tag: tag, at: f.opts.Now(), err: err, read: read}
		})
	}
	wg.Wait()
	now := f.opts.Now()
	for i := range f.state {
		st, a := &f.state[i], answers[i]
		if !a.asked {
			continue
		}
		if a.err != nil {
			retryAt := time.Time{} // no answer costs nothing to ask for again
			if a.read {
				// From the poll's start: on the interval's ticks, not a tick
				// after them.
				retryAt = start.Add(backoff(f.opts.Every, st.fails+1))
			}
			f.failed(i, a.err, a.read, retryAt, now)
			continue
		}
		if a.doc != nil {
			st.doc, st.got, st.sub, st.etag = a.doc, a.at, nil, a.tag
			st.status.Nodes = a.doc.Summary.Nodes
		}
		f.answered(i, a.at, now)
	}
	return f.update(now)
}

// failed marks host i unreachable with err; read says its answer was
// read (then it is asked again at retryAt, its fails counted).
func (f *Fleet) failed(i int, err error, read bool, retryAt, now time.Time) {
	st := &f.state[i]
	was := st.status.Reachable
	st.status.Reachable, st.status.Err = false, err.Error()
	if was || st.status.Since.IsZero() {
		st.status.Since = now
	}
	if read {
		st.fails++
		st.retryAt = retryAt
	} else {
		st.fails, st.retryAt = 0, time.Time{}
	}
}

// answered marks host i reachable, last seen at.
func (f *Fleet) answered(i int, at, now time.Time) {
	st := &f.state[i]
	was := st.status.Reachable
	st.status.Reachable, st.status.Err, st.status.LastSeen = true, "", at
	st.fails, st.retryAt = 0, time.Time{}
	if !was {
		st.status.Since = now
	}
}

// update merges the hosts' forests and diffs them against the last.
func (f *Fleet) update(now time.Time) model.Update {
	snap := f.merge(now)
	trans := model.DiffFor(f.prev, snap, now, goneReason, f.opts.Transitions)
	f.prev = snap
	return model.Update{Snapshot: snap, Hosts: f.hosts(), Transitions: trans}
}

// backoff is the wait after the fails-th unreadable answer in a row:
// every × 2^fails, at most MaxBackoff.
func backoff(every time.Duration, fails int) time.Duration {
	d := every
	for range fails {
		if d >= MaxBackoff/2 {
			return MaxBackoff
		}
		d *= 2
	}
	return min(d, MaxBackoff)
}

// Updates delivers Run's polls (model.Update says what a slow reader
// gets); it is closed when Run returns.
func (f *Fleet) Updates() <-chan model.Update { return f.updates }

// Run follows every host until ctx is done, then closes Updates: the
// watch stream of each host that has one (reconnecting with ?since after
// a failure, re-read whole when the host cannot resume), a poll every
// interval with the last ETag of a host that has none. An update is
// published only when a host's forest or reachability changed: at once
// after a quiet moment, and the changes that follow it gathered into one
// at most every coalesce (gatherer). A slow reader never stalls the
// hosts. Poll once before for an immediate picture. Run once.
func (f *Fleet) Run(ctx context.Context) {
	defer close(f.updates)
	ctx, cancel := context.WithCancel(ctx)
	events := make(chan hostEvent, len(f.opts.Hosts))
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i := range f.opts.Hosts {
		wg.Go(func() { f.follow(ctx, i, events) })
	}
	flush := time.NewTimer(time.Hour)
	flush.Stop()
	var gather gatherer
	var trans []model.Transition
	read := make([]bool, len(f.state)) // the host's forest was read whole
	unread, released := len(f.state), false
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-events:
			changed, t := f.take(ev)
			trans = append(trans, t...)
			if ev.watch != nil && ev.watch.Type == serve.EventDiff {
				giveDiffNodes(ev.watch.Nodes) // applied: nothing reads the list again
			}
			if changed {
				if wait, arm := gather.changed(time.Now()); arm {
					flush.Reset(wait)
				}
			}
			if whole := ev.doc != nil || ev.watch != nil && ev.watch.Type == serve.EventSnapshot; whole && ev.err == nil && !read[ev.host] {
				read[ev.host] = true
				unread--
			}
		case <-flush.C:
			gather.published(time.Now())
			now := f.opts.Now()
			snap := f.merge(now)
			f.prev = snap
			model.Publish(f.updates, model.Update{Snapshot: snap, Hosts: f.hosts(), Transitions: trans})
			trans = nil
			if unread == 0 && !released {
				// Every host read whole twice (Poll's documents, the
				// streams' snapshots): the heap was twice the fleet's for a
				// moment, and the runtime keeps what it grew to. Once the
				// consumer took this update in, the documents are garbage
				// and their pages are handed back (SPEC §8: RSS a node).
				released = true
				time.AfterFunc(releaseAfter, debug.FreeOSMemory)
			}
		}
	}
}

// releaseAfter is how long after the update that replaced every host's
// first forest the fleet hands the memory they held back to the system.
const releaseAfter = 2 * time.Second

// take applies a host's event to its state, reporting whether what the
// fleet shows changed, and the transitions of the host's nodes: each event
// diffed on its own, so none is lost when several make one update.
func (f *Fleet) take(ev hostEvent) (bool, []model.Transition) {
	st := &f.state[ev.host]
	was := st.status
	now := f.opts.Now()
	switch {
	case ev.err != nil:
		f.failed(ev.host, ev.err, ev.read, ev.retryAt, now)
		return was.Reachable || was.Err != st.status.Err, nil
	case ev.watch != nil:
		if st.wire == nil {
			st.wire = &wireHost{}
		}
		if ev.watch.Type != serve.EventDiff {
			st.settle() // a snapshot is diffed against the forest as it is
		}
		var diffed []model.Transition
		var trans *[]model.Transition
		if ev.watch.Type == serve.EventDiff {
			trans = &diffed
		}
		if err := st.wire.apply(ev.watch, ev.at, st.status.Name, f.opts.MaxNodes, trans, f.opts.Transitions); err != nil {
			// An event refused changes nothing: the forest is the last one.
			st.settle()
			st.wire = nil // read whole again at the next connection
			f.resync[ev.host].Store(true)
			f.failed(ev.host, fmt.Errorf("%s: %w", st.status.URL, err), true, now.Add(backoff(f.opts.Every, st.fails+1)), now)
			return true, nil
		}
		f.answered(ev.host, ev.at, now)
		if ev.watch.Type == serve.EventHeartbeat {
			return !was.Reachable, nil
		}
		if trans != nil {
			// A diff's transitions are its own nodes'; the forest is built
			// when the fleet is merged (SPEC §8: a host's diffs cost the
			// nodes they send, not a forest each).
			st.unsettled, st.got = true, ev.at
			return true, diffed
		}
		sub := st.wire.snapshot(ev.at)
		st.status.Nodes = sub.NodeCount()
		return true, f.renew(st, nil, ev.at, sub)
	case ev.doc != nil:
		st.settle()
		st.wire = nil
		st.status.Nodes = ev.doc.Summary.Nodes
		f.answered(ev.host, ev.at, now)
		return true, f.renew(st, ev.doc, ev.at, nil)
	default: // 304: the document holds
		f.answered(ev.host, ev.at, now)
		return !was.Reachable, nil
	}
}

// settle makes st's forest of its watch stream's state when diffs came
// since it was last made.
func (st *hostState) settle() {
	if !st.unsettled || st.wire == nil {
		return
	}
	st.unsettled = false
	st.sub = st.wire.snapshot(st.got)
	st.status.Nodes = st.sub.NodeCount()
}

// renew gives st its new forest (sub, or made of doc) and lists the
// transitions from its last.
func (f *Fleet) renew(st *hostState, doc *report.Document, got time.Time, sub *model.Snapshot) []model.Transition {
	if sub == nil {
		sub = ToSnapshot(doc, got, st.status.Name, &model.Node{ID: st.status.Name})
	}
	prev := st.sub
	if prev == nil && st.doc != nil {
		prev = ToSnapshot(st.doc, st.got, st.status.Name, &model.Node{ID: st.status.Name})
	}
	st.doc, st.got, st.sub = doc, got, sub
	return model.DiffFor(prev, sub, got, goneReason, f.opts.Transitions)
}

// hosts is every host's reachability, in order.
func (f *Fleet) hosts() []model.Host {
	hosts := make([]model.Host, len(f.state))
	for i, st := range f.state {
		hosts[i] = st.status
	}
	return hosts
}

// fetch GETs one host's snapshot within the timeout and the caps; read
// says the answer was a 200 whose body was read, whole or in part.
func (f *Fleet) fetch(ctx context.Context, h Host, etag string) (doc *report.Document, tag string, read bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.URL, nil)
	if err != nil {
		return nil, "", false, fmt.Errorf("GET %s: %w", h.URL, err)
	}
	req.Header.Set("Accept", "application/json")
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	if f.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+f.opts.Token)
	}
	// Accept-Encoding is left to the transport: it asks for gzip and
	// decompresses as the body is read, so the cap counts what the
	// decoder is given.
	resp, err := f.opts.Client.Do(req)
	if err != nil {
		return nil, "", false, err // *url.Error already names the method and URL
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified && etag != "" {
		return nil, etag, false, nil
	}
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, "", false, fmt.Errorf("GET %s: %s", h.URL, resp.Status)
	}
	doc, err = decode(resp.Body, capsOf(f.opts.MaxBody, f.opts.MaxNodes))
	if err != nil {
		return nil, "", true, fmt.Errorf("GET %s: %w", h.URL, err)
	}
	return doc, resp.Header.Get("ETag"), true, nil
}

// sameOrigin is the fleet's redirect policy: a redirect is followed only
// within the origin (scheme, host and port) of the URL named, so the
// bearer token never reaches another server, another port of the same
// host, or the same host over plain HTTP. (net/http keeps Authorization
// on a redirect to any port and scheme of the same host name.)
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if to, from := origin(req.URL), origin(via[0].URL); to != from {
		return fmt.Errorf("redirected to %s, another origin than %s: not followed (the token goes only to the origin named)", to, from)
	}
	return nil
}

// origin is u's scheme://host:port, the port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if strings.EqualFold(u.Scheme, "https") {
			port = "443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// merge builds the fleet forest from every host's last good forest: one
// top-level row a host over the host's sessions, the whole indexed by the
// hosts' own forests (model.Snapshot.IndexParts), so a merge costs the
// hosts, not their nodes. A host whose forest and row did not change since
// the last merge keeps its row (the same node: nothing beneath it moved,
// see model.Update), so the consumer lays out and counts again only the
// hosts that changed. A host's sessions are shared with the merges before
// while the host's forest did not change; they name their host row by its
// id (a watched host's nodes hold no parent pointer: Snapshot.ParentOf).
func (f *Fleet) merge(now time.Time) *model.Snapshot {
	snap := &model.Snapshot{
		GeneratedAt: now,
		Thresholds:  model.DefaultThresholds(),
		Sessions:    make([]*model.Node, 0, len(f.state)),
		Watch: model.WatchInfo{Mode: "polling", Interval: f.opts.Every,
			Reason: fmt.Sprintf("remote, %d hosts", len(f.state))},
	}
	parts := make([]*model.Snapshot, len(f.state))
	thresholdsSet := false
	for i := range f.state {
		st := &f.state[i]
		st.settle()
		if st.sub == nil && st.doc != nil {
			st.sub = ToSnapshot(st.doc, st.got, st.status.Name, &model.Node{ID: st.status.Name})
		}
		sub := st.sub
		if sub == nil {
			sub = &model.Snapshot{}
		}
		parts[i] = sub
		reason := hostReason(st.status, st.retryAt, now)
		h := st.row
		if h == nil || st.rowOf != sub || h.Reason != reason || h.InfraDir != st.status.URL {
			h = &model.Node{ID: st.status.Name, InfraDir: st.status.URL, Action: model.ActionNone,
				Reason: reason, Children: sub.Sessions}
			st.row, st.rowOf = h, sub
		}
		snap.Sessions = append(snap.Sessions, h)
		for _, r := range sub.Roots {
			snap.Roots = append(snap.Roots, h.ID+":"+r)
		}
		for _, p := range sub.Problems {
			snap.Problems = append(snap.Problems, model.Problem{Path: h.ID + ":" + p.Path, Error: p.Error})
		}
		// Hosts may use other thresholds; the first reachable host's stand
		// for the view (each node's state was decided on its own host).
		if !thresholdsSet && st.status.Reachable && st.sub != nil {
			snap.Thresholds, thresholdsSet = sub.Thresholds, true
		}
	}
	snap.IndexParts(parts, f.hostOf)
	return snap
}

// hostOf is the place of the host whose forest holds id (its row's id, or
// an id prefixed with its name and '/'), or -1.
func (f *Fleet) hostOf(id string) int {
	name, _, _ := strings.Cut(id, "/")
	i, ok := f.byName[name]
	if !ok {
		return -1
	}
	return i
}

// hostReason is the host row's reason column; retryAt, when the host is
// next asked after an unreadable answer (zero: at the next poll).
func hostReason(s model.Host, retryAt, now time.Time) string {
	if s.Reachable {
		return fmt.Sprintf("%s: %d nodes", s.URL, s.Nodes)
	}
	r := "unreachable since " + s.Since.Format("15:04:05") + ": " + s.Err
	if !s.LastSeen.IsZero() {
		r = fmt.Sprintf("unreachable since %s (showing its snapshot of %s): %s",
			s.Since.Format("15:04:05"), s.LastSeen.Format("15:04:05"), s.Err)
	}
	if retryAt.After(now) {
		r += "; asked again at " + retryAt.Format("15:04:05")
	}
	return r
}
