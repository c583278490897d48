package scanner

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/middle"
)

// pacedHome is a middle home of one running workflow and its writer, which
// bumps the row as middle does on every write (updated_at, the hook's beat).
type pacedHome struct {
	home string
	db   *sql.DB
	beat int64 // the last beat written, in ms
}

func newPacedHome(t *testing.T) *pacedHome {
	t.Helper()
	h := &pacedHome{home: filepath.Join(t.TempDir(), ".middle")}
	h.db = storefixtures.NewDB(t, filepath.Join(h.home, "db.sqlite3"), storefixtures.MiddleMigrations)
	h.beat = time.Now().Add(-time.Minute).UnixMilli()
	if _, err := h.db.Exec(`INSERT INTO workflows (id, kind, repo, adapter, state, created_at, updated_at, last_heartbeat)
		VALUES ('wf-1', 'implementation', 'acme/api', 'claude', 'running', ?, ?, ?)`, h.beat, h.beat, h.beat); err != nil {
		t.Fatal(err)
	}
	return h
}

// write commits a newer beat into the row and returns it.
func (h *pacedHome) write(t *testing.T) time.Time {
	t.Helper()
	h.beat = max(h.beat+1, time.Now().UnixMilli())
	if _, err := h.db.Exec(`UPDATE workflows SET updated_at = ?, last_heartbeat = ? WHERE id = 'wf-1'`, h.beat, h.beat); err != nil {
		t.Fatal(err)
	}
	return time.UnixMilli(h.beat)
}

// shows reports whether a snapshot holds the home's row at beat.
func (h *pacedHome) shows(beat time.Time) func(*model.Snapshot) bool {
	return func(s *model.Snapshot) bool {
		for _, n := range s.Nodes() {
			if n.Source == string(sources.Middle) && n.Root == h.home {
				return n.BeatMtime.Equal(beat)
			}
		}
		return false
	}
}

// watchPaced follows the homes with polling an hour apart (only the
// writers' events bring a read) and no store refresh in the test's time.
func watchPaced(t *testing.T, pace time.Duration, homes ...*pacedHome) *Watcher {
	t.Helper()
	src := middle.New()
	src.PaneLookup = func() (map[string]middle.Session, error) { return map[string]middle.Session{}, nil }
	var roots []string
	for _, h := range homes {
		roots = append(roots, h.home)
	}
	w, err := NewWatcher(Options{Roots: roots, Sources: []sources.Source{src}},
		WatchOptions{FallbackPoll: time.Hour, StoreRefresh: time.Hour, StorePace: pace})
	if err != nil {
		t.Fatal(err)
	}
	runWatcher(t, w)
	return w
}

// storeReads is how many times the watcher has read the store at root
// since it began.
func storeReads(w *Watcher, root string) int {
	w.stats.mu.Lock()
	defer w.stats.mu.Unlock()
	return w.stats.storeReads[root]
}

// drainUpdates takes the updates a watcher publishes until stop is closed,
// as a dashboard does while a test writes; the channel it returns is
// closed once it stopped.
func drainUpdates(w *Watcher, stop <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-w.Updates():
			case <-stop:
				return
			}
		}
	}()
	return done
}

