package liveness

// The first pass: one node's state, flags, reason and probe result from its
// own facts — a heartbeat, a legacy `.running`, or neither (unstarted).

import (
	"fmt"
	"strconv"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// classifyHeartbeat classifies a node with a `.heartbeat` file, parseable
// or not: its facts gathered (the probe asked when they make the pid
// decisive), the tables' verdict on them (verdict.go), then the verdict's
// words (reason_beat.go).
func classifyHeartbeat(n *model.Node, probe Probe, now time.Time, th model.Thresholds) classification {
	f := heartbeatFacts(n, probe, now, th)
	v := judgeHeartbeat(&f, th)
	return classification{state: v.state, flags: v.flags, process: f.process, reason: heartbeatReason(n, &f, v, now, th)}
}

// heartbeatFacts gathers what the tables read of n at now. The probe is
// asked of the pid only when the beat is older than the exit grace (or in
// the future) and there is a pid to check; of a per-turn pid's owner only
// when that pid ended; of the signal guard only for a pid that may become
// a kill candidate.
func heartbeatFacts(n *model.Node, probe Probe, now time.Time, th model.Thresholds) beatFacts {
	f := beatFacts{blocked: n.Blocked != nil, traits: n.Traits, mtime: n.BeatMtime, mtimeKnown: !n.BeatMtime.IsZero()}
	if hb := n.Heartbeat; hb != nil {
		f.readable, f.status, f.pid, f.started = true, hb.Status, hb.PID, hb.Started
	}
	if f.finished() {
		return f
	}
	if f.ended = n.Ended(); f.ended != "" || !f.mtimeKnown {
		return f
	}
	f.age = now.Sub(n.BeatMtime)
	f.ahead, f.skewed = skewedBy(n.BeatMtime, now)
	if !f.pidDecisive(th) {
		return f
	}
	f.probed = true
	f.boot = bootTime(probe)
	f.process, f.unverifiedWhy = VerifyWithin(probe.Lookup(f.pid), f.started, f.traits.StartSlack, th.StartTolerance, f.boot, now)
	switch {
	case f.pidEnded() && f.traits.PIDPerTurn && !f.traits.NoProcessExpected && !f.launchTimedOut() && n.RecordedOwner().PID > 0:
		owner := n.RecordedOwner()
		f.ownerRecorded = true
		f.owner = ownerStatus(probe.Lookup(owner.PID), owner.Started, th.StartTolerance)
	case f.process == model.ProcessAlive && f.age > th.KillAfter:
		f.neverSignalled = neverSignalledBy(probe, f.pid)
	}
	return f
}

// classifyLegacy: a node known from `.running` (a pid, an mtime, nothing
// else). Dead when the sentinel predates the last boot or the pid is gone
// past the exit grace; there is no started to compare, so no reuse check.
func classifyLegacy(n *model.Node, probe Probe, now time.Time, th model.Thresholds) classification {
	v := classification{state: model.StateRunning}
	v.flags.add(model.FlagLegacy)
	blocked := n.Blocked != nil
	if blocked {
		v.flags.add(model.FlagBlocked)
	}
	if n.BeatMtime.IsZero() {
		return unknownMtime(v, ".running unreadable", n.Blocked)
	}
	age := now.Sub(n.BeatMtime)
	pid := n.LegacyPID()
	written := beatAge(".running written ", n.BeatMtime, now, " ago")
	ahead, skewed := skewedBy(n.BeatMtime, now)
	if skewed {
		v.flags.add(model.FlagClockSkew)
		written = plainReason(inTheFuture(".running mtime ", ahead)).quotingTheClock()
	}

	switch {
	case th.NoPidCheck || pid <= 0:
		if age > th.Stale && !blocked {
			v.state = model.StateDead
			if pid <= 0 {
				v.reason = written.prefixed("no pid in .running; ")
			} else {
				v.reason = written.appended(" (pid not checked)")
			}
			return v
		}
		v.reason = written
	default:
		if boot := bootTime(probe); !boot.IsZero() && n.BeatMtime.Before(boot) {
			v.state = model.StateDead
			v.reason = plainReason(fmt.Sprintf(".running predates the last boot (%s); pid %d is not its process", clock(boot, now), pid))
			return v
		}
		if age <= th.ExitGrace && !skewed {
			v.reason = written
			break
		}
		if !probe.Lookup(pid).Exists {
			v.state, v.process = model.StateDead, model.ProcessGone
			v.reason = written.prefixed("pid " + strconv.Itoa(pid) + " gone; ")
			return v
		}
		v.process = model.ProcessAlive
		v.reason = written.prefixed("pid " + strconv.Itoa(pid) + " alive; ")
	}
	if blocked {
		v.reason = written.prefixed(waitingForHuman(n.Blocked) + "; ")
	}
	return v
}

// unknownMtime: the sentinel is listed but could not even be stat'ed (the
// scanner then has no mtime). Nothing says the agent stopped, so it is
// running — flagged unreadable, its error in problems — and nothing is
// recommended against it.
func unknownMtime(v classification, subject string, b *model.Blocked) classification {
	v.state = model.StateRunning
	v.reason = plainReason(subject + "; mtime unknown")
	if b != nil {
		v.reason = v.reason.prefixed(waitingForHuman(b) + "; ")
	}
	return v
}

// classifyUnstarted: no heartbeat and no `.running`, so the node is known
// from its parent's registry line only — or it lies outside every root,
// where its files exist as far as anyone knows but are not read: missing is
// the nearest state (nothing was read), never "never started".
func classifyUnstarted(n *model.Node, now time.Time) classification {
	outside := n.HasScanFlag(model.FlagOutsideRoot)
	if n.Entry != nil && model.TerminalStatus(n.Entry.Status) {
		gone := "heartbeat gone"
		if outside {
			gone = outsideNotRead
		}
		return classification{state: model.StateFinished, reason: plainReason("registry says " + n.Entry.Status + "; " + gone)}
	}
	if outside {
		return classification{state: model.StateMissing, reason: plainReason(outsideNotRead)}
	}
	if n.Entry == nil {
		return classification{state: model.StateMissing, reason: plainReason("no heartbeat file")}
	}
	why := plainReason("registered but never started")
	if n.Parent != nil && !n.Parent.RegistryMtime().IsZero() {
		why = why.appended(" (" + model.FormatAge(now.Sub(n.Parent.RegistryMtime())) + " ago)").quotingTheClock()
	}
	return classification{state: model.StateMissing, reason: why}
}

// outsideNotRead is the reason of a node the scanner does not read because
// its path leads outside every root.
const outsideNotRead = "outside every root: not read"
