package scanner

// The live engine (SPEC §1 "Watching", §3 time-based states, §8): a Watcher
// keeps a classified model of every root current from fsnotify events, or by
// polling where inotify cannot be used, and hands out immutable snapshots.
//
// API for the UI:
//
//	w, err := NewWatcher(opts, WatchOptions{Tick: time.Second})
//	go w.Run(ctx)                  // blocks until ctx is done; closes Updates
//	for u := range w.Updates() {   // a model.Update: see its delivery guarantees
//		u.Snapshot                 // immutable: safe to read while the watcher goes on
//		u.Transitions              // state/flag changes, appearances, vanishings
//	}
//	w.Refresh()                    // re-stat everything now (after an action)
//	w.Snapshot()                   // the newest snapshot, at any time
//	w.Close()                      // ends Run; releases a watcher never run
//
// Snapshot.Watch says how: mode fsnotify, polling or mixed, the polling
// interval and why (--poll, the inotify watch limit, a network root), the
// warnings (NFS/SMB roots) and how many queue overflows were answered by a
// re-stat.
//
// One goroutine (Run) owns all mutable state; fsnotify adds its own reader
// goroutine, closed when Run returns (or by Close when Run never started).
// The receiver may be slow: the watcher publishes with model.Publish, so it
// never blocks on its consumer (model.Update states what is kept).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// Watch defaults.
const (
	DefaultTick         = time.Second
	DefaultDebounce     = 50 * time.Millisecond
	DefaultFallbackPoll = 2 * time.Second
	// maxDrain bounds how many queued events one loop turn takes at once.
	maxDrain = 4096
)

// Watch modes (model.WatchInfo.Mode).
const (
	ModeFsnotify = "fsnotify"
	ModePolling  = "polling"
	ModeMixed    = "mixed"
)

// WatchOptions tune the live engine.
type WatchOptions struct {
	// Poll > 0 polls every directory at this interval instead of using
	// fsnotify (--poll).
	Poll time.Duration
	// Tick is the re-classification interval (no file IO); 0 means 1 s.
	Tick time.Duration
	// Debounce is the minimum spacing of updates caused by file events: the
	// first event of a burst is published at once, the rest of the burst
	// coalesces into one more update. 0 means 50 ms.
	Debounce time.Duration
	// MaxWatches > 0 caps the fsnotify watches; directories past it are
	// polled (as when the kernel's inotify limit is hit).
	MaxWatches int
	// FallbackPoll is the interval for directories that cannot be watched
	// (watch limit, network file systems) when Poll is 0; 0 means 2 s.
	FallbackPoll time.Duration
	// RecoverCompactions lets the watcher finish what a compaction that
	// did not finish left (`.children.compacting`, SPEC §5.3): carry its
	// lines into `.children` and remove it. Off, the watcher writes nothing
	// and shows those lines from where they are (--readonly).
	RecoverCompactions bool

	// netFS replaces the statfs check of a root or mount point in tests: it
	// returns the name of the network file system the path is on, or "".
	netFS func(path string) string
	// devOf replaces the device number of a directory in tests (a new
	// device below a root is a mount point).
	devOf func(path string, fi os.FileInfo) uint64
	// addWatch replaces fsnotify's Add in tests (to make the kernel's limit,
	// ENOSPC, happen on demand).
	addWatch func(fsw *fsnotify.Watcher, dir string) error
	// readNodeDir replaces ReadNodeDir in tests (to make a read fail on
	// demand, which chmod cannot do for root).
	readNodeDir func(root, dir string) (*model.Node, error)
}

// Watcher keeps a live model of the roots. Build it with NewWatcher and
// call Run once.
type Watcher struct {
	opts  Options
	wo    WatchOptions
	roots []Root
	probe *liveness.CachingProbe
	// pins are the processes probe pinned (nil without pidfds): the tick
	// learns of their exits instead of asking about each of them.
	pins liveness.ProcessPins
	// releaseProbe lets go of the processes the probe pinned.
	releaseProbe func()
	now          func() time.Time
	fsw          *fsnotify.Watcher // nil when everything is polled
	netFS        func(string) string
	netMounts    map[string]string // roots and mount points on a network file system -> its name

	updates chan model.Update
	refresh chan struct{}
	closed  chan struct{} // closed by Close
	closing sync.Once
	latest  atomic.Pointer[model.Snapshot]
	ran     atomic.Bool
	stats   watchStats

	// Below: owned by the goroutine running Run (or NewWatcher before).
	dirs      map[string]*watchDir
	nodes     map[string]*liveNode // by infra dir
	walkProbs map[string]model.Problem
	unread    map[string]bool      // infra dirs whose last read failed: retried at every poll
	dirty     map[string]dirtyKind // infra dir -> what to re-read
	touched   map[string]bool      // infra dirs changed since the last publish
	forest    *model.Snapshot      // built, unclassified; nil when edges changed
	gen       int                  // bumped by every rebuild of forest
	tmplByDir map[string]*model.Node
	sessionOf map[string]*model.Node    // infra dir -> its session in forest
	prevGen   int                       // gen of the forest prev was cloned from
	sessDue   map[*model.Node]time.Time // session in forest -> when it may change next
	// sessPids lists, per session in forest, the distinct pids its last
	// classification found alive (or unverified), and sessAt at which tick
	// that was: only a pid whose probe answer changed since can change its
	// verdicts.
	sessPids  map[*model.Node][]int
	sessAt    map[*model.Node]int
	pids      map[int]*pidSeen // every pid in sessPids: the answer last seen
	ticks     int
	prev      *model.Snapshot
	nWatched  int
	nPolled   int
	limitHit  string // why directories are polled past a watch limit
	mode      model.WatchInfo
	lastFlush time.Time
}

// watchStats are counters for tests and benchmarks.
type watchStats struct {
	mu          sync.Mutex
	rebuilds    int
	publishes   int
	rereads     int
	lastLatency time.Duration // first event of a batch -> update published
	lastWork    time.Duration // of lastLatency, handling the events and flushing (the rest is waiting)
	fullTime    time.Duration // spent in full publishes (ticks)
	fulls       int
	dueTime     time.Duration // of fullTime, finding what is due (the pids asked)
}

type watchDir struct {
	path    string
	root    string
	polled  bool
	mtime   time.Time
	dev     uint64   // the device it is on: a new one below the root is a mount
	netFS   string   // the network file system it is on, or ""
	subdirs dirNames // base names of known subdirectories
}

