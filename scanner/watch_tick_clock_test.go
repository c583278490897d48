package scanner

import (
	"context"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"
)

// SPEC §8 idle CPU: the watcher ticks on the clock's whole seconds, as the
// dashboard's tick does, so that both wake the process once a second
// together, not twice apart: the first tick comes at the next whole second
// however far past one the watcher started, and the next a second later.
func TestWatchTickComesAtTheClocksNextSecond(t *testing.T) {
	for _, past := range []time.Duration{0, 300 * time.Millisecond, 999 * time.Millisecond} {
		t.Run(past.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				root := t.TempDir()
				pid, started := self(t)
				writeHeartbeat(t, filepath.Join(root, "s"), pid, started, "running", "")
				// Polled: an fsnotify reader would block in a system call,
				// which the fake clock cannot wait out.
				w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: testThresholds},
					WatchOptions{Poll: time.Hour, Tick: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(past) // the fake clock starts on a whole second
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- w.Run(ctx) }()
				go func() {
					for range w.Updates() {
					}
				}()
				ticks := func() int {
					synctest.Wait()
					w.stats.mu.Lock()
					defer w.stats.mu.Unlock()
					return w.stats.fulls
				}
				start := time.Now()
				for k := 1; k <= 2; k++ {
					next := start.Truncate(time.Second).Add(time.Duration(k) * time.Second)
					time.Sleep(time.Until(next) - time.Millisecond)
					if got := ticks(); got != k-1 {
						t.Errorf("%d ticks a millisecond before whole second %d (started %s past one), want %d", got, k, past, k-1)
					}
					time.Sleep(time.Until(next))
					if got := ticks(); got != k {
						t.Errorf("%d ticks on whole second %d (started %s past one), want %d", got, k, past, k)
					}
				}
				cancel()
				if err := <-done; err != nil {
					t.Error(err)
				}
			})
		})
	}
}
