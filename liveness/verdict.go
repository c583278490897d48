package liveness

// The verdict on a node with a heartbeat: SPEC §3's state and flag tables,
// rule by rule, over the facts gathered for it (beatFacts). Nothing here
// asks the probe, reads the clock or writes a word: the facts hold what the
// probe said, and the reason's words are made from the verdict apart
// (reason_beat.go), so a rule reads here as the spec's row does.

import (
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// verdict is the state and flags the tables give a node with a heartbeat,
// and the row that decided its state: its reason is that row's words.
type verdict struct {
	state model.State
	flags flagSet
	row   row
}

// row names the rule of SPEC §3 (a row of its tables, a reading of §3.1, a
// trait of §10) that decided a heartbeat's state.
type row uint8

const (
	rowFinished       row = iota // finished: status completed or withdrawn
	rowEnded                     // dead: the source saw its process end (§10 Ended)
	rowMtimeUnknown              // running: the sentinel could not be stat'ed (§3.1)
	rowLaunchTimeout             // dead: starting past its launch timeout (§10 LaunchTimeout)
	rowUnseenStalled             // stalled: no process could be looked up, until kill-after (§10 ProcessUnseen)
	rowUnseenDead                // dead: no process could be looked up, past kill-after (§10 ProcessUnseen)
	rowStaleUnchecked            // dead (a): stale, and no pid to check (none, or --no-pid-check)
	rowPidGone                   // dead (b): the pid verified gone past the exit grace
	rowPidReused                 // dead (b): the pid now another process's
	rowPredatesBoot              // dead: the mtime predates the boot and the pid is not verified
	rowOwnerGone                 // dead: a per-turn pid gone and its owner too (idle)
	rowTurnStale                 // dead: a per-turn pid gone and the beat stale (idle)
	rowSkewed                    // running, clock_skew: the pid alive or unverified decides at once
	rowStalled                   // running, stalled: stale, the pid alive as the same process
	rowQuiet                     // running, quiet: older than one beat, not stale
	rowRunning                   // running: everything else that has a heartbeat
)

// beatFacts are what the tables read of a node with a heartbeat, gathered
// once (heartbeatFacts): the file's, the beat's age at the classification,
// and what the probe said of the pid and its owner, asked only when the age
// makes them decisive.
type beatFacts struct {
	readable   bool // the heartbeat parsed (unreadable otherwise)
	status     string
	pid        int
	started    float64
	blocked    bool   // a blocked sentinel exists
	ended      string // what the source saw end of the process (§10 Ended)
	traits     model.Traits
	mtimeKnown bool          // the sentinel could be stat'ed
	mtime      time.Time     // the beat
	age        time.Duration // now - mtime
	skewed     bool          // the mtime ClockSkew or more in the future
	ahead      time.Duration // how far, when skewed

	// The probe's answers; zero unless probed.
	probed         bool
	process        model.ProcessStatus
	unverifiedWhy  error     // why the pid could not be verified, when started is to blame
	boot           time.Time // the last boot (zero: unknown)
	ownerRecorded  bool      // a per-turn pid's owner was recorded and asked about
	owner          model.ProcessStatus
	neverSignalled bool // the pid is one kill never signals (§5.1)
}

// judgeHeartbeat is the verdict of SPEC §3's tables on a node with a
// heartbeat, the first rule that holds deciding its state.
func judgeHeartbeat(f *beatFacts, th model.Thresholds) verdict {
	// finished: heartbeat status completed or withdrawn; nothing else counts.
	if f.finished() {
		return verdict{state: model.StateFinished, row: rowFinished}
	}
	flags := f.factFlags()
	dead := func(r row) verdict { return verdict{state: model.StateDead, flags: flags, row: r} }
	switch {
	case f.ended != "":
		// dead: a source that saw the process end by the system's own
		// rule makes it dead at once (§10 "Ended").
		return dead(rowEnded)
	case !f.mtimeKnown:
		// §3.1: a sentinel that could not be stat'ed is running: nothing
		// says the agent stopped.
		return verdict{state: model.StateRunning, flags: flags, row: rowMtimeUnknown}
	}
	switch {
	case f.mtimeAlone(th):
		if r, decided := f.byMtime(th); decided {
			return dead(r)
		}
		if f.processUnseen(th) {
			// stalled: its source could not look the process up; alive
			// as far as anyone can tell until kill-after (§10
			// ProcessUnseen).
			flags.add(model.FlagStalled)
			return verdict{state: model.StateRunning, flags: flags, row: rowUnseenStalled}
		}
	case f.probed:
		r, decided, idle := f.byPid(th)
		if decided {
			return dead(r)
		}
		if idle {
			flags.add(model.FlagIdle)
		}
	}
	return f.running(flags, th)
}

// byMtime are the dead rows of a node with no pid to ask (none, or
// --no-pid-check): the mtime decides.
func (f *beatFacts) byMtime(th model.Thresholds) (row, bool) {
	switch {
	case f.launchTimedOut():
		// dead: a starting record past its launch timeout (§10).
		return rowLaunchTimeout, true
	case f.processUnseen(th) && f.age > th.KillAfter:
		// dead: its source could not look the process up, past
		// kill-after (§10 ProcessUnseen).
		return rowUnseenDead, true
	case f.processUnseen(th):
		return 0, false
	case f.staleDecides(th):
		// dead (a): the mtime older than stale; never for idleness a
		// blocked node (§3.1) or one whose age says nothing (§10).
		return rowStaleUnchecked, true
	}
	return 0, false
}

// byPid are the dead rows of a node whose pid was asked, past the exit
// grace (or its mtime in the future); idle when a per-turn pid is between
// turns with its owner recorded.
func (f *beatFacts) byPid(th model.Thresholds) (r row, dead, idle bool) {
	ended := f.pidEnded()
	switch {
	case ended && f.traits.NoProcessExpected:
		// running: a record that expects no process (§10) is judged by
		// its age alone.
	case ended && f.launchTimedOut():
		return rowLaunchTimeout, true, false
	case ended && f.traits.PIDPerTurn:
		// idle: a per-turn pid gone between turns (§3 idle, §10).
		r, dead = f.betweenTurns(th)
		return r, dead, !dead && f.ownerRecorded
	case f.process == model.ProcessGone:
		// dead (b): the pid verified gone, past the exit grace.
		return rowPidGone, true, false
	case f.process == model.ProcessReused:
		// dead (b): the pid now another process's ("same process": its
		// create time within start-tolerance of started).
		return rowPidReused, true, false
	case f.predatesBoot(th):
		// dead: a heartbeat older than the last boot whose pid is not
		// verified as the same process.
		return rowPredatesBoot, true, false
	}
	return 0, false, false
}

// running is the verdict on a node the state table left running: its
// flags by the flag table.
func (f *beatFacts) running(flags flagSet, th model.Thresholds) verdict {
	v := verdict{state: model.StateRunning, flags: flags, row: rowRunning}
	if f.traits.RecordIdle {
		// idle: a record that says so itself (§10 RecordIdle).
		v.flags.add(model.FlagIdle)
	}
	switch {
	case f.skewed:
		// clock_skew: the age says nothing; the pid decided (dead rows
		// above), so alive or unverified runs.
		v.row = rowSkewed
		v.flags |= f.unverifiedFlag()
	case f.stalled(th):
		v.row = rowStalled
		v.flags.add(model.FlagStalled)
		v.flags |= f.unverifiedFlag()
		if f.killCandidate(th) {
			v.flags.add(model.FlagKillCandidate)
		}
	case f.quiet(th):
		v.row = rowQuiet
		v.flags.add(model.FlagQuiet)
		if f.age > th.Stale && f.traits.BeatNotRequired {
			// Past stale, running only because no beat is required:
			// pid_unverified as stalled would be when only an unverified
			// pid says it runs.
			v.flags |= f.unverifiedFlag()
		}
	}
	return v
}

// betweenTurns is the idle row's verdict on a per-turn pid found gone (or
// reused) past the exit grace (SPEC §3 idle, §10): dead at once when its
// recorded owner is gone (or reused) too; dead once the beat is stale
// (never for idleness when blocked); else running.
func (f *beatFacts) betweenTurns(th model.Thresholds) (row, bool) {
	switch {
	case f.ownerRecorded && (f.owner == model.ProcessGone || f.owner == model.ProcessReused):
		return rowOwnerGone, true
	case f.age > th.Stale && !f.skewed && !f.blocked:
		return rowTurnStale, true
	}
	return 0, false
}

// stalled: running, the beat older than stale, the pid alive as the same
// process (or unverified); never a record whose age says nothing (§10).
func (f *beatFacts) stalled(th model.Thresholds) bool {
	return f.age > th.Stale && f.probedAlive() && !f.ageSaysNothing()
}

// killCandidate: stalled for longer than kill-after (counted from the beat,
// §3.1), not blocked, not a human's (§10 NeverKill), the pid verified
// (§3.1) and one kill may signal (§5.1).
func (f *beatFacts) killCandidate(th model.Thresholds) bool {
	return f.age > th.KillAfter && !f.blocked && f.process != model.ProcessUnverified && !f.traits.NeverKill && !f.neverSignalled
}

// quiet: running, older than one beat but not stale; or older, for a
// record whose age says nothing (§10).
func (f *beatFacts) quiet(th model.Thresholds) bool {
	return f.age > th.Beat && (f.age <= th.Stale || f.ageSaysNothing())
}

// unverifiedFlag is pid_unverified when the pid asked could not be
// verified: flagged where only that pid keeps the node running (§3.1).
func (f *beatFacts) unverifiedFlag() flagSet {
	var s flagSet
	if f.process == model.ProcessUnverified {
		s.add(model.FlagPidUnverified)
	}
	return s
}

// factFlags are the flags the facts carry as they are: the status's
// (starting, paused, unknown), unreadable, blocked, clock_skew.
func (f *beatFacts) factFlags() flagSet {
	var s flagSet
	if !f.readable {
		s.add(model.FlagUnreadable)
	} else {
		switch f.status {
		case model.StatusStarting:
			s.add(model.FlagStarting)
		case model.StatusPaused:
			s.add(model.FlagPaused)
		case model.StatusRunning:
		default:
			s.add(model.FlagUnknownStatus)
		}
	}
	if f.blocked {
		s.add(model.FlagBlocked)
	}
	if f.skewed {
		s.add(model.FlagClockSkew)
	}
	return s
}

func (f *beatFacts) finished() bool {
	return f.readable && (f.status == model.StatusCompleted || f.status == model.StatusWithdrawn)
}

// mtimeAlone: no pid to ask (none, or --no-pid-check); the mtime decides.
func (f *beatFacts) mtimeAlone(th model.Thresholds) bool { return th.NoPidCheck || f.pid <= 0 }

// pidDecisive: the pid is asked, its beat older than the exit grace (or in
// the future), so that a fresh beat runs without a probe.
func (f *beatFacts) pidDecisive(th model.Thresholds) bool {
	return !f.mtimeAlone(th) && (f.age > th.ExitGrace || f.skewed)
}

// ageSaysNothing: a record that needs no beat or expects no process (§10):
// past stale it is quiet, never stalled or dead by age.
func (f *beatFacts) ageSaysNothing() bool {
	return f.traits.BeatNotRequired || f.traits.NoProcessExpected
}

func (f *beatFacts) launchTimedOut() bool {
	return f.readable && f.status == model.StatusStarting && f.traits.LaunchTimeout > 0 &&
		!f.skewed && !f.blocked && f.age > f.traits.LaunchTimeout
}

// staleDecides: the mtime alone makes the node dead (a).
func (f *beatFacts) staleDecides(th model.Thresholds) bool {
	return f.age > th.Stale && !f.blocked && !f.ageSaysNothing()
}

// processUnseen: no pid because the source could not look the process up
// (§10 ProcessUnseen), and the beat stale.
func (f *beatFacts) processUnseen(th model.Thresholds) bool {
	return f.staleDecides(th) && f.traits.ProcessUnseen && f.pid <= 0 && !th.NoPidCheck && !f.skewed
}

// pidEnded: the pid is gone, or another process holds it.
func (f *beatFacts) pidEnded() bool {
	return f.process == model.ProcessGone || f.process == model.ProcessReused
}

// probedAlive: the pid was asked and is alive as the same process, or
// cannot be verified (taken as alive).
func (f *beatFacts) probedAlive() bool {
	return f.process == model.ProcessAlive || f.process == model.ProcessUnverified
}

func (f *beatFacts) predatesBoot(th model.Thresholds) bool {
	return f.process == model.ProcessUnverified && !f.traits.NoProcessExpected && !f.boot.IsZero() &&
		f.mtime.Before(f.boot.Add(-th.StartTolerance))
}