// liveNode is the engine's record of one infra dir: its facts (never handed
// out; copies are) and what polling compares against.
type liveNode struct {
	n    *model.Node
	sigs fileSigs // by name relative to the infra dir
	// The registry tail: bytes of complete lines consumed, their newlines,
	// and the file's inode. regOff < 0 means "read it whole next time".
	regOff      int64
	regNewlines int
	regIno      uint64
}

// fileSigs is a node's few file signatures; a slice is a fraction of a
// map's size, and there are 10,000s of nodes.
type fileSigs []namedSig

type namedSig struct {
	name string
	sig  fileSig
}

func (f fileSigs) get(name string) (fileSig, bool) {
	for _, e := range f {
		if e.name == name {
			return e.sig, true
		}
	}
	return fileSig{}, false
}

func (f *fileSigs) set(name string, sig fileSig) {
	for i := range *f {
		if (*f)[i].name == name {
			(*f)[i].sig = sig
			return
		}
	}
	*f = append(*f, namedSig{name, sig})
}

type fileSig struct {
	mtime time.Time
	size  int64
	ino   uint64
}

// dirNames is a directory's few subdirectory names. A slice, not a map:
// there is one per directory (tens of thousands), most hold a handful of
// names or none, and a map costs several times the memory.
type dirNames []string

// add appends name; the caller knows it is new (addDir registers a
// directory once), which keeps adding 10,000 sessions linear.
func (d *dirNames) add(name string) { *d = append(*d, name) }

func (d *dirNames) remove(name string) {
	if i := slices.Index(*d, name); i >= 0 {
		*d = slices.Delete(*d, i, i+1)
	}
}

// dirtyKind says what of an infra dir must be re-read.
type dirtyKind uint8

const (
	kindBeat     dirtyKind = 1 << iota // heartbeat mtime only (a beat)
	kindActivity                       // a stream file's mtime
	kindRegistry                       // .children changed: read the new bytes
	kindNode                           // anything else: re-read the node
)

// NewWatcher discovers every root, puts a watch on (or polls) every
// directory, and classifies the forest. It fails when no root can be read.
func NewWatcher(opts Options, wo WatchOptions) (*Watcher, error) {
	if wo.Tick <= 0 {
		wo.Tick = DefaultTick
	}
	if wo.Debounce <= 0 {
		wo.Debounce = DefaultDebounce
	}
	if wo.FallbackPoll <= 0 {
		wo.FallbackPoll = DefaultFallbackPoll
	}
	if wo.Poll > 0 {
		wo.FallbackPoll = wo.Poll
	}
	if wo.addWatch == nil {
		wo.addWatch = func(fsw *fsnotify.Watcher, dir string) error { return fsw.Add(dir) }
	}
	if wo.readNodeDir == nil {
		wo.readNodeDir = ReadNodeDir
	}
	if opts.Thresholds == (model.Thresholds{}) {
		opts.Thresholds = model.DefaultThresholds()
	}
	w := &Watcher{
		opts:      opts,
		wo:        wo,
		now:       opts.Now,
		netFS:     wo.netFS,
		netMounts: map[string]string{},
		updates:   make(chan model.Update, 1),
		refresh:   make(chan struct{}, 1),
		closed:    make(chan struct{}),
		dirs:      map[string]*watchDir{},
		nodes:     map[string]*liveNode{},
		walkProbs: map[string]model.Problem{},
		unread:    map[string]bool{},
		dirty:     map[string]dirtyKind{},
		touched:   map[string]bool{},
		sessDue:   map[*model.Node]time.Time{},
		sessPids:  map[*model.Node][]int{},
		sessAt:    map[*model.Node]int{},
		pids:      map[int]*pidSeen{},
	}
	if w.now == nil {
		w.now = time.Now
	}
	if w.netFS == nil {
		w.netFS = networkFS
	}
	if w.wo.devOf == nil {
		w.wo.devOf = func(_ string, fi os.FileInfo) uint64 { return fileDev(fi) }
	}
	// A probe result is reused for a little under one tick, so each tick
	// asks the system at most once per pid; the system's processes are
	// pinned where the platform allows, which makes that question cheap.
	probe := opts.Probe
	w.releaseProbe = func() {}
	if probe == nil {
		probe, w.pins, w.releaseProbe = liveness.PinProcesses(liveness.SystemProbe{})
	}
	w.probe = liveness.NewCachingProbe(probe, wo.Tick*9/10)
	w.mode = model.WatchInfo{Mode: ModeFsnotify}
	if wo.Poll > 0 {
		w.mode = model.WatchInfo{Mode: ModePolling, Interval: wo.Poll, Reason: "polling requested"}
	} else {
		fsw, err := fsnotify.NewBufferedWatcher(1024)
		if err != nil {
			w.mode = model.WatchInfo{Mode: ModePolling, Interval: wo.FallbackPoll,
				Reason: "fsnotify unavailable: " + err.Error()}
		} else {
			w.fsw = fsw
		}
	}

	start := time.Now()
	walk, err := Discover(opts)
	if err != nil {
		w.release()
		return nil, fmt.Errorf("watch: %w", err)
	}
	w.roots = walk.Roots
	// Directory mtimes come from the kernel's coarse clock and may lag
	// time.Now by a tick: look back a generous margin.
	w.adopt(walk, start.Add(-2*time.Second))
	w.processDirty()
	clear(w.touched)
	w.rebuild()
	w.publish(w.now(), false)
	return w, nil
}

// Updates delivers the changes of the model (model.Update says what a slow
// reader gets); it is closed when Run returns.
func (w *Watcher) Updates() <-chan model.Update { return w.updates }

// Snapshot is the newest published snapshot (never nil after NewWatcher).
func (w *Watcher) Snapshot() *model.Snapshot { return w.latest.Load() }

// Refresh asks the watcher to re-stat everything it holds now, e.g. after
// an action changed files. It never blocks.
func (w *Watcher) Refresh() {
	select {
	case w.refresh <- struct{}{}:
	default:
	}
}

// Close stops the watcher: a running Run returns as on a cancelled context;
// a watcher whose Run never started releases its watches (and fsnotify's
// reader goroutine) at once and closes Updates. Run after Close fails. It
// never blocks and may be called more than once.
func (w *Watcher) Close() error {
	w.closing.Do(func() { close(w.closed) })
	if w.ran.CompareAndSwap(false, true) {
		// Run will never own the state: release it here.
		w.release()
		close(w.updates)
	}
	return nil
}

