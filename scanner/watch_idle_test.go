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

// SPEC §8 idle CPU: a tick with nothing due publishes nothing; the reasons'
// ages are refreshed in one snapshot every reasonRefreshTicks ticks.
func TestWatchIdleTickPublishesOnlyWhenDue(t *testing.T) {
	root := t.TempDir()
	pid, started := self(t)
	for _, s := range []string{"a", "b", "c"} {
		writeHeartbeat(t, filepath.Join(root, s), pid, started, "running", "")
	}
	w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: longThresholds}, WatchOptions{Tick: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runWatcher(t, w)
	<-w.Updates()
	w.stats.mu.Lock()
	before, ticks0 := w.stats.publishes, w.stats.fulls
	w.stats.mu.Unlock()
	sawQuiet, sawRefresh := false, false
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !(sawQuiet && sawRefresh); {
		time.Sleep(2 * time.Millisecond)
		w.stats.mu.Lock()
		ticks, published := w.stats.fulls-ticks0, w.stats.publishes-before
		w.stats.mu.Unlock()
		// Ticks counted before the first refresh turn (one may be counted
		// in the same turn as the publish it made: stay one short).
		if ticks > 2 && ticks < reasonRefreshTicks-1 {
			sawQuiet = true
			if published != 0 {
				t.Fatalf("%d idle ticks published %d snapshots, want none", ticks, published)
			}
		}
		if ticks > reasonRefreshTicks+1 {
			sawRefresh = true
			if published < 1 {
				t.Fatalf("%d ticks published nothing: the reasons' ages were never refreshed", ticks)
			}
		}
	}
	if !sawQuiet || !sawRefresh {
		t.Fatalf("ticks did not run (quiet window seen %v, refresh seen %v)", sawQuiet, sawRefresh)
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
	root := t.TempDir()
	started := time.Now().Add(-time.Hour)
	sec := float64(started.UnixNano()) / 1e9
	writeHeartbeat(t, filepath.Join(root, "a"), 4242, sec, "running", "")
	writeHeartbeat(t, filepath.Join(root, "b"), 4343, sec, "running", "")
	probe := &flipProbe{started: started}
	// ExitGrace 0: the heartbeats are already past it, so the pid decides.
	w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: longThresholds, Probe: probe},
		WatchOptions{Tick: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runWatcher(t, w)
	await(t, w, "running", nodeIs("a", model.StateRunning, "", false))
	probe.gone.Store(true)
	tr := await(t, w, "dead", func(s *model.Snapshot) bool {
		return s.Node("a").State == model.StateDead && s.Node("b").State == model.StateDead
	})
	if !hasTransition(tr, "a", model.StateRunning, model.StateDead) {
		t.Errorf("no running -> dead transition for a in %+v", tr)
	}
}
