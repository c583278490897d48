package liveness

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// benchProbe answers without locking or recording: pids divisible by 3 are
// gone, the rest alive as the same process.
type benchProbe struct{}

func (benchProbe) Lookup(pid int) ProcessInfo {
	if pid%3 == 0 {
		return ProcessInfo{}
	}
	return ProcessInfo{Exists: true, CreateTime: started}
}

func (benchProbe) BootTime() time.Time { return now.Add(-24 * time.Hour) }

// generateForest builds sessions × 10 nodes in memory, nested 3 deep (a
// session lead, 3 team leads, 2 workers under each), with beat ages spread
// over fresh, quiet, stale and kill-after, so that every rule runs: some
// nodes are probed, some dead, some stalled, some missing or finished.
func generateForest(sessions int, pid func(i int) int) []*model.Node {
	ages := []time.Duration{2 * time.Second, 20 * time.Second, 45 * time.Second, 3 * time.Minute, 7 * time.Minute}
	out := make([]*model.Node, 0, sessions)
	i := 0
	next := func(id string) *model.Node {
		i++
		var n *model.Node
		switch i % 17 {
		case 0:
			n = registered(id, "active")
		case 5:
			n = beating(id, "completed", pid(i), time.Hour, cfa("DONE"))
		default:
			n = beating(id, "running", pid(i), ages[i%len(ages)], cfa("EXECUTE"))
		}
		if i%23 == 0 {
			n.Blocked = &model.Blocked{Question: "q"}
		}
		return n
	}
	for s := range sessions {
		sid := fmt.Sprintf("2026112%d-%06d", s%10, s)
		lead := next(sid)
		lead.HasHeartbeat, lead.Entry = true, nil
		if lead.Heartbeat == nil {
			lead.Heartbeat = &model.Heartbeat{PID: pid(i), Status: "running"}
		}
		lead.SetRegistry(nil, now.Add(-10*time.Minute), 0)
		for t := range 3 {
			team := next(fmt.Sprintf("%s/team%d/%d", sid, t, t))
			for w := range 2 {
				adopt(team, next(fmt.Sprintf("%s/team%d/%d/w/%d", sid, t, t, w)))
			}
			adopt(lead, team)
		}
		out = append(out, lead)
	}
	return out
}

func countNodes(sessions []*model.Node) int {
	k := 0
	for _, s := range sessions {
		s.Walk(func(*model.Node) { k++ })
	}
	return k
}

// BenchmarkClassifyForest: the classification of 10,000 nodes, the probe
// answering from memory (what the live engine pays every tick on top of
// its cached pid lookups).
func BenchmarkClassifyForest(b *testing.B) {
	forest := generateForest(1000, func(i int) int { return 1000 + i })
	if k := countNodes(forest); k != 10000 {
		b.Fatalf("generated %d nodes, want 10000", k)
	}
	b.ReportAllocs()
	for b.Loop() {
		ClassifyForest(forest, benchProbe{}, now, model.DefaultThresholds())
	}
}

// BenchmarkClassifyForestSystemProbe: the same forest against the real
// process table through a warm CachingProbe (pids are this process's, so
// every probed node is alive or reused).
func BenchmarkClassifyForestSystemProbe(b *testing.B) {
	forest := generateForest(1000, func(i int) int { return 1 + i%64 })
	at := onTheRealClock(forest)
	probe := NewCachingProbe(SystemProbe{}, time.Hour)
	ClassifyForest(forest, probe, at, model.DefaultThresholds())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ClassifyForest(forest, probe, at, model.DefaultThresholds())
	}
}

// BenchmarkClassifyForestColdSystemProbe: every pid looked up in /proc.
func BenchmarkClassifyForestColdSystemProbe(b *testing.B) {
	forest := generateForest(1000, func(i int) int { return 1 + i%64 })
	at := onTheRealClock(forest)
	b.ReportAllocs()
	for b.Loop() {
		ClassifyForest(forest, SystemProbe{}, at, model.DefaultThresholds())
	}
}

// onTheRealClock moves a generated forest from the tests' fixed instant to
// the real clock and returns the real now. A node whose pid exists gets its
// process's real create time as started, or on every other node 20 s
// before it (reused): real-probe benchmarks then run the alive and reused
// rules, not the implausible-started one (the fixed instant may predate
// this host's boot, and a started an hour back may too).
func onTheRealClock(forest []*model.Node) time.Time {
	at := time.Now()
	shift := at.Sub(now)
	boot := SystemProbe{}.BootTime()
	for _, s := range forest {
		s.Walk(func(n *model.Node) {
			if !n.BeatMtime.IsZero() {
				n.BeatMtime = n.BeatMtime.Add(shift)
			}
			if r := n.Registry; r != nil && !r.Mtime.IsZero() {
				n.SetRegistry(r.Lines, r.Mtime.Add(shift), r.Size)
			}
			if n.Heartbeat == nil || n.Heartbeat.PID <= 0 {
				return
			}
			info := SystemProbe{}.Lookup(n.Heartbeat.PID)
			if !info.Exists || info.CreateTimeErr != nil {
				return
			}
			st := info.CreateTime
			if n.ID[len(n.ID)-1]%2 == 0 && st.Sub(boot) > 30*time.Second {
				st = st.Add(-20 * time.Second)
			}
			n.Heartbeat.Started = unixSeconds(st)
		})
	}
	return at
}

// TestGeneratedForestCoversTheStates keeps the benchmark honest: the
// generated forest has every state and the main flags in it.
func TestGeneratedForestCoversTheStates(t *testing.T) {
	forest := generateForest(1000, func(i int) int { return 1000 + i })
	ClassifyForest(forest, benchProbe{}, now, model.DefaultThresholds())
	snap := &model.Snapshot{Sessions: forest}
	sum := snap.Summarize()
	if sum.Nodes != 10000 || sum.Running == 0 || sum.Dead == 0 || sum.Finished == 0 || sum.Missing == 0 ||
		sum.Stalled == 0 || sum.KillCandidate == 0 || sum.Blocked == 0 || sum.Orphaned == 0 {
		t.Errorf("generated forest does not cover the states: %+v", sum)
	}
}

// BenchmarkLiveTick is one tick of the live engine at 10,000 nodes: the
// forest re-classified one second later, through a CachingProbe over the
// real process table with the engine's TTL (0.9 s, so every entry expired).
// ns/op is the CPU one tick costs; at one tick a second, 10 ms/op is 1 % of
// a core.
func BenchmarkLiveTick(b *testing.B) {
	self := os.Getpid()
	gone := 1 << 30 // beyond pid_max on Linux: never exists
	// Every probed node is this process: a third verified alive (its real
	// create time), a third reused (a wrong started), a third gone.
	forest := generateForest(1000, func(i int) int {
		if i%3 == 0 {
			return gone
		}
		return self
	})
	clock := onTheRealClock(forest)
	probe := newCachingProbe(SystemProbe{}, 900*time.Millisecond, DefaultReverify, func() time.Time { return clock })
	th := model.DefaultThresholds()
	for range 40 { // reach the steady state: create times read and spread
		clock = clock.Add(time.Second)
		ClassifyForest(forest, probe, clock, th)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		clock = clock.Add(time.Second)
		ClassifyForest(forest, probe, clock, th)
	}
}