// Run follows the roots until ctx is done or Close is called, then releases
// the watches and closes Updates. It may be called once, and not after Close.
func (w *Watcher) Run(ctx context.Context) error {
	if !w.ran.CompareAndSwap(false, true) {
		return errors.New("watch: Run called twice or after Close")
	}
	defer close(w.updates)
	defer w.release()

	tick := time.NewTicker(w.wo.Tick)
	defer tick.Stop()
	poll := time.NewTicker(w.wo.FallbackPoll)
	defer poll.Stop()
	flush := time.NewTimer(time.Hour)
	flush.Stop()
	defer flush.Stop()
	flushArmed := false
	// tickDue: a tick came while a flush was armed; the flush does its work
	// (a steady stream of events must not starve time-based states).
	tickDue := false
	var batch eventBatch

	var events <-chan fsnotify.Event
	var errs <-chan error
	if w.fsw != nil {
		events, errs = w.fsw.Events, w.fsw.Errors
	}

	// afterChange publishes now when the last publish is a debounce ago,
	// else once the debounce has passed: a burst makes at most two updates.
	afterChange := func() {
		if len(w.dirty) == 0 && len(w.touched) == 0 && w.forest != nil {
			return
		}
		if wait := w.wo.Debounce - time.Since(w.lastFlush); wait > 0 {
			if !flushArmed {
				flush.Reset(wait)
				flushArmed = true
			}
			return
		}
		w.flush(batch, tickDue)
		batch, tickDue = eventBatch{}, false
	}

	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.closed:
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			t0 := time.Now()
			if batch.start.IsZero() {
				batch.start = t0
			}
			w.handleEvent(ev)
			// Take what is already queued before deciding: a burst is one batch.
		drain:
			for i := 0; i < maxDrain; i++ {
				select {
				case ev, ok := <-events:
					if !ok {
						events = nil
						break drain
					}
					w.handleEvent(ev)
				default:
					break drain
				}
			}
			batch.work += time.Since(t0)
			afterChange()
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost: re-stat what is held, not a full rescan.
				w.mode.Overflows++
				w.restat(false)
			} else {
				w.addWalkProblem("fsnotify", fmt.Errorf("watch: %w", err))
			}
			afterChange()
		case <-flush.C:
			flushArmed = false
			w.flush(batch, tickDue)
			batch, tickDue = eventBatch{}, false
		case <-poll.C:
			if w.nPolled > 0 {
				w.restat(true)
			}
			w.findLostRoots()
			// A failed read may have changed nothing on disk (EIO, EMFILE):
			// no event or mtime would bring the node back.
			for dir := range w.unread {
				w.dirty[dir] |= kindNode
			}
			afterChange()
		case <-w.refresh:
			w.restat(false)
			w.findLostRoots()
			w.flush(eventBatch{}, tickDue)
			tickDue = false
		case <-tick.C:
			// Ages advance with no file event: re-classify, no file IO. A
			// flush pending within a debounce takes the tick along.
			if flushArmed {
				tickDue = true
				continue
			}
			w.publish(w.now(), true)
		}
	}
}

// release gives back what the watcher holds of the system: its watches (and
// fsnotify's reader goroutine) and its process pins.
func (w *Watcher) release() {
	if w.fsw != nil {
		_ = w.fsw.Close()
	}
	w.releaseProbe()
}

// eventBatch is the file events since the last flush: when the first
// arrived and the time spent handling them, so that an update's latency can
// be told apart into work and debounce wait.
type eventBatch struct {
	start time.Time
	work  time.Duration
}

// flush re-reads what events marked and publishes, with the work of a tick
// when one came meanwhile.
func (w *Watcher) flush(batch eventBatch, tick bool) {
	t0 := time.Now()
	w.processDirty()
	w.publish(w.now(), tick)
	if !batch.start.IsZero() {
		w.stats.mu.Lock()
		w.stats.lastLatency = time.Since(batch.start)
		w.stats.lastWork = batch.work + time.Since(t0)
		w.stats.mu.Unlock()
	}
}

// handleEvent turns one fsnotify event into dirty marks (or a new or lost
// directory). It reads nothing but the Lstat of a created path.
func (w *Watcher) handleEvent(ev fsnotify.Event) {
	path := filepath.Clean(ev.Name)
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		if _, ok := w.dirs[path]; ok {
			w.dropDir(path)
			return
		}
	}
	dir, base := filepath.Dir(path), filepath.Base(path)
	if base == gitEntry {
		// The directory became a worktree, or stopped being one.
		if d := w.dirs[dir]; d != nil && d.path != d.root {
			w.relist(d)
		}
		return
	}
	if ev.Has(fsnotify.Create) {
		if _, known := w.dirs[dir]; known {
			if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
				if _, have := w.dirs[path]; !have {
					w.discover(path)
				}
				return
			}
		}
	}
	kind := kindOf(base)
	if kind == 0 {
		return
	}
	if base == protocol.BlockedFile && filepath.Base(dir) == protocol.MiddleDir {
		dir = filepath.Dir(dir)
	}
	// Only a bare Chmod of an existing heartbeat is a beat; a create, write
	// or rename replaces its content.
	if kind == kindBeat && ev.Op != fsnotify.Chmod {
		kind = kindNode
	}
	w.dirty[dir] |= kind
}

// kindOf says what a change of a file named base means for its infra dir;
// 0 for files that do not matter (temporaries included).
func kindOf(base string) dirtyKind {
	switch base {
	case protocol.HeartbeatFile, protocol.RunningFile:
		return kindBeat
	case protocol.RegistryFile:
		return kindRegistry
	case protocol.CompactingFile, protocol.CfaFile, protocol.RetryCountFile, protocol.BlockedFile, protocol.MergedFile, protocol.ResumePendingFile:
		return kindNode
	}
	if strings.HasSuffix(base, protocol.StreamSuffix) {
		return kindActivity
	}
	return 0
}

// processDirty re-reads the marked infra dirs: a beat is one stat updating
// the mtime in place; a registry change reads only the appended bytes.
func (w *Watcher) processDirty() {
	for dir, kind := range w.dirty {
		delete(w.dirty, dir)
		ln := w.nodes[dir]
		if ln == nil {
			if _, ok := w.dirs[dir]; ok {
				w.readNode(dir)
			}
			continue
		}
		w.touched[dir] = true
		if kind&kindNode != 0 {
			w.readNode(dir)
			continue
		}
		if kind&kindBeat != 0 && !w.restatBeat(ln) {
			w.readNode(dir)
			continue
		}
		if kind&kindActivity != 0 {
			w.restatActivity(ln)
		}
		if kind&kindRegistry != 0 {
			w.readRegistryTail(ln)
		}
	}
}

