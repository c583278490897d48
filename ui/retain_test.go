package ui

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// TestDashboardKeepsNoOlderSnapshot: SPEC §8 "memory at 10,000 nodes ≤ 100
// MiB RSS". Once a newer snapshot is shown, the model holds no node of an
// older one: not in its rows, nor in the rows on screen, nor in the array
// the next frame's rows go into. The engine copies the whole forest into
// one array, so one node held keeps every node of its snapshot.
func TestDashboardKeepsNoOlderSnapshot(t *testing.T) {
	tests := []struct {
		name    string
		updates int // snapshots shown after the first
	}{
		{"one newer snapshot", 1},
		{"two newer snapshots", 2},
		{"three newer snapshots", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := bigSnapshot(200)
			var freed atomic.Int64
			watched := 0
			for _, s := range first.Sessions {
				s.Walk(func(n *model.Node) {
					watched++
					runtime.AddCleanup(n, func(f *atomic.Int64) { f.Add(1) }, &freed)
				})
			}
			m := newTestModel(t, 120, 40, Options{Initial: first})
			m.View()
			for range tt.updates {
				m.Update(updateMsg{update: model.Update{Snapshot: bigSnapshot(200)}})
				m.View()
			}
			deadline := time.Now().Add(5 * time.Second)
			for freed.Load() < int64(watched) && time.Now().Before(deadline) {
				runtime.GC()
				time.Sleep(10 * time.Millisecond)
			}
			if got := freed.Load(); got != int64(watched) {
				t.Errorf("%d of the first snapshot's %d nodes still held after %d newer snapshots shown", int64(watched)-got, watched, tt.updates)
			}
			runtime.KeepAlive(m)
		})
	}
}
