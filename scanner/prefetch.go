package scanner

import (
	"runtime"
	"sync"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

// prefetchedProbe answers from lookups made ahead of classification, on
// every core, once per distinct pid; a pid it was not asked about goes to
// the underlying probe.
type prefetchedProbe struct {
	base    liveness.Probe
	answers map[int]liveness.ProcessInfo
}

func (p prefetchedProbe) Lookup(pid int) liveness.ProcessInfo {
	if info, ok := p.answers[pid]; ok {
		return info
	}
	return p.base.Lookup(pid)
}

// BootTime keeps the legacy `.running` rule working through the wrapper.
func (p prefetchedProbe) BootTime() time.Time {
	if bt, ok := p.base.(liveness.BootTimer); ok {
		return bt.BootTime()
	}
	return time.Time{}
}

// NeverSignalled keeps the pids kill never signals (dispatchtop itself, its
// ancestors) out of the kill candidates through the wrapper.
func (p prefetchedProbe) NeverSignalled(pid int) bool {
	g, ok := p.base.(liveness.SignalGuard)
	return ok && g.NeverSignalled(pid)
}

// prefetch looks up, in parallel, the pids the classifier will ask about:
// those of nodes whose beat is older than the exit grace (a fresher beat is
// running without asking), each node's own (SPEC §10) where it has one. A
// cold scan of 10,000 live nodes spends most of its classification time in
// these lookups, and they are independent.
func prefetch(sessions []*model.Node, probe liveness.Probe, now time.Time, th model.Thresholds) liveness.Probe {
	if th.NoPidCheck {
		return probe
	}
	seen := map[int]bool{}
	var pids []int
	for _, s := range sessions {
		s.Walk(func(n *model.Node) {
			pid := n.PID()
			if pid <= 0 || seen[pid] || n.BeatMtime.IsZero() || now.Sub(n.BeatMtime) <= liveness.ThresholdsFor(n, th).ExitGrace {
				return
			}
			seen[pid] = true
			pids = append(pids, pid)
		})
	}
	answers := make([]liveness.ProcessInfo, len(pids))
	workers := min(runtime.GOMAXPROCS(0), max(len(pids)/64, 1))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(pids); i += workers {
				answers[i] = probe.Lookup(pids[i])
			}
		})
	}
	wg.Wait()
	memo := make(map[int]liveness.ProcessInfo, len(pids))
	for i, pid := range pids {
		memo[pid] = answers[i]
	}
	return prefetchedProbe{base: probe, answers: memo}
}