// restatBeat updates a node's beat mtime in place; false when the file is
// not what was read (gone, or replaced): the node must be re-read.
func (w *Watcher) restatBeat(ln *liveNode) bool {
	name := protocol.HeartbeatFile
	if ln.n.Legacy {
		name = protocol.RunningFile
	}
	sig, err := statSig(filepath.Join(ln.n.InfraDir, name))
	old, had := ln.sigs.get(name)
	if err != nil || !had || sig.ino != old.ino || sig.size != old.size {
		return false
	}
	ln.sigs.set(name, sig)
	ln.n.BeatMtime = sig.mtime
	if t := w.tmplNode(ln); t != nil {
		t.BeatMtime = sig.mtime
	}
	return true
}

// restatActivity recomputes the newest stream mtime of a node.
func (w *Watcher) restatActivity(ln *liveNode) {
	entries, err := os.ReadDir(ln.n.InfraDir)
	if err != nil {
		return
	}
	var newest time.Time
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), protocol.StreamSuffix) {
			continue
		}
		if sig, err := statSig(filepath.Join(ln.n.InfraDir, e.Name())); err == nil {
			ln.sigs.set(e.Name(), sig)
			if sig.mtime.After(newest) {
				newest = sig.mtime
			}
		}
	}
	ln.n.ActivityMtime = newest
	if t := w.tmplNode(ln); t != nil {
		t.ActivityMtime = newest
	}
}

// tmplNode is the node of the built forest for ln, or nil when the forest
// is to be rebuilt anyway.
func (w *Watcher) tmplNode(ln *liveNode) *model.Node {
	if w.forest == nil {
		return nil
	}
	return w.tmplByDir[ln.n.InfraDir]
}

// readNode (re-)reads an infra dir whole. When what it changed leaves the
// edges as they were, the built forest's node is patched in place;
// otherwise the forest is rebuilt before the next publish.
func (w *Watcher) readNode(dir string) {
	d := w.dirs[dir]
	if d == nil {
		return
	}
	w.stats.mu.Lock()
	w.stats.rereads++
	w.stats.mu.Unlock()
	w.touched[dir] = true
	// Signatures first: a change racing the read then shows up at the next
	// comparison instead of being lost.
	sigs := nodeSigs(dir)
	n, err := w.wo.readNodeDir(d.root, dir)
	old := w.nodes[dir]
	if err != nil {
		if old != nil {
			delete(w.nodes, dir)
			w.forest = nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			w.readRecovered(dir) // not a node any more: nothing to report
			return
		}
		// Retried at every poll: rebuild only when the error changes.
		if p, had := w.walkProbs[dir]; !had || p.Error != oneLine(err.Error()) {
			w.addWalkProblem(dir, err)
		}
		w.unread[dir] = true
		return
	}
	w.readRecovered(dir)
	ln := &liveNode{n: n, sigs: sigs, regOff: -1}
	w.nodes[dir] = ln
	if n.RegistryCompacting != "" && w.wo.RecoverCompactions {
		// What it changes comes back as events (or a changed signature)
		// and is read then. Busy: a live compaction finishes its own. What
		// it cannot finish (a writer still holds the file) is shown as it
		// is, and tried again at the node's next change.
		_, _ = protocol.Recover(dir)
	}
	if old == nil || !sameEdges(old.n, n) {
		w.forest = nil
		return
	}
	if t := w.tmplNode(old); t != nil {
		patchFacts(t, n)
		ln.n = t // the forest's node holds the facts: one copy, not two
	}
}

// readRecovered forgets the read error of dir, if it had one.
func (w *Watcher) readRecovered(dir string) {
	if w.unread[dir] {
		delete(w.unread, dir)
		delete(w.walkProbs, dir)
		w.forest = nil
	}
}

// sameEdges reports whether replacing a node's facts a by b leaves every
// edge of the forest as it was.
func sameEdges(a, b *model.Node) bool {
	if a.HasHeartbeat != b.HasHeartbeat || a.Legacy != b.Legacy || a.DeclaredParent != b.DeclaredParent ||
		a.HeartbeatPath != b.HeartbeatPath || a.RegistryPath != b.RegistryPath ||
		len(a.Registry) != len(b.Registry) || a.HasScanFlag(model.FlagUnreadable) != b.HasScanFlag(model.FlagUnreadable) {
		return false
	}
	// The snapshot's problem list is assembled by BuildForest.
	if (a.Heartbeat == nil) != (b.Heartbeat == nil) || !slices.Equal(a.Problems, b.Problems) {
		return false
	}
	// `parent_heartbeat: ""` and no field at all both read as "": only the
	// first is a session lead that no registry adopts.
	if a.Heartbeat != nil && a.Heartbeat.SessionLead() != b.Heartbeat.SessionLead() {
		return false
	}
	for i := range a.Registry {
		if string(a.Registry[i].Raw) != string(b.Registry[i].Raw) || a.Registry[i].Torn != b.Registry[i].Torn {
			return false
		}
	}
	return true
}

// patchFacts replaces the facts of a built node, keeping its tree fields,
// so parent and children pointers stay valid.
func patchFacts(t, facts *model.Node) {
	c := CopyFacts(facts)
	c.ID, c.Parent, c.Children, c.ParentID = t.ID, t.Parent, t.Children, t.ParentID
	c.Entry, c.OtherParents, c.RefusedChildren = t.Entry, t.OtherParents, t.RefusedChildren
	for _, f := range t.ScanFlags {
		if f != model.FlagUnreadable && !c.HasScanFlag(f) {
			c.ScanFlags = append(c.ScanFlags, f)
		}
	}
	*t = *c
}

