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
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

// Watch defaults.
const (
	DefaultTick = time.Second
	// DefaultDebounce is how long after an update the next one waits: a
	// touch right after an update waits it out, then the model and the
	// renderer's next frame (SPEC §8: on screen ≤ 60 ms after the write),
	// and a stream of events makes at most one update per debounce.
	DefaultDebounce     = 10 * time.Millisecond
	DefaultFallbackPoll = 2 * time.Second
	// DefaultStoreRefresh is well under the shortest stale of any source
	// (opencode-teams' 60 s): an agent whose sign of life lies outside its
	// store's watch paths never reads stalled for want of a read.
	DefaultStoreRefresh = 15 * time.Second
	// DefaultStorePace is the least spacing of two reads of one store: a
	// store written without pause (a bus at 100 messages/s, a table at 50
	// row updates/s) is read, published and drawn at most ten times a
	// second, each read taking in everything written since the last (SPEC
	// §8 live sources); the first write after a quiet StorePace is read
	// at once.
	DefaultStorePace = 100 * time.Millisecond
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
	// coalesces into one more update. 0 means DefaultDebounce.
	Debounce time.Duration
	// MaxWatches > 0 caps the fsnotify watches; directories past it are
	// polled (as when the kernel's inotify limit is hit).
	MaxWatches int
	// FallbackPoll is the interval for directories that cannot be watched
	// (watch limit, network file systems) when Poll is 0; 0 means 2 s.
	FallbackPoll time.Duration
	// StoreRefresh is how often every other system's store is read again
	// with no change seen (see refreshStores); 0 means DefaultStoreRefresh.
	StoreRefresh time.Duration
	// StorePace is the least spacing of two reads of one store (see
	// readStores); 0 means DefaultStorePace. The native roots are not
	// paced: a heartbeat's touch waits the debounce alone.
	StorePace time.Duration
	// RecoverCompactions lets the watcher finish what a compaction that
	// did not finish left (`.children.compacting`, SPEC §5.3): carry its
	// lines into `.children` and remove it. Off, the watcher writes nothing
	// and shows those lines from where they are (--readonly).
	RecoverCompactions bool
	// Transitions is what the consumer of Updates shows of them: an update
	// lists only those (model.DiffFor). The zero value lists every one.
	Transitions model.TransitionView

	// netFS replaces the statfs check of a root or mount point in tests: it
	// returns the name of the network file system the path is on, or "".
	netFS func(path string) string
	// devOf replaces the device number of a directory in tests (a new
	// device below a root is a mount point).
	devOf func(path string) uint64
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
	roots []Root // the native roots, followed directory by directory
	// allRoots are every root, the stores' included, in the order given.
	allRoots []Root
	probe    *liveness.CachingProbe
	// bySource are the thresholds of each registered source's nodes
	// (sourceThresholds), made once: opts never change.
	bySource map[string]*model.Thresholds
	// releaseProbe lets go of the processes the probe pinned.
	releaseProbe func()
	now          func() time.Time
	fsw          *fsnotify.Watcher // nil when everything is polled

	updates chan model.Update
	refresh chan struct{}
	closed  chan struct{} // closed by Close
	closing sync.Once
	latest  atomic.Pointer[model.Snapshot]
	ran     atomic.Bool
	stats   watchStats
	// walkMu guards the directory index and the node records while a
	// walk's workers add to them (walkTaker.walked); the goroutine owning
	// them waits for the walk meanwhile.
	walkMu sync.Mutex

	// Below: owned by the goroutine running Run (or NewWatcher before).
	dirs      dirIndex                 // every directory held: watched or polled
	nodes     nodeRecords              // every infra dir's facts and what to read again
	due       dueTracker               // when each session may change next
	stores    storeSet                 // roots of other sources, read whole
	owners    ownerBook                // the recorded owners of per-turn pids
	walkProbs map[string]model.Problem // problems of the walk and of reads, by path
	built     builtForest              // whether the forest's edges hold
	prev      *model.Snapshot          // the last published: its nodes hold the facts
	mode      model.WatchInfo
	lastFlush time.Time
}

