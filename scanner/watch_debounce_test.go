package scanner

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §8 debounce at its default (short, for a touch right after an update
// to reach the screen within 60 ms): a stream of touches still makes at
// most one update per debounce, and one more for its tail, however fast
// the machine writes them; the count is bounded by the stream's own span.
func TestWatchStreamAtTheDefaultDebounceIsBounded(t *testing.T) {
	root := t.TempDir()
	pid, started := self(t)
	hb := writeHeartbeat(t, filepath.Join(root, "s"), pid, started, "running", "")
	w := newTestWatcher(t, WatchOptions{Tick: time.Hour}, root)
	<-w.Updates() // the initial snapshot
	w.stats.mu.Lock()
	before := w.stats.publishes
	w.stats.mu.Unlock()
	first := time.Now()
	const touches = 2000
	for i := range touches {
		setMtime(t, hb, first.Add(time.Duration(i)*time.Microsecond))
	}
	span := time.Since(first)
	want := first.Add((touches - 1) * time.Microsecond)
	await(t, w, "last touch", func(s *model.Snapshot) bool { return s.Node("s").BeatMtime.Equal(want) })
	time.Sleep(3 * DefaultDebounce) // any tail update is out
	w.stats.mu.Lock()
	got := w.stats.publishes - before
	w.stats.mu.Unlock()
	if bound := 2 + int(span/DefaultDebounce); got < 1 || got > bound {
		t.Errorf("%d touches over %s made %d updates, want 1 to %d (one per %s debounce, and the tail)",
			touches, span, got, bound, DefaultDebounce)
	}
}
