package scanner

import (
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// TestReplacedSessionFreesItsCopy: SPEC §8 "memory at 10,000 nodes ≤ 100
// MiB RSS". A session copied again (a beat, or due on a tick) leaves its
// previous copy to the collector once the newer snapshot is read, though
// the other sessions are still shared with the snapshot that copy came
// from: when a fleet crosses a threshold together its sessions are copied
// one tick after another, and the whole previous forest must not stay until
// the last one is.
func TestReplacedSessionFreesItsCopy(t *testing.T) {
	root := t.TempDir()
	if err := treegen.Generate(root, 3, 4, 3, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	leadHB := filepath.Join(root, "20260308-000000", protocol.HeartbeatFile)
	// A reason quoting an age as text, so the refresh copies the session.
	registerNeverStarted(t, filepath.Join(root, "20260308-000000"))
	tests := []struct {
		name string
		copy func(t *testing.T, w *Watcher) // copies every session anew
	}{
		{"copied by the refresh of the ages its reasons quote as text", func(t *testing.T, w *Watcher) {
			w.due.ticks = reasonRefreshTicks - 1
			w.publish(w.now(), true)
		}},
	}
	w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: testThresholds}, WatchOptions{Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	beat := time.Now()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.copy(t, w)
			<-w.Updates()
			var freed atomic.Int64
			watched := 0
			session := w.Snapshot().Node("20260308-000000")
			if session == nil {
				t.Fatal("no session 20260308-000000")
			}
			session.Walk(func(n *model.Node) {
				watched++
				runtime.AddCleanup(n, func(f *atomic.Int64) { f.Add(1) }, &freed)
			})
			session = nil
			beat = beat.Add(time.Minute)
			setMtime(t, leadHB, beat)
			w.restat(false)
			w.flush(eventBatch{}, false)
			<-w.Updates()
			deadline := time.Now().Add(5 * time.Second) // a hang guard
			for freed.Load() < int64(watched) && time.Now().Before(deadline) {
				runtime.GC()
				time.Sleep(10 * time.Millisecond)
			}
			if got := freed.Load(); got != int64(watched) {
				t.Errorf("%d of the session's %d previous nodes still held after it was copied again", int64(watched)-got, watched)
			}
		})
	}
}