// rebuild links the facts into a new forest (BuildForest). The forest's
// nodes are the facts themselves, not copies (at 10,000 nodes a copy is
// about 6 MiB held for nothing): BuildForest resets their tree fields
// first, published snapshots are clones, and a change of facts either
// replaces the record (and patches it into the forest, see patchFacts) or
// rebuilds the forest.
func (w *Watcher) rebuild() {
	facts := make([]*model.Node, 0, len(w.nodes))
	for _, ln := range w.nodes {
		facts = append(facts, ln.n)
	}
	probs := make([]model.Problem, 0, len(w.walkProbs))
	for _, p := range w.walkProbs {
		probs = append(probs, p)
	}
	sort.Slice(probs, func(i, j int) bool { return probs[i].Path < probs[j].Path })
	w.forest = BuildForest(w.roots, facts, probs)
	w.gen++
	w.tmplByDir = make(map[string]*model.Node, len(facts))
	w.sessionOf = make(map[string]*model.Node, len(facts))
	for _, s := range w.forest.Sessions {
		s.Walk(func(n *model.Node) {
			w.tmplByDir[n.InfraDir] = n
			w.sessionOf[n.InfraDir] = s
		})
	}
	w.stats.mu.Lock()
	w.stats.rebuilds++
	w.stats.mu.Unlock()
}

// publish classifies a copy of the forest at now, diffs it against the
// previous snapshot and hands it out. Trees are scoped (SPEC §2: a change
// in one session never changes another), so only some sessions are copied
// and classified again, the others are shared with the previous snapshot:
//   - after a file event, the sessions holding a touched node;
//   - on a tick, the sessions due (see dueSessions);
//   - every session for the first snapshot and after a rebuilt forest.
func (w *Watcher) publish(now time.Time, tick bool) {
	if tick {
		defer func(t0 time.Time) {
			w.stats.mu.Lock()
			w.stats.fullTime += time.Since(t0)
			w.stats.fulls++
			w.stats.mu.Unlock()
		}(time.Now())
	}
	if w.forest == nil {
		w.rebuild()
	}
	sameTree := w.prev != nil && w.prevGen == w.gen
	var affected map[*model.Node]bool
	if sameTree {
		affected = map[*model.Node]bool{}
		for dir := range w.touched {
			if s := w.sessionOf[dir]; s != nil {
				affected[s] = true
			}
		}
		if tick {
			w.ticks++
			if w.ticks%reasonRefreshTicks == 0 {
				affected = nil // every reason's ages, in one snapshot
			} else {
				t0 := time.Now()
				w.dueSessions(now, affected)
				w.stats.mu.Lock()
				w.stats.dueTime += time.Since(t0)
				w.stats.mu.Unlock()
			}
		}
		if affected != nil && len(affected) == 0 && w.mode.Overflows == w.prev.Watch.Overflows {
			clear(w.touched)
			return // nothing the model shows has changed
		}
	}

	clear(w.touched)

	var snap *model.Snapshot
	if affected == nil {
		snap = cloneForest(w.forest)
		liveness.ClassifyForest(snap.Sessions, w.probe, now, w.opts.Thresholds)
		clear(w.sessDue)
		clear(w.sessPids)
		clear(w.sessAt)
		for i, s := range snap.Sessions {
			w.noteClassified(w.forest.Sessions[i], s, now)
		}
		w.prunePids()
	} else {
		cp := *w.prev
		snap = &cp
		if len(affected) > 0 {
			// The id map is shared until a session is replaced.
			snap.Sessions = slices.Clone(w.prev.Sessions)
			snap.ByID = maps.Clone(w.prev.ByID)
		}
		for i, ts := range w.forest.Sessions {
			if !affected[ts] {
				continue
			}
			c := cloneSession(ts, snap.ByID)
			liveness.ClassifyForest([]*model.Node{c}, w.probe, now, w.opts.Thresholds)
			w.noteClassified(ts, c, now)
			snap.Sessions[i] = c
		}
	}
	snap.GeneratedAt = now
	snap.Thresholds = w.opts.Thresholds
	snap.Watch = w.watchInfo()
	// The sessions nothing touched are prev's own nodes, which Diff skips.
	trans := model.Diff(w.prev, snap, now, "vanished from disk")
	w.prev, w.prevGen = snap, w.gen
	w.latest.Store(snap)
	w.lastFlush = time.Now()
	model.Publish(w.updates, model.Update{Snapshot: snap, Transitions: trans})
	w.stats.mu.Lock()
	w.stats.publishes++
	w.stats.mu.Unlock()
}

// reasonRefreshTicks bounds how stale the ages quoted in a reason ("last
// beat 12s ago", "orphaned since 11:58:30 (2m ago)") get in the snapshots:
// every this many ticks the whole forest is classified again and published
// as one snapshot. In between, a tick publishes only when a session is due
// (see dueSessions), so an idle fleet costs its consumer one snapshot per
// this many ticks, not one a tick: at 10,000 nodes a full classification
// and the consumer's rebuild of its rows cost tens of milliseconds. The ui
// shows beat ages (the column and the one a reason quotes) from BeatMtime at
// its own clock. States and flags are never late: they change at known
// times (nextDue) or when a probe answers differently.
const reasonRefreshTicks = 30

// pidSeen is the probe's answer for one pid as the tick last saw it, and
// the tick at which that answer last changed. Ticks, not times: the order
// must hold under an injected clock that stands still.
type pidSeen struct {
	info    liveness.ProcessInfo
	changed int
	pinned  bool // its process is pinned: its answer holds until it exits
}

// sameProcessInfo reports whether two probe answers give every node the same
// verdict (Verify depends on nothing else).
func sameProcessInfo(a, b liveness.ProcessInfo) bool {
	return a.Exists == b.Exists && a.CreateTime.Equal(b.CreateTime) && (a.CreateTimeErr == nil) == (b.CreateTimeErr == nil)
}

// noteClassified records what the tick needs of a session just classified
// at now: when a threshold is crossed next, and which pids can change it.
func (w *Watcher) noteClassified(ts, classified *model.Node, now time.Time) {
	w.sessDue[ts] = nextDue(classified, now, w.opts.Thresholds)
	w.sessAt[ts] = w.ticks
	if w.opts.Thresholds.NoPidCheck {
		delete(w.sessPids, ts)
		return
	}
	var pids []int
	classified.Walk(func(n *model.Node) {
		// Only a live pid can change the verdict: a gone or reused one
		// never comes back as the same process.
		if n.Process != model.ProcessAlive && n.Process != model.ProcessUnverified {
			return
		}
		if pid := n.PID(); !slices.Contains(pids, pid) {
			pids = append(pids, pid)
		}
	})
	if len(pids) == 0 {
		delete(w.sessPids, ts)
		return
	}
	w.sessPids[ts] = pids
	for _, pid := range pids {
		if _, ok := w.pids[pid]; !ok {
			// The answer the classification just used (cached).
			seen := &pidSeen{info: w.probe.Lookup(pid)}
			if w.pins != nil && seen.info.Exists {
				seen.pinned = w.pins.Follow(pid)
			}
			w.pids[pid] = seen
		}
	}
}

