package liveness

// A source's traits that need more than a flag test (SPEC §10): a node's own
// thresholds, and the status of a per-turn pid's recorded owner (the
// between-turns rule itself is in verdict.go).

import (
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// ThresholdsFor are the thresholds that judge n: its own (Node.Thresholds,
// a source's defaults with the operator's values put over them by the
// scanner) when it has some, else global. --no-pid-check is the
// operator's alone: the global NoPidCheck holds whatever n carries.
func ThresholdsFor(n *model.Node, global model.Thresholds) model.Thresholds {
	if n.Thresholds == nil {
		return global
	}
	th := *n.Thresholds
	th.NoPidCheck = th.NoPidCheck || global.NoPidCheck
	return th
}

// ownerStatus compares what the probe found of a recorded owner with the
// create time recorded for it: unverified (taken as alive) when either is
// unknown, as for any pid that cannot be proven gone.
func ownerStatus(info ProcessInfo, started time.Time, tolerance time.Duration) model.ProcessStatus {
	switch {
	case !info.Exists:
		return model.ProcessGone
	case started.IsZero() || info.CreateTimeErr != nil || info.CreateTime.IsZero():
		return model.ProcessUnverified
	case TimeDistance(info.CreateTime, started) <= tolerance:
		return model.ProcessAlive
	}
	return model.ProcessReused
}
