package liveness

// A source's traits that need more than a flag test (SPEC §10): a node's own
// thresholds, and a per-turn pid judged between turns by its owner.

import (
	"strconv"
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

// turn is what the between-turns rule decided for a per-turn pid found
// gone (or reused): dead, with its reason; or running, idle when the
// owner is known to live, with what the reason says before the beat.
type turn struct {
	dead   bool
	reason reason
	idle   bool
	lead   string
}

// betweenTurns judges a node whose pid runs per turn (Traits.PIDPerTurn)
// and was found gone or reused (process) past the exit grace (SPEC §3,
// §10). With an owner recorded (the live engine: the pid's parent when
// first seen alive), a living owner means between turns — running and idle
// until the beat is stale — and an owner gone too means dead at once. With
// none (`--once` has no memory) the source's own rule holds: dead once the
// beat is stale. A blocked node is never dead for idleness, so only its
// owner's end makes it dead. A reused pid is said to be one: a live
// process holds it now.
func betweenTurns(n *model.Node, probe Probe, pid int, process model.ProcessStatus, age time.Duration, skewed, blocked bool,
	th model.Thresholds, sign *signWords, beat func(lead string) reason) turn {
	stale := age > th.Stale && !skewed && !blocked
	ended := pidEnded(pid, process)
	if n.Owner.PID > 0 {
		owner := ownerStatus(probe.Lookup(n.Owner.PID), n.Owner.Started, th.StartTolerance)
		ownerPid := strconv.Itoa(n.Owner.PID)
		switch {
		case owner == model.ProcessGone || owner == model.ProcessReused:
			why := ended + " and its owner pid " + ownerPid + " too"
			if process == model.ProcessReused {
				why = ended + " and its owner pid " + ownerPid + " " + endedWord(owner)
			} else if owner == model.ProcessReused {
				why += " (now another process)"
			}
			return turn{dead: true, reason: beat(why + "; ")}
		case stale:
			return turn{dead: true, reason: beat(ended + "; ")}
		}
		if process == model.ProcessReused {
			return turn{idle: true, lead: "between turns: " + ended + "; owner pid " + ownerPid + " alive; "}
		}
		return turn{idle: true, lead: "between turns: pid " + strconv.Itoa(pid) + " exited; owner pid " + ownerPid + " alive; "}
	}
	if stale {
		return turn{dead: true, reason: beat(ended + "; ")}
	}
	return turn{lead: ended + " between turns: dead once " + sign.stale + " is stale; "}
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