// SPEC §8, §10: a store written without pause is read at most once per
// StorePace: a second of writes, each one a commit, makes no more reads
// than the pace allows (a read every debounce would be a hundred), and the
// last write is read at the pace's trailing edge: on screen within
// StorePace and the debounce of it, give or take a loaded machine's
// scheduling (never at the next poll, an hour away, nor never).
func TestWatchStoreWrittenWithoutPauseIsReadAtMostOncePerPace(t *testing.T) {
	const stream, slack = time.Second, 250 * time.Millisecond
	h := newPacedHome(t)
	w := watchPaced(t, 0, h)
	stop := make(chan struct{})
	drained := drainUpdates(w, stop)
	before := storeReads(w, h.home)
	writes := 0
	for start := time.Now(); time.Since(start) < stream; writes++ {
		h.write(t)
	}
	during := storeReads(w, h.home) - before
	close(stop)
	<-drained
	// Points at least StorePace apart in one second: at most 11.
	if max := int(stream/DefaultStorePace) + 1; during > max {
		t.Errorf("%d writes in %v made %d reads of the store, want at most %d (one per %v)", writes, stream, during, max, DefaultStorePace)
	}
	if during == 0 {
		t.Errorf("%d writes in %v made no read of the store: the pace's leading edge is read at once", writes, stream)
	}
	last := h.write(t)
	wrote := time.Now()
	awaitWithin(t, w, 5*time.Second, "the stream's last write", h.shows(last))
	if took, want := time.Since(wrote), DefaultStorePace+DefaultDebounce; took > want+slack {
		t.Errorf("the last write was published %v after it, want within %v (+%v of scheduling)", took, want, slack)
	}
}

// SPEC §10: the first write after a quiet StorePace is read at once, not
// at the end of a pace: pacing holds back a store written again soon, never
// the leading edge. The pace is long here, so that a write held back for
// it shows plainly even on a loaded machine.
func TestWatchStoreWriteAfterQuietIsNotPaced(t *testing.T) {
	const pace = 2 * time.Second
	h := newPacedHome(t)
	w := watchPaced(t, pace, h)
	first := h.write(t)
	awaitWithin(t, w, 5*time.Second, "the first write", h.shows(first))
	read := storeReads(w, h.home)
	// Quiet for a pace: the store's last read is a pace old.
	time.Sleep(pace)
	second := h.write(t)
	wrote := time.Now()
	awaitWithin(t, w, 5*time.Second, "the write after quiet", h.shows(second))
	if took := time.Since(wrote); took >= pace/2 {
		t.Errorf("the write after a quiet %v was published %v after it, want at once (well within the pace)", pace, took)
	}
	if got := storeReads(w, h.home) - read; got < 1 {
		t.Errorf("the write after quiet made %d reads", got)
	}
}

// SPEC §10: stores are paced each on its own: one written without pause
// holds back its own reads, never another's. A write into the quiet store
// right after the busy one was read is read at once, though the busy
// store's pace (long here) has most of its time still to run.
func TestWatchStoresArePacedIndependently(t *testing.T) {
	const pace = 2 * time.Second
	busy, quiet := newPacedHome(t), newPacedHome(t)
	w := watchPaced(t, pace, busy, quiet)
	stop := make(chan struct{})
	streamed := make(chan error, 1)
	go func() {
		defer close(streamed)
		for {
			select {
			case <-stop:
				return
			default:
			}
			busy.beat = max(busy.beat+1, time.Now().UnixMilli())
			if _, err := busy.db.Exec(`UPDATE workflows SET updated_at = ?, last_heartbeat = ? WHERE id = 'wf-1'`, busy.beat, busy.beat); err != nil {
				streamed <- err
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	defer func() {
		close(stop)
		if err := <-streamed; err != nil {
			t.Errorf("the busy store's writer: %v", err)
		}
	}()
	// The busy store read once (its leading edge): its pace has begun.
	busyReads := storeReads(w, busy.home)
	await(t, w, "a read of the busy store", func(*model.Snapshot) bool { return storeReads(w, busy.home) > busyReads })
	written := quiet.write(t)
	wrote := time.Now()
	awaitWithin(t, w, 5*time.Second, "the quiet store's write", quiet.shows(written))
	if took := time.Since(wrote); took >= pace/2 {
		t.Errorf("the quiet store's write was published %v after it, want at once: the busy store's pace (%v) is its own", took, pace)
	}
	if got := storeReads(w, busy.home) - busyReads; got > 2 {
		t.Errorf("the busy store was read %d times within its pace of %v, want at most 2", got, pace)
	}
	if got := storeReads(w, quiet.home); got > 2 {
		t.Errorf("the quiet store, written once, was read %d times", got)
	}
}