// watchStats are counters for tests and benchmarks.
type watchStats struct {
	mu        sync.Mutex
	rebuilds  int
	publishes int
	rereads   int
	// storeReads counts the reads of each store since the watcher began,
	// by its root's path (the first read, NewWatcher's, is not counted).
	storeReads map[string]int
	// storeNodes counts the nodes of stores read again that the watcher
	// stamped with their root or compared with the last read's.
	storeNodes  int
	lastLatency time.Duration // first event of a batch -> update published
	lastWork    time.Duration // of lastLatency, handling the events and flushing (the rest is waiting)
	fullTime    time.Duration // spent in full publishes (ticks)
	fulls       int
	dueTime     time.Duration // of fullTime, finding what is due (the pids asked)
}

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
	if wo.StoreRefresh <= 0 {
		wo.StoreRefresh = DefaultStoreRefresh
	}
	if wo.StorePace <= 0 {
		wo.StorePace = DefaultStorePace
	}
	if wo.Poll > 0 {
		wo.FallbackPoll = wo.Poll
	}
	if wo.addWatch == nil {
		wo.addWatch = func(fsw *fsnotify.Watcher, dir string) error { return fsw.Add(dir) }
	}
	// The nodes keep none of their files' bytes: at 100,000 nodes they
	// weigh tens of MB, and only the detail pane shows them, which reads
	// them when it opens.
	opts.OmitRaw = true
	if wo.readNodeDir == nil {
		wo.readNodeDir = func(root, dir string) (*model.Node, error) { return readNodeDir(root, dir, true) }
	}
	if opts.Thresholds == (model.Thresholds{}) {
		opts.Thresholds = model.DefaultThresholds()
	}
	w := &Watcher{
		opts:      opts,
		wo:        wo,
		now:       opts.Now,
		updates:   make(chan model.Update, 1),
		refresh:   make(chan struct{}, 1),
		closed:    make(chan struct{}),
		dirs:      newDirIndex(wo.netFS),
		nodes:     newNodeRecords(),
		due:       newDueTracker(),
		walkProbs: map[string]model.Problem{},
		bySource:  sourceThresholds(opts, opts.Thresholds),
	}
	if w.now == nil {
		w.now = time.Now
	}
	// A probe result is reused for a little under one tick, so each tick
	// asks the system at most once per pid; the system's processes are
	// pinned where the platform allows, which makes that question cheap.
	probe := opts.Probe
	w.releaseProbe = func() {}
	if probe == nil {
		probe, w.due.pins, w.releaseProbe = liveness.PinProcesses(liveness.SystemProbe{})
	}
	w.probe = liveness.NewCachingProbe(probe, wo.Tick*9/10)
	w.due.probe, w.due.th = w.probe, opts.Thresholds
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

	// Directory mtimes come from the kernel's coarse clock and may lag
	// time.Now by a tick: look back a generous margin.
	walkOpts, taker := w.walkOptions(time.Now().Add(-2 * time.Second))
	walk, stores, err := gather(walkOpts)
	if err != nil {
		w.release()
		return nil, fmt.Errorf("watch: %w", err)
	}
	w.roots, w.allRoots = walkedRoots(walk.Roots), walk.Roots
	w.adoptStores(stores)
	taker.adopt(walk)
	w.processDirty()
	// Every node is published below: the marks go, and with them the
	// room a map keeps for as many as it ever held.
	w.nodes.unpublished = map[string]bool{}
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

// release gives back what the watcher holds of the system: its watches (and
// fsnotify's reader goroutine) and its process pins.
func (w *Watcher) release() {
	if w.fsw != nil {
		_ = w.fsw.Close()
	}
	w.releaseProbe()
}

func (w *Watcher) addWalkProblem(path string, err error) {
	w.walkProbs[path] = model.Problem{Path: path, Error: termtext.OneLine(err.Error(), 0)}
	w.built.stale = true
}
