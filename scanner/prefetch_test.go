package scanner

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

// countingProbe records every pid it is asked about; safe for the parallel
// lookups of prefetch.
type countingProbe struct {
	mu    sync.Mutex
	asked map[int]int
}

func (p *countingProbe) Lookup(pid int) liveness.ProcessInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked[pid]++
	return liveness.ProcessInfo{Exists: pid%2 == 0, CreateTime: time.Unix(100, 0)}
}

func TestPrefetchAsksOncePerPidWhosePidIsDecisive(t *testing.T) {
	now := time.Unix(10_000, 0)
	th := model.DefaultThresholds()
	node := func(id string, pid int, age time.Duration) *model.Node {
		return &model.Node{ID: id, HasHeartbeat: true, BeatMtime: now.Add(-age),
			Heartbeat: &model.Heartbeat{PID: pid, Status: model.StatusRunning, Started: 100}}
	}
	lead := node("A", 10, time.Minute)
	lead.Children = []*model.Node{
		node("A/1", 10, 3*time.Minute),         // same pid as the lead: asked once
		node("A/2", 11, time.Second),           // fresh beat: running without asking
		node("A/3", 12, 10*time.Second),        // past the exit grace: asked
		node("A/4", 0, time.Hour),              // no pid: nothing to ask
		{ID: "A/5", State: model.StateMissing}, // no heartbeat at all
	}
	tests := []struct {
		name string
		th   model.Thresholds
		want map[int]int
	}{
		{"decisive pids, each once", th, map[int]int{10: 1, 12: 1}},
		{"no pid check asks nothing", model.Thresholds{NoPidCheck: true, ExitGrace: th.ExitGrace}, map[int]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := &countingProbe{asked: map[int]int{}}
			probe := prefetch([]*model.Node{lead}, base, now, tt.th)
			if len(base.asked) != len(tt.want) {
				t.Fatalf("asked %v, want %v", base.asked, tt.want)
			}
			for pid, n := range tt.want {
				if base.asked[pid] != n {
					t.Errorf("pid %d asked %d times, want %d", pid, base.asked[pid], n)
				}
			}
			// Answers come from the prefetch; other pids still reach the base.
			if got := probe.Lookup(12); got.Exists != (12%2 == 0) {
				t.Errorf("pid 12 answer %+v", got)
			}
			probe.Lookup(77)
			if base.asked[77] != 1 {
				t.Errorf("a pid not prefetched must reach the base probe")
			}
		})
	}
}

// SPEC §3.1, §10: thresholds are per node. The prefetch asks about a pid
// when the node's own exit grace, not the global one, makes it decisive:
// a source with a shorter grace has its pid looked up ahead, and one with
// a longer grace is left alone until its own grace has passed.
func TestPrefetchJudgesEachNodeByItsOwnExitGrace(t *testing.T) {
	now := time.Unix(10_000, 0)
	global := model.DefaultThresholds() // exit grace 5 s
	short, long := global, global
	short.ExitGrace, long.ExitGrace = time.Second, 30*time.Second
	node := func(id string, pid int, age time.Duration, own *model.Thresholds) *model.Node {
		return &model.Node{ID: id, HasHeartbeat: true, BeatMtime: now.Add(-age), Thresholds: own,
			Heartbeat: &model.Heartbeat{PID: pid, Status: model.StatusRunning, Started: 100}}
	}
	lead := node("A", 30, time.Minute, nil)
	lead.Children = []*model.Node{
		node("A/short", 31, 3*time.Second, &short), // past its own 1 s grace, within the global 5 s
		node("A/long", 32, 10*time.Second, &long),  // past the global 5 s, within its own 30 s
		node("A/global", 33, 10*time.Second, nil),  // no thresholds of its own: the global grace
	}
	base := &countingProbe{asked: map[int]int{}}
	prefetch([]*model.Node{lead}, base, now, global)
	want := map[int]int{30: 1, 31: 1, 33: 1}
	if len(base.asked) != len(want) {
		t.Fatalf("asked %v, want %v", base.asked, want)
	}
	for pid, n := range want {
		if base.asked[pid] != n {
			t.Errorf("pid %d asked %d times, want %d (asked %v)", pid, base.asked[pid], n, base.asked)
		}
	}
}

// SPEC §3, §5.1: the prefetching wrapper keeps what the system probe knows
// of the pids kill never signals: a stalled record of this very process
// (its real create time as started) is no kill candidate in a scan.
func TestAScanNeverMakesDispatchtopItselfAKillCandidate(t *testing.T) {
	root := t.TempDir()
	pid, started := self(t)
	hb := writeHeartbeat(t, filepath.Join(root, "s"), pid, started, "running", "")
	setMtime(t, hb, time.Now().Add(-time.Hour))
	snap, err := Scan(Options{Roots: []string{root}, Thresholds: model.DefaultThresholds(), Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	n := snap.Node("s")
	if n == nil {
		t.Fatal("no node s")
	}
	if !n.HasFlag(model.FlagStalled) || n.HasFlag(model.FlagKillCandidate) || n.Action != model.ActionWait ||
		!strings.Contains(n.Reason, "dispatchtop itself or one of its ancestors") {
		t.Errorf("flags %v, action %s, reason %q: want stalled, no kill_candidate, wait, saying why", n.Flags, n.Action, n.Reason)
	}
}
