package scanner

// Per-source thresholds (SPEC §10): every node of a source is judged by
// the source's own defaults with each value the operator gave put over
// them; a native node by the global thresholds alone.

import (
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

// GivenThresholds say which values of Options.Thresholds the operator gave
// (a flag, or the config): those win over a source's defaults; the others
// are global defaults that a source's own replace.
type GivenThresholds struct {
	Beat, Stale, KillAfter, ExitGrace, StartTolerance bool
}

// sourceThresholds are the thresholds of each registered source's nodes:
// its defaults with every value the operator gave put over them. One value
// per source, shared by its nodes, never written after.
func sourceThresholds(opts Options, global model.Thresholds) map[string]*model.Thresholds {
	if len(opts.Sources) == 0 {
		return nil
	}
	given := opts.ThresholdsGiven
	out := make(map[string]*model.Thresholds, len(opts.Sources))
	for _, src := range opts.Sources {
		if src.Kind() == sources.Native {
			continue
		}
		th := src.Thresholds()
		for _, v := range []struct {
			given    bool
			dst, src *time.Duration
		}{
			{given.Beat, &th.Beat, &global.Beat},
			{given.Stale, &th.Stale, &global.Stale},
			{given.KillAfter, &th.KillAfter, &global.KillAfter},
			{given.ExitGrace, &th.ExitGrace, &global.ExitGrace},
			{given.StartTolerance, &th.StartTolerance, &global.StartTolerance},
		} {
			if v.given || *v.dst <= 0 {
				*v.dst = *v.src
			}
		}
		th.NoPidCheck = global.NoPidCheck
		out[string(src.Kind())] = &th
	}
	return out
}

// fillThresholds gives every node of sessions whose source is in bySource
// (sourceThresholds) that source's thresholds (Node.Thresholds), and every
// other node none. The live engine makes bySource once: a renewal of every
// session (a fleet's transition) then allocates none.
func fillThresholds(sessions []*model.Node, bySource map[string]*model.Thresholds) {
	for _, s := range sessions {
		s.Walk(func(n *model.Node) {
			n.Thresholds = bySource[n.Source]
		})
	}
}
