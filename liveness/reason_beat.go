package liveness

// The words of a heartbeat's verdict: the reason a person reads, made from
// the row that decided the state (verdict.go) and the facts it was judged
// on. Nothing here decides a state or a flag.

import (
	"fmt"
	"strconv"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

// heartbeatReason is the reason of verdict v on n, judged on f at now.
func heartbeatReason(n *model.Node, f *beatFacts, v verdict, now time.Time, th model.Thresholds) reason {
	if v.state == model.StateRunning {
		return runningReason(n, f, v, now, th)
	}
	sign := signOf(n)
	switch v.row {
	case rowFinished:
		// In the system's own words when it has more to say than the
		// status (middle's "failed: idle-timeout").
		if e := n.Ending(); e != "" {
			return plainReason(termtext.OneLine(e, maxQuestion))
		}
		return plainReason(f.status)
	case rowEnded:
		// What ended leads; then the beat, when there is one.
		lead := termtext.OneLine(f.ended, maxQuestion)
		if !f.mtimeKnown {
			return plainReason(lead)
		}
		return f.beat(lead+"; ", sign, now)
	case rowLaunchTimeout:
		return launchTimeout(f.mtime, now, f.traits.LaunchTimeout)
	case rowUnseenDead:
		return beatAge(processUnseenLead+sign.none, f.mtime, now, sign.noneAfter+", past kill-after ("+model.FormatAge(th.KillAfter)+")")
	case rowStaleUnchecked:
		switch {
		case !f.readable:
			return f.beat(f.subject(sign)+"; ", sign, now)
		case f.pid <= 0:
			return f.beat("no pid; ", sign, now)
		}
		return beatAge(sign.none, f.mtime, now, sign.noneAfter+" (pid not checked)")
	case rowPidGone:
		return f.beat(pidGoneLead(f.pid), sign, now)
	case rowPidReused:
		return f.beat(pidReusedLead(f.pid), sign, now)
	case rowPredatesBoot:
		return plainReason(fmt.Sprintf("%s predates the last boot (%s); pid %d is not its process", sign.noun, clock(f.boot, now), f.pid))
	case rowOwnerGone:
		return f.beat(ownerGoneWhy(f.pid, f.process, n.RecordedOwner().PID, f.owner)+"; ", sign, now)
	}
	// rowTurnStale
	return f.beat(pidEnded(f.pid, f.process)+"; ", sign, now)
}

// runningReason is the reason of a running verdict: the row's words on the
// beat, led instead by what a per-turn pid between turns says, followed by
// a trait's note; a blocked node's says first whom it waits for.
func runningReason(n *model.Node, f *beatFacts, v verdict, now time.Time, th model.Thresholds) reason {
	sign := signOf(n)
	var r reason
	switch v.row {
	case rowMtimeUnknown:
		return unknownMtime(classification{}, f.subject(sign), n.Blocked).reason
	case rowUnseenStalled:
		return beatAge(processUnseenLead+sign.none, f.mtime, now, sign.noneAfter)
	case rowSkewed:
		r = f.beat(f.subject(sign)+"; ", sign, now).appended(" (" + pidNote(f.pid, f.process, f.unverifiedWhy, th.NoPidCheck) + ")")
	case rowStalled:
		r = stalledFor(f.pid, sign, f.mtime, now, f.process == model.ProcessUnverified, f.unverifiedWhy)
	case rowQuiet:
		r = f.beat(f.subject(sign)+", quiet: ", sign, now)
	default:
		r = f.beat(f.subject(sign)+"; ", sign, now)
	}
	if f.pidEnded() && !f.traits.NoProcessExpected {
		// A per-turn pid between turns: its words replace the row's.
		r = f.beat(betweenTurnsLead(f.pid, f.process, n.RecordedOwner().PID, f.ownerRecorded, sign), sign, now)
	}
	note := traitNote(f, v, th, sign)
	if note != "" {
		r = r.appended("; " + note)
	}
	if f.blocked {
		r = f.beat(waitingForHuman(n.Blocked)+"; ", sign, now)
	}
	return r
}

// traitNote is what a trait's rule adds after the beat: that a record
// expecting no process has none, or that one needing no beat is running
// only because it needs none, and what its pid said.
func traitNote(f *beatFacts, v verdict, th model.Thresholds, sign *signWords) string {
	switch {
	case f.pidEnded() && f.traits.NoProcessExpected:
		return "no process expected (" + pidEnded(f.pid, f.process) + ")"
	case v.row == rowQuiet && f.age > th.Stale && f.traits.BeatNotRequired:
		if f.probedAlive() {
			return sign.noSign + " (" + pidNote(f.pid, f.process, f.unverifiedWhy, th.NoPidCheck) + ")"
		}
		return sign.noSign
	}
	return ""
}

// subject is what the reason says of the heartbeat before its age: its
// status, in the words of its sign of life.
func (f *beatFacts) subject(sign *signWords) string {
	switch {
	case !f.readable:
		return sign.unreadable
	case f.status == model.StatusStarting:
		return "starting"
	case f.status == model.StatusPaused:
		return "paused"
	case f.status == model.StatusRunning:
		return sign.running
	}
	return "unknown status " + strconv.Quote(termtext.OneLine(f.status, maxQuestion))
}

// beat is the reason's word on the mtime, led by lead: how old ("last beat
// 12s ago", moving with the clock), or how far ahead.
func (f *beatFacts) beat(lead string, sign *signWords, now time.Time) reason {
	if f.skewed {
		return plainReason(inTheFuture(sign.future, f.ahead)).quotingTheClock().prefixed(lead)
	}
	return lastBeat(lead, sign, f.mtime, now)
}

// betweenTurnsLead leads the reason of a per-turn pid found gone (or
// reused) that the idle row left running: with its owner recorded and
// alive, "between turns"; with none (`--once`), the source's own rule.
func betweenTurnsLead(pid int, process model.ProcessStatus, ownerPid int, ownerRecorded bool, sign *signWords) string {
	ended := pidEnded(pid, process)
	switch {
	case !ownerRecorded:
		return ended + " between turns: dead once " + sign.stale + " is stale; "
	case process == model.ProcessReused:
		return "between turns: " + ended + "; owner pid " + strconv.Itoa(ownerPid) + " alive; "
	}
	return "between turns: pid " + strconv.Itoa(pid) + " exited; owner pid " + strconv.Itoa(ownerPid) + " alive; "
}

// ownerGoneWhy says that a per-turn pid and its owner both ended; a reused
// pid is said to be one (a live process holds it now).
func ownerGoneWhy(pid int, process model.ProcessStatus, ownerPid int, owner model.ProcessStatus) string {
	ended := pidEnded(pid, process)
	switch {
	case process == model.ProcessReused:
		return ended + " and its owner pid " + strconv.Itoa(ownerPid) + " " + endedWord(owner)
	case owner == model.ProcessReused:
		return ended + " and its owner pid " + strconv.Itoa(ownerPid) + " too (now another process)"
	}
	return ended + " and its owner pid " + strconv.Itoa(ownerPid) + " too"
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