// prunePids forgets the pids no session names any more.
func (w *Watcher) prunePids() {
	keep := make(map[int]bool, len(w.pids))
	for _, pids := range w.sessPids {
		for _, pid := range pids {
			keep[pid] = true
		}
	}
	for pid := range w.pids {
		if !keep[pid] {
			delete(w.pids, pid)
			if w.pins != nil {
				w.pins.Forget(pid)
			}
		}
	}
}

// dueSessions adds to due every session whose classification may change at
// now: a threshold crossed (nextDue), or a pid that now answers differently
// from when the session was classified. It reads no file; each distinct
// live pid is asked once, through the caching probe — except a pinned one,
// whose answer holds until the pins report its exit — and sessions are only
// searched for it when an answer moved.
func (w *Watcher) dueSessions(now time.Time, due map[*model.Node]bool) {
	moved := false
	if !w.opts.Thresholds.NoPidCheck {
		if w.pins != nil {
			for _, pid := range w.pins.Exits() {
				if seen := w.pids[pid]; seen != nil {
					seen.pinned = false // asked below, as any unpinned pid
				}
			}
		}
		for pid, seen := range w.pids {
			if seen.pinned {
				continue
			}
			info := w.probe.Lookup(pid)
			if !sameProcessInfo(info, seen.info) {
				seen.info, seen.changed, moved = info, w.ticks, true
			}
			if w.pins != nil && info.Exists {
				seen.pinned = w.pins.Follow(pid) // pinned again by a full lookup (a new process)
			}
		}
	}
	for _, ts := range w.forest.Sessions {
		if due[ts] {
			continue
		}
		if !now.Before(w.sessDue[ts]) {
			due[ts] = true
			continue
		}
		if !moved {
			continue
		}
		at := w.sessAt[ts]
		for _, pid := range w.sessPids[ts] {
			if seen := w.pids[pid]; seen != nil && seen.changed > at {
				due[ts] = true
				break
			}
		}
	}
}

// nextDue is the first instant after now at which a threshold of SPEC §3
// is crossed by a node of session s (the beat edges, registry and
// resume-marker age); zero-cost sessions get a far future. The classifier
// compares `age > threshold`, so a threshold is crossed one nanosecond past
// it: due any earlier, the session would be classified the same and the
// crossing then missed until the next edge.
func nextDue(s *model.Node, now time.Time, th model.Thresholds) time.Time {
	next := now.Add(24 * time.Hour)
	consider := func(from time.Time, d time.Duration) {
		if t := from.Add(d + time.Nanosecond); t.After(now) && t.Before(next) {
			next = t
		}
	}
	edges := liveness.BeatEdges(th)
	s.Walk(func(n *model.Node) {
		if !n.BeatMtime.IsZero() {
			for _, d := range edges {
				consider(n.BeatMtime, d)
			}
		}
		if !n.RegistryMtime.IsZero() {
			consider(n.RegistryMtime, th.Stale)
		}
		if !n.ResumeMtime.IsZero() {
			consider(n.ResumeMtime, th.Stale)
		}
		if !n.OrphanedSince.IsZero() {
			consider(n.OrphanedSince, th.Stale)
		}
	})
	return next
}

// cloneForest copies every node of a built forest into fresh structs, so
// classification and the consumer never share a node with the engine. The
// nodes' slices are shared: neither side mutates them in place.
func cloneForest(t *model.Snapshot) *model.Snapshot {
	count, kids := 0, 0
	for _, s := range t.Sessions {
		s.Walk(func(n *model.Node) { count++; kids += len(n.Children) })
	}
	c := &cloner{arr: make([]model.Node, count), kids: make([]*model.Node, kids),
		byID: make(map[string]*model.Node, count)}
	snap := *t
	snap.Sessions = make([]*model.Node, len(t.Sessions))
	for k, s := range t.Sessions {
		snap.Sessions[k] = c.clone(s, nil)
	}
	snap.ByID = c.byID
	snap.Problems = slices.Clip(t.Problems)
	return &snap
}

// cloneSession copies one session tree, entering its nodes in byID.
func cloneSession(s *model.Node, byID map[string]*model.Node) *model.Node {
	count, kids := 0, 0
	s.Walk(func(n *model.Node) { count++; kids += len(n.Children) })
	c := &cloner{arr: make([]model.Node, count), kids: make([]*model.Node, kids), byID: byID}
	return c.clone(s, nil)
}

// cloner hands out nodes and child slices from two preallocated arrays.
type cloner struct {
	arr  []model.Node
	kids []*model.Node
	byID map[string]*model.Node
}

func (c *cloner) clone(src, parent *model.Node) *model.Node {
	n := &c.arr[0]
	c.arr = c.arr[1:]
	*n = *src
	n.Parent = parent
	n.Flags = nil
	n.ScanFlags = slices.Clip(src.ScanFlags)
	n.Problems = slices.Clip(src.Problems)
	n.Registry = slices.Clip(src.Registry)
	if k := len(src.Children); k > 0 {
		n.Children = c.kids[:k:k]
		c.kids = c.kids[k:]
		for i, ch := range src.Children {
			n.Children[i] = c.clone(ch, n)
		}
	}
	c.byID[n.ID] = n
	return n
}

// watchInfo is the current mode, with the polled share explained.
func (w *Watcher) watchInfo() model.WatchInfo {
	info := w.mode
	for _, p := range slices.Sorted(maps.Keys(w.netMounts)) {
		info.Warnings = append(info.Warnings,
			fmt.Sprintf("%s is on %s: mtimes and inotify are unreliable there, it is polled", p, w.netMounts[p]))
	}
	if w.mode.Mode == ModePolling {
		return info
	}
	switch {
	case w.nPolled > 0 && w.nWatched == 0:
		info.Mode = ModePolling
	case w.nPolled > 0:
		info.Mode = ModeMixed
	}
	if w.nPolled > 0 {
		info.Interval = w.wo.FallbackPoll
		var why []string
		if w.limitHit != "" {
			why = append(why, w.limitHit)
		}
		if len(w.netMounts) > 0 {
			why = append(why, "network file system")
		}
		info.Reason = fmt.Sprintf("%d of %d directories polled (%s)", w.nPolled, w.nPolled+w.nWatched, strings.Join(why, ", "))
	}
	return info
}

