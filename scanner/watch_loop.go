package scanner

// The Run loop: fsnotify events become marks of what to read again
// (handleEvent), and marks become updates at most every debounce (flush).
// The first event of a burst is published at once, the rest of the burst
// coalesces into one more update; ticks re-classify without file IO and
// polls re-stat what inotify cannot watch.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/dispatchtop/dispatchtop/protocol"
)

// Run follows the roots until ctx is done or Close is called, then releases
// the watches and closes Updates. It may be called once, and not after Close.
func (w *Watcher) Run(ctx context.Context) error {
	if !w.ran.CompareAndSwap(false, true) {
		return errors.New("watch: Run called twice or after Close")
	}
	defer close(w.updates)
	defer w.release()

	tick := time.NewTimer(untilNextTick(time.Now(), w.wo.Tick))
	defer tick.Stop()
	poll := time.NewTicker(w.wo.FallbackPoll)
	defer poll.Stop()
	storeRefresh := time.NewTicker(w.wo.StoreRefresh)
	defer storeRefresh.Stop()
	flush := time.NewTimer(time.Hour)
	flush.Stop()
	defer flush.Stop()
	flushArmed := false
	// settle fires when a store whose read had a commit pending is due to
	// be looked at again (watch_stores.go): no event says the commit was
	// marked; or when a paced store's last read is a StorePace old.
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	defer settle.Stop()
	armSettle := func() {
		if at, ok := w.nextStoreDue(); ok {
			settle.Reset(time.Until(at))
		} else {
			settle.Stop()
		}
	}
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
		if len(w.nodes.toRead) == 0 && len(w.nodes.unpublished) == 0 && len(w.stores.toRead) == 0 && !w.built.stale {
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
		armSettle()
		batch, tickDue = eventBatch{}, false
	}

	// A store changed between its first read and its watch going on is
	// seen here, its signatures having been taken before the read.
	w.restatStores(false)
	armSettle()
	afterChange()

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
				w.restatStores(false)
			} else {
				w.addWalkProblem("fsnotify", fmt.Errorf("watch: %w", err))
			}
			afterChange()
		case <-flush.C:
			flushArmed = false
			w.flush(batch, tickDue)
			armSettle()
			batch, tickDue = eventBatch{}, false
		case <-settle.C:
			now := time.Now()
			w.settleStores(now)
			w.paceStores(now)
			armSettle()
			afterChange()
		case <-poll.C:
			if w.dirs.nPolled > 0 {
				w.restat(true)
			}
			w.findLostRoots()
			w.restatStores(false)
			// A failed read may have changed nothing on disk (EIO, EMFILE):
			// no event or mtime would bring the node back.
			for dir := range w.nodes.readFailed {
				w.nodes.toRead[dir] |= kindNode
			}
			afterChange()
		case <-storeRefresh.C:
			if w.refreshStores() {
				afterChange()
			}
		case <-w.refresh:
			w.restat(false)
			w.findLostRoots()
			w.restatStores(true)
			w.flush(eventBatch{}, tickDue)
			armSettle()
			tickDue = false
		case <-tick.C:
			tick.Reset(untilNextTick(time.Now(), w.wo.Tick))
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

// untilNextTick is how long from now to the clock's next whole multiple of
// every (its next whole second for the default tick): the dashboard ticks
// on the clock's whole seconds too, so that both wake the process together
// once a second, not twice apart (SPEC §8 idle CPU).
func untilNextTick(now time.Time, every time.Duration) time.Duration {
	return every - now.Sub(now.Truncate(every))
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
	w.readStores(w.now())
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
	if len(w.stores.byDir) > 0 {
		w.markStores(path, ev.Op)
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		if _, ok := w.dirs.byPath[path]; ok {
			w.dropDir(path)
			return
		}
	}
	dir, base := filepath.Dir(path), filepath.Base(path)
	if base == gitEntry {
		// The directory became a worktree, or stopped being one.
		if d := w.dirs.byPath[dir]; d != nil && !d.root {
			w.relist(d)
		}
		return
	}
	if ev.Has(fsnotify.Create) {
		if _, known := w.dirs.byPath[dir]; known {
			if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
				if _, have := w.dirs.byPath[path]; !have {
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
	w.nodes.toRead[dir] |= kind
}
