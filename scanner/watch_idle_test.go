package scanner

import (
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

// longThresholds keep every threshold of SPEC §3 far away, so that only a
// probe answer or the reason refresh can make a tick publish.
var longThresholds = model.Thresholds{Beat: time.Hour, Stale: 2 * time.Hour, KillAfter: 3 * time.Hour,
	ExitGrace: 0, StartTolerance: 2 * time.Second}

// SPEC §8 idle CPU: a tick with nothing due publishes nothing. Every
// reasonRefreshTicks ticks the sessions whose reasons quote an age as plain
// text ("registered but never started (2m00s ago)") are classified again;
// a fleet whose reasons quote only the beat's age, which every view moves
// at its own clock, publishes nothing then either.
func TestWatchIdleTickPublishesOnlyWhenDue(t *testing.T) {
	tests := []struct {
		name        string
		plainAge    bool // a reason quotes an age as plain text
		wantRefresh bool
	}{
		{"reasons quote only the beat's age: nothing to refresh", false, false},
		{"a reason quotes an age as plain text: refreshed", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			pid, started := self(t)
			for _, s := range []string{"a", "b", "c"} {
				writeHeartbeat(t, filepath.Join(root, s), pid, started, "running", "")
			}
			if tt.plainAge {
				registerNeverStarted(t, filepath.Join(root, "a"))
			}
			w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: longThresholds}, WatchOptions{Tick: 5 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			runWatcher(t, w)
			first := <-w.Updates()
			if got := quotesClock(first.Snapshot.Sessions[0]); got != tt.plainAge {
				t.Fatalf("session a quotes the clock: %v, want %v", got, tt.plainAge)
			}
			w.stats.mu.Lock()
			before, ticks0 := w.stats.publishes, w.stats.fulls
			w.stats.mu.Unlock()
			sawQuiet, sawRefreshTurn := false, false
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !(sawQuiet && sawRefreshTurn); {
				time.Sleep(2 * time.Millisecond)
				w.stats.mu.Lock()
				ticks, published := w.stats.fulls-ticks0, w.stats.publishes-before
				w.stats.mu.Unlock()
				// Ticks counted before the first refresh turn (one may be
				// counted in the same turn as the publish it made: stay one
				// short).
				if ticks > 2 && ticks < reasonRefreshTicks-1 {
					sawQuiet = true
					if published != 0 {
						t.Fatalf("%d idle ticks published %d snapshots, want none", ticks, published)
					}
				}
				if ticks > reasonRefreshTicks+1 {
					sawRefreshTurn = true
					if refreshed := published > 0; refreshed != tt.wantRefresh {
						t.Fatalf("%d ticks published %d snapshots; want a refresh: %v", ticks, published, tt.wantRefresh)
					}
				}
			}
			if !sawQuiet || !sawRefreshTurn {
				t.Fatalf("ticks did not run (quiet window seen %v, refresh turn seen %v)", sawQuiet, sawRefreshTurn)
			}
		})
	}
}

// flipProbe answers "alive, created at started" until gone is set.
type flipProbe struct {
	started time.Time
	gone    atomic.Bool
	lookups atomic.Int64
}

func (p *flipProbe) Lookup(pid int) liveness.ProcessInfo {
	p.lookups.Add(1)
	if p.gone.Load() {
		return liveness.ProcessInfo{}
	}
	return liveness.ProcessInfo{Exists: true, CreateTime: p.started}
}

// SPEC §3 dead (b): with no threshold near, a pid that stops answering is
// still noticed on the next tick, through the distinct-pid check.
func TestWatchTickNoticesPidGone(t *testing.T) {
	tr := watchTwoPidsGo(t, WatchOptions{Tick: 10 * time.Millisecond})
	if !hasTransition(tr, "a", model.StateRunning, model.StateDead) {
		t.Errorf("no running -> dead transition for a in %+v", tr)
	}
}

// A watcher told what its consumer shows of the transitions
// (WatchOptions.Transitions, the dashboard's event pane) lists only those:
// here b's, while a and b both die.
func TestWatcherListsOnlyTheTransitionsItsConsumerShows(t *testing.T) {
	onlyB := model.TransitionView{Shows: func(t model.Transition) bool { return t.ID == "b" }}
	tr := watchTwoPidsGo(t, WatchOptions{Tick: 10 * time.Millisecond, Transitions: onlyB})
	if !hasTransition(tr, "b", model.StateRunning, model.StateDead) {
		t.Errorf("no running -> dead transition for b in %+v", tr)
	}
	for _, x := range tr {
		if x.ID != "b" {
			t.Errorf("listed %s's transition %+v, which the consumer does not show", x.ID, x)
		}
	}
}

// watchTwoPidsGo watches two running nodes, a and b, an hour into their
// run, until the probe says both pids are gone; it returns the
// transitions of the update that showed both dead. ExitGrace 0: the
// heartbeats are already past it, so the pid decides.
func watchTwoPidsGo(t *testing.T, wo WatchOptions) []model.Transition {
	t.Helper()
	root := t.TempDir()
	started := time.Now().Add(-time.Hour)
	sec := float64(started.UnixNano()) / 1e9
	writeHeartbeat(t, filepath.Join(root, "a"), 4242, sec, "running", "")
	writeHeartbeat(t, filepath.Join(root, "b"), 4343, sec, "running", "")
	probe := &flipProbe{started: started}
	w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: longThresholds, Probe: probe}, wo)
	if err != nil {
		t.Fatal(err)
	}
	runWatcher(t, w)
	await(t, w, "running", nodeIs("a", model.StateRunning, "", false))
	probe.gone.Store(true)
	return await(t, w, "dead", func(s *model.Snapshot) bool {
		return s.Node("a").State == model.StateDead && s.Node("b").State == model.StateDead
	})
}