// adopt takes in what a walk found: every directory gets a watch (or is
// polled), every node its record. A directory changed since start (every
// one when start is zero) is listed again, and a node whose files moved since it
// was read is re-read, so nothing falls between the walk and the watch.
func (w *Watcher) adopt(walk *Walk, start time.Time) {
	for _, p := range walk.Problems {
		w.walkProbs[p.Path] = p
	}
	var recheck []*watchDir
	for _, dir := range walk.Dirs {
		if _, ok := w.dirs[dir]; ok {
			continue
		}
		d := w.addDir(dir)
		if d == nil {
			continue
		}
		if start.IsZero() || !d.mtime.Before(start) {
			recheck = append(recheck, d)
		}
	}
	for _, n := range walk.Nodes {
		if _, ok := w.dirs[n.InfraDir]; !ok {
			continue
		}
		ln := &liveNode{n: n, sigs: nodeSigs(n.InfraDir), regOff: -1}
		w.nodes[n.InfraDir] = ln
		w.touched[n.InfraDir] = true
		if stale(ln) || n.RegistryCompacting != "" && w.wo.RecoverCompactions {
			w.dirty[n.InfraDir] |= kindNode
		}
	}
	for _, d := range recheck {
		w.relist(d)
	}
	w.forest = nil
}

// stale reports whether a node's files moved since its facts were read.
func stale(ln *liveNode) bool {
	n := ln.n
	name := protocol.HeartbeatFile
	if n.Legacy {
		name = protocol.RunningFile
	}
	if s, ok := ln.sigs.get(name); ok && !s.mtime.Equal(n.BeatMtime) {
		return true
	}
	if s, ok := ln.sigs.get(protocol.RegistryFile); ok && (s.size != n.RegistrySize || !s.mtime.Equal(n.RegistryMtime)) {
		return true
	}
	return false
}

// addDir registers a directory: an fsnotify watch when possible, else it
// is polled. nil when the directory is gone. A directory on a network file
// system is polled (SPEC §1): the file system is asked of the roots and of
// mount points below them (a device other than the parent's); the others
// are on their parent's.
func (w *Watcher) addDir(dir string) *watchDir {
	d := &watchDir{path: dir, root: w.rootOf(dir)}
	parent := w.dirs[filepath.Dir(dir)]
	if dir == d.root || parent == nil {
		parent = nil
		d.netFS = w.networkMount(dir)
	} else {
		d.netFS = parent.netFS
	}
	watched := false
	if w.fsw != nil && d.netFS == "" && w.limitHit == "" {
		if w.wo.MaxWatches > 0 && w.nWatched >= w.wo.MaxWatches {
			w.limitHit = fmt.Sprintf("watch limit of %d reached", w.wo.MaxWatches)
		} else if err := w.wo.addWatch(w.fsw, dir); err == nil {
			watched = true
		} else if errors.Is(err, syscall.ENOSPC) {
			w.limitHit = fmt.Sprintf("inotify watch limit reached after %d watches", w.nWatched)
		} else if errors.Is(err, fs.ErrNotExist) {
			return nil
		} else {
			w.addWalkProblem(dir, fmt.Errorf("watch: %w", err))
		}
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		if watched {
			_ = w.fsw.Remove(dir)
		}
		return nil
	}
	d.mtime = fi.ModTime()
	d.dev = w.wo.devOf(dir, fi)
	if parent != nil && d.dev != parent.dev && d.netFS == "" {
		if d.netFS = w.networkMount(dir); d.netFS != "" && watched {
			_ = w.fsw.Remove(dir)
			watched = false
		}
	}
	d.polled = !watched
	if d.polled {
		w.nPolled++
	} else {
		w.nWatched++
	}
	w.dirs[dir] = d
	if parent, ok := w.dirs[filepath.Dir(dir)]; ok && dir != d.root {
		parent.subdirs.add(filepath.Base(dir))
	}
	return d
}

// networkMount names the network file system dir is on (recording it for
// the header's warning), or "".
func (w *Watcher) networkMount(dir string) string {
	name := w.netFS(dir)
	if name != "" {
		w.netMounts[dir] = name
	}
	return name
}

// rootOf is the path of the root holding dir.
func (w *Watcher) rootOf(dir string) string {
	best := ""
	for _, r := range w.roots {
		if within(r.Path, dir) && len(r.Path) > len(best) {
			best = r.Path
		}
	}
	return best
}

// dropDir forgets a directory and everything below it.
func (w *Watcher) dropDir(dir string) {
	d, ok := w.dirs[dir]
	if !ok {
		return
	}
	// Each drop removes its name from d.subdirs: walk a copy.
	for _, sub := range slices.Clone(d.subdirs) {
		w.dropDir(filepath.Join(dir, sub))
	}
	delete(w.dirs, dir)
	delete(w.netMounts, dir)
	if d.polled {
		w.nPolled--
	} else {
		w.nWatched--
		// The kernel drops the watch of a deleted directory itself; a
		// renamed one is removed here. Either way the error is moot.
		_ = w.fsw.Remove(dir)
	}
	if parent, ok := w.dirs[filepath.Dir(dir)]; ok {
		parent.subdirs.remove(filepath.Base(dir))
	}
	if _, ok := w.nodes[dir]; ok {
		delete(w.nodes, dir)
		w.forest = nil
	}
	if filepath.Base(dir) == protocol.MiddleDir {
		if pln := w.nodes[filepath.Dir(dir)]; pln != nil {
			if _, had := pln.sigs.get(middleBlocked); had {
				w.dirty[pln.n.InfraDir] |= kindNode // its sentinel went with it
			}
		}
	}
	delete(w.dirty, dir)
	delete(w.unread, dir)
	for p := range w.walkProbs {
		if within(dir, p) {
			delete(w.walkProbs, p)
		}
	}
	if dir == d.root {
		w.addWalkProblem(dir, errors.New("root vanished; it is looked for again at every poll"))
	}
}

// findLostRoots discovers again the roots that vanished while watched (a
// root deleted and made again): nothing watches a root's parent, so they
// are looked for at every poll. A root present costs a map lookup.
func (w *Watcher) findLostRoots() {
	for _, r := range w.roots {
		if _, held := w.dirs[r.Path]; held {
			continue
		}
		if fi, err := os.Stat(r.Path); err != nil || !fi.IsDir() {
			continue
		}
		delete(w.walkProbs, r.Path)
		w.discover(r.Path)
	}
}

