package ui

import (
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

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

// TestDashboardSaysWhenItLetGoOfAForest: SPEC §8 "100,000 nodes: ≤ 300 MiB
// RSS". Once the model has let go of a snapshot most of whose sessions the
// new one renewed (a fleet's transition, a rebuilt forest), it calls
// Options.Released, off its loop, so that the dashboard collects the old
// forest; not for an update that renewed a session or two, nor while
// paused (the update is held), but on the resume that shows it.
func TestDashboardSaysWhenItLetGoOfAForest(t *testing.T) {
	// renew copies the first k sessions of snap, as the watcher renews them.
	renew := func(snap *model.Snapshot, k int) *model.Snapshot {
		next := *snap
		next.Sessions = slices.Clone(snap.Sessions)
		for i := range k {
			c := *next.Sessions[i]
			next.Sessions[i] = &c
		}
		return &next
	}
	tests := []struct {
		name    string
		renewed int // of the 10 sessions
		paused  bool
		want    int // calls of Released
	}{
		{"every session renewed", 10, false, 1},
		{"most sessions renewed", 6, false, 1},
		{"half the sessions renewed", 5, false, 0},
		{"a session renewed", 1, false, 0},
		{"every session renewed while paused", 10, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := bigSnapshot(100) // 10 sessions of 10
			if len(first.Sessions) != 10 {
				t.Fatalf("%d sessions, want 10", len(first.Sessions))
			}
			var released atomic.Int32
			m := newTestModel(t, 120, 40, Options{Initial: first, Released: func() { released.Add(1) }})
			if tt.paused {
				m.Update(keyMsg("p"))
			}
			_, cmd := m.Update(updateMsg{update: model.Update{Snapshot: renew(first, tt.renewed)}})
			runCmds(cmd)
			if tt.paused {
				if got := released.Load(); got != 0 {
					t.Fatalf("Released called %d times while paused, the update held", got)
				}
				_, cmd := m.Update(keyMsg("p"))
				runCmds(cmd)
			}
			if got := released.Load(); got != int32(tt.want) {
				t.Errorf("Released called %d times, want %d", got, tt.want)
			}
		})
	}
}

// runCmds runs cmd and the commands of the batches it returns, dropping
// their messages.
func runCmds(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	if batch, ok := cmd().(tea.BatchMsg); ok {
		for _, c := range batch {
			runCmds(c)
		}
	}
}
