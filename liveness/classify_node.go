package liveness

// The first pass: one node's state, flags, reason and probe result from its
// own facts — a heartbeat, a legacy `.running`, or neither (unstarted).

import (
	"fmt"
	"strconv"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

// classifyHeartbeat applies the state and flag tables to a node with a
// `.heartbeat` file, parseable or not.
func classifyHeartbeat(n *model.Node, probe Probe, now time.Time, th model.Thresholds) verdict {
	var v verdict
	hb := n.Heartbeat
	age := now.Sub(n.BeatMtime)
	pid, started := 0, 0.0
	sign := signOf(n)
	subject := "" // what the reason says about the heartbeat before its age
	if hb == nil {
		v.flags.add(model.FlagUnreadable)
		subject = sign.unreadable
	} else {
		pid, started = hb.PID, hb.Started
		switch hb.Status {
		case model.StatusCompleted, model.StatusWithdrawn:
			// In the system's own words when it has more to say than
			// the status (middle's "failed: idle-timeout").
			if e := n.Ending(); e != "" {
				return verdict{state: model.StateFinished, reason: plainReason(termtext.OneLine(e, maxQuestion))}
			}
			return verdict{state: model.StateFinished, reason: plainReason(hb.Status)}
		case model.StatusStarting:
			v.flags.add(model.FlagStarting)
			subject = "starting"
		case model.StatusPaused:
			v.flags.add(model.FlagPaused)
			subject = "paused"
		case model.StatusRunning:
			subject = sign.running
		default:
			v.flags.add(model.FlagUnknownStatus)
			subject = "unknown status " + strconv.Quote(termtext.OneLine(hb.Status, maxQuestion))
		}
	}
	blocked := n.Blocked != nil
	if blocked {
		v.flags.add(model.FlagBlocked)
	}
	ended := n.Ended()
	if n.BeatMtime.IsZero() {
		if ended != "" {
			return endedVerdict(v, ended, plainReason(""))
		}
		return unknownMtime(v, subject, n.Blocked)
	}
	ahead, skewed := skewedBy(n.BeatMtime, now)
	if skewed {
		v.flags.add(model.FlagClockSkew)
	}
	// beat is the reason's word on the mtime, led by lead: how old, or
	// how far ahead. Built only for the reason that quotes it: 10,000 nodes
	// a tick.
	beat := func(lead string) reason {
		if skewed {
			return plainReason(inTheFuture(sign.future, ahead)).quotingTheClock().prefixed(lead)
		}
		return lastBeat(lead, sign, n.BeatMtime, now)
	}

	if ended != "" {
		return endedVerdict(v, ended, beat(""))
	}

	tr := n.Traits
	// ageNoSign: the record's age says nothing of death (SPEC §10), so
	// past stale it is quiet, never stalled or dead by age.
	ageNoSign := tr.BeatNotRequired || tr.NoProcessExpected
	launchTimedOut := hb != nil && hb.Status == model.StatusStarting && tr.LaunchTimeout > 0 &&
		!skewed && !blocked && age > tr.LaunchTimeout
	var lead string // what a trait's rule says before the beat, replacing the subject
	var note string // what a trait's rule adds after the beat

	var unverifiedWhy error // why the pid could not be verified, when started is to blame
	switch {
	case th.NoPidCheck || pid <= 0:
		// The mtime alone decides.
		v.state = model.StateRunning
		if launchTimedOut {
			v.state, v.reason = model.StateDead, launchTimeout(n.BeatMtime, now, tr.LaunchTimeout)
			return v
		}
		if age > th.Stale && !blocked && !ageNoSign && tr.ProcessUnseen && pid <= 0 && !th.NoPidCheck && !skewed {
			// The source could not look the process up: as the system's
			// own watchdog, which cannot tell either, idle (stalled) until
			// its kill time, dead only past it.
			if age <= th.KillAfter {
				v.flags.add(model.FlagStalled)
				v.reason = beatAge(processUnseenLead+sign.none, n.BeatMtime, now, sign.noneAfter)
				return v
			}
			v.state = model.StateDead
			v.reason = beatAge(processUnseenLead+sign.none, n.BeatMtime, now, sign.noneAfter+", past kill-after ("+model.FormatAge(th.KillAfter)+")")
			return v
		}
		if age > th.Stale && !blocked && !ageNoSign {
			v.state = model.StateDead
			switch {
			case hb == nil:
				v.reason = beat(subject + "; ")
			case pid <= 0:
				v.reason = beat("no pid; ")
			default:
				v.reason = beatAge(sign.none, n.BeatMtime, now, sign.noneAfter+" (pid not checked)")
			}
			return v
		}
	case age <= th.ExitGrace && !skewed:
		// A fresh beat is running without asking the probe.
		v.state = model.StateRunning
	default:
		boot := bootTime(probe)
		v.process, unverifiedWhy = VerifyWithin(probe.Lookup(pid), started, tr.StartSlack, th.StartTolerance, boot, now)
		ended := v.process == model.ProcessGone || v.process == model.ProcessReused
		switch {
		case ended && tr.NoProcessExpected:
			note = "no process expected (" + pidEnded(pid, v.process) + ")"
		case ended && launchTimedOut:
			v.state, v.reason = model.StateDead, launchTimeout(n.BeatMtime, now, tr.LaunchTimeout)
			return v
		case ended && tr.PIDPerTurn:
			turn := betweenTurns(n, probe, pid, v.process, age, skewed, blocked, th, sign, beat)
			if turn.dead {
				v.state, v.reason = model.StateDead, turn.reason
				return v
			}
			if turn.idle {
				v.flags.add(model.FlagIdle)
			}
			lead = turn.lead
		case v.process == model.ProcessGone:
			v.state, v.reason = model.StateDead, beat(pidGoneLead(pid))
			return v
		case v.process == model.ProcessReused:
			v.state, v.reason = model.StateDead, beat(pidReusedLead(pid))
			return v
		case v.process == model.ProcessUnverified && !tr.NoProcessExpected && !boot.IsZero() && n.BeatMtime.Before(boot.Add(-th.StartTolerance)):
			v.state = model.StateDead
			v.reason = plainReason(fmt.Sprintf("%s predates the last boot (%s); pid %d is not its process", sign.noun, clock(boot, now), pid))
			return v
		}
		v.state = model.StateRunning
	}

	// Running. The pid is alive as the same process (or unverified) when it
	// was probed; stalled needs that, so a node judged by mtime alone never is.
	if tr.RecordIdle {
		// The record itself says between turns (SPEC §10).
		v.flags.add(model.FlagIdle)
	}
	probedAlive := v.process == model.ProcessAlive || v.process == model.ProcessUnverified
	unverified := v.process == model.ProcessUnverified
	switch {
	case skewed:
		if unverified {
			v.flags.add(model.FlagPidUnverified)
		}
		v.reason = beat(subject + "; ").appended(" (" + pidNote(pid, v.process, unverifiedWhy, th.NoPidCheck) + ")")
	case age > th.Stale && probedAlive && !ageNoSign:
		v.flags.add(model.FlagStalled)
		if unverified {
			v.flags.add(model.FlagPidUnverified)
		}
		// A pid kill never signals (1, dispatchtop's own, an ancestor's)
		// is no candidate: recommendRow says why.
		if age > th.KillAfter && !blocked && !unverified && !tr.NeverKill && !neverSignalledBy(probe, pid) {
			v.flags.add(model.FlagKillCandidate)
		}
		v.reason = stalledFor(pid, sign, n.BeatMtime, now, unverified, unverifiedWhy)
	case age > th.Beat && (age <= th.Stale || ageNoSign):
		v.flags.add(model.FlagQuiet)
		v.reason = beat(subject + ", quiet: ")
		if age > th.Stale && tr.BeatNotRequired && note == "" {
			// Running only because no beat is required: say so, and
			// what the pid said.
			if unverified {
				v.flags.add(model.FlagPidUnverified)
			}
			note = sign.noSign
			if probedAlive {
				note += " (" + pidNote(pid, v.process, unverifiedWhy, th.NoPidCheck) + ")"
			}
		}
	default:
		v.reason = beat(subject + "; ")
	}
	if lead != "" {
		v.reason = beat(lead)
	}
	if note != "" {
		v.reason = v.reason.appended("; " + note)
	}
	if blocked {
		v.reason = beat(waitingForHuman(n.Blocked) + "; ")
	}
	return v
}

// endedVerdict: the node's source saw its process end though the record
// does not say it stopped (SPEC §10, model.Rare.Ended). Dead at once: no
// age, trait or pid outweighs what the system's own rule says, and the
// reason leads with what ended, then the beat (when there is one).
func endedVerdict(v verdict, why string, beat reason) verdict {
	v.state = model.StateDead
	lead := termtext.OneLine(why, maxQuestion)
	if beat.text == "" {
		v.reason = plainReason(lead)
	} else {
		v.reason = beat.prefixed(lead + "; ")
	}
	return v
}

// processUnseenLead leads the reason of a record whose source could not
// look its process up (Traits.ProcessUnseen), past stale.
const processUnseenLead = "its process could not be looked up; "

// endedWord names a pid found not to be its process any more.
func endedWord(p model.ProcessStatus) string {
	if p == model.ProcessReused {
		return "now belongs to another process"
	}
	return "gone"
}

// pidNote says, for a heartbeat whose mtime is in the future, what decided
// that the node runs: the pid as probed, or that there was none to ask.
func pidNote(pid int, process model.ProcessStatus, why error, noPidCheck bool) string {
	switch {
	case noPidCheck:
		return "pid not checked"
	case pid <= 0:
		return "no pid to check"
	case process == model.ProcessUnverified:
		return unverifiedPid(pid, why)
	case process == model.ProcessGone || process == model.ProcessReused:
		return pidEnded(pid, process)
	}
	return "pid " + strconv.Itoa(pid) + " alive"
}

// classifyLegacy: a node known from `.running` (a pid, an mtime, nothing
// else). Dead when the sentinel predates the last boot or the pid is gone
// past the exit grace; there is no started to compare, so no reuse check.
func classifyLegacy(n *model.Node, probe Probe, now time.Time, th model.Thresholds) verdict {
	v := verdict{state: model.StateRunning}
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
func unknownMtime(v verdict, subject string, b *model.Blocked) verdict {
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
func classifyUnstarted(n *model.Node, now time.Time) verdict {
	outside := n.HasScanFlag(model.FlagOutsideRoot)
	if n.Entry != nil && model.TerminalStatus(n.Entry.Status) {
		gone := "heartbeat gone"
		if outside {
			gone = outsideNotRead
		}
		return verdict{state: model.StateFinished, reason: plainReason("registry says " + n.Entry.Status + "; " + gone)}
	}
	if outside {
		return verdict{state: model.StateMissing, reason: plainReason(outsideNotRead)}
	}
	if n.Entry == nil {
		return verdict{state: model.StateMissing, reason: plainReason("no heartbeat file")}
	}
	why := plainReason("registered but never started")
	if n.Parent != nil && !n.Parent.RegistryMtime.IsZero() {
		why = why.appended(" (" + model.FormatAge(now.Sub(n.Parent.RegistryMtime)) + " ago)").quotingTheClock()
	}
	return verdict{state: model.StateMissing, reason: why}
}

// outsideNotRead is the reason of a node the scanner does not read because
// its path leads outside every root.
const outsideNotRead = "outside every root: not read"