// discover walks a directory that appeared and adopts what it holds;
// nothing inside a worktree (SPEC §1).
func (w *Watcher) discover(dir string) {
	if w.inWorktree(dir) {
		return
	}
	walk, err := DiscoverDir(w.roots, dir, w.opts)
	if err != nil {
		w.addWalkProblem(dir, err)
		return
	}
	// A new subtree is small and still being filled: list every directory
	// again once its watch is on.
	w.adopt(walk, time.Time{})
}

// gitEntry marks a git worktree (a file or a directory), which discovery
// never descends into.
const gitEntry = ".git"

// inWorktree reports whether dir lies below a directory that holds a `.git`
// entry (its root excepted, as the walk excepts it). DiscoverDir checks only
// the names on the way, so this asks the disk: a checkout makes its
// directories after its `.git`, and directories appear rarely.
func (w *Watcher) inWorktree(dir string) bool {
	root := w.rootOf(dir)
	if root == "" {
		return false
	}
	for p := filepath.Dir(dir); p != root && within(root, p); p = filepath.Dir(p) {
		if _, err := os.Lstat(filepath.Join(p, gitEntry)); err == nil {
			return true
		}
	}
	return false
}

// relist lists a directory again: new subdirectories are discovered,
// vanished ones dropped, and the infra dir re-read.
func (w *Watcher) relist(d *watchDir) {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			w.dropDir(d.path)
		}
		return
	}
	seen := map[string]bool{}
	known := make(map[string]bool, len(d.subdirs))
	for _, name := range d.subdirs {
		known[name] = true
	}
	// A worktree's own files may matter (it may be a node), its
	// directories never do: as if it had none, the known ones are dropped.
	worktree := d.path != d.root && slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == gitEntry })
	isNode, moved := false, false
	ln := w.nodes[d.path]
	for _, e := range entries {
		name := e.Name()
		if name == protocol.HeartbeatFile || name == protocol.RunningFile {
			isNode = true
		}
		if !e.IsDir() {
			// A file of the node that was not there when it was read.
			if ln != nil && kindOf(name) != 0 {
				if _, had := ln.sigs.get(name); !had {
					moved = true
				}
			}
			continue
		}
		if worktree {
			continue
		}
		seen[name] = true
		if !known[name] {
			if _, ok := w.dirs[filepath.Join(d.path, name)]; !ok {
				w.discover(filepath.Join(d.path, name))
			}
		}
	}
	for _, name := range slices.Clone(d.subdirs) {
		if !seen[name] {
			w.dropDir(filepath.Join(d.path, name))
		}
	}
	if filepath.Base(d.path) == protocol.MiddleDir {
		// The sentinel is its parent's: the parent's signatures say whether
		// it was there when the parent was read.
		if pln := w.nodes[filepath.Dir(d.path)]; pln != nil {
			_, had := pln.sigs.get(middleBlocked)
			has := slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == protocol.BlockedFile })
			if had != has {
				w.dirty[pln.n.InfraDir] |= kindNode
			}
		}
	}
	switch {
	case isNode != (ln != nil), moved:
		w.dirty[d.path] |= kindNode
	case ln != nil:
		w.restatNode(ln) // replaced or removed files show in their signatures
	}
}

// restat compares what is held with the disk: every directory's mtime
// (relisting the changed ones) and every node's files. polledOnly limits it
// to the polled directories (the poll tick); an overflow or Refresh covers
// all of them.
func (w *Watcher) restat(polledOnly bool) {
	dirs := make([]*watchDir, 0, len(w.dirs))
	for _, d := range w.dirs {
		if !polledOnly || d.polled {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		if _, still := w.dirs[d.path]; !still {
			continue // dropped with a parent meanwhile
		}
		fi, err := os.Lstat(d.path)
		if err != nil {
			w.dropDir(d.path)
			continue
		}
		if !fi.ModTime().Equal(d.mtime) {
			d.mtime = fi.ModTime()
			w.relist(d)
		}
		if base := filepath.Base(d.path); base == protocol.MiddleDir {
			if ln := w.nodes[filepath.Dir(d.path)]; ln != nil {
				w.restatNode(ln)
			}
		}
		if ln := w.nodes[d.path]; ln != nil {
			w.restatNode(ln)
		}
	}
}

// restatNode stats the files a node was read from and marks what moved.
func (w *Watcher) restatNode(ln *liveNode) {
	dir := ln.n.InfraDir
	for _, e := range ln.sigs {
		name, old := e.name, e.sig
		sig, err := statSig(filepath.Join(dir, name))
		if err != nil {
			w.dirty[dir] |= kindNode
			continue
		}
		if sig == old {
			continue
		}
		switch kind := kindOf(filepath.Base(name)); {
		case kind == kindBeat && sig.ino == old.ino && sig.size == old.size:
			w.dirty[dir] |= kindBeat
		case kind == kindActivity || kind == kindRegistry:
			w.dirty[dir] |= kind
		default:
			w.dirty[dir] |= kindNode
		}
	}
}

func (w *Watcher) addWalkProblem(path string, err error) {
	w.walkProbs[path] = model.Problem{Path: path, Error: oneLine(err.Error())}
	w.forest = nil
}

// middleBlocked is the blocked sentinel's other place, relative to the
// infra dir.
var middleBlocked = filepath.Join(protocol.MiddleDir, protocol.BlockedFile)

// nodeSigs stats the files of an infra dir that matter for its facts.
func nodeSigs(dir string) fileSigs {
	var sigs fileSigs
	entries, err := os.ReadDir(dir)
	if err != nil {
		return sigs
	}
	for _, e := range entries {
		name := e.Name()
		if name == protocol.MiddleDir {
			if s, err := statSig(filepath.Join(dir, middleBlocked)); err == nil {
				sigs.set(middleBlocked, s)
			}
			continue
		}
		if kindOf(name) == 0 || e.IsDir() {
			continue
		}
		if s, err := statSig(filepath.Join(dir, name)); err == nil {
			sigs.set(name, s)
		}
	}
	return sigs
}

func statSig(path string) (fileSig, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileSig{}, err
	}
	return sigOf(fi), nil
}

func sigOf(fi os.FileInfo) fileSig {
	return fileSig{mtime: fi.ModTime(), size: fi.Size(), ino: fileIno(fi)}
}
