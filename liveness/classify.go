package liveness

// Classification (SPEC §3), in two passes over a forest the scanner built:
//
//  1. ClassifyNode: one node's state, flags, reason and probe result, from
//     its own facts only.
//  2. Recommend (and orphaned), node by node from the sessions down: what
//     depends on the parent's or the children's state.
//
// Where the tables leave a case open, the reading decided is written in
// SPEC §3.1 (docs/spec.md); each has a named case in classify_test.go.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

// ClassifyForest classifies every node of the forest: State, Flags, Reason,
// Action, Process and OrphanedSince. Children and Parent links must already
// be built (and cycles broken) by the scanner. probe nil means SystemProbe.
// Pids are looked up only for nodes whose beat is older than the exit grace,
// and never with th.NoPidCheck.
func ClassifyForest(sessions []*model.Node, probe Probe, now time.Time, th model.Thresholds) {
	if probe == nil {
		probe = SystemProbe{}
	}
	if bt, ok := probe.(BootTimer); ok {
		// The boot time is the same for every legacy node: read it once.
		probe = &bootOnce{Probe: probe, timer: bt}
	}
	for _, s := range sessions {
		s.Walk(func(n *model.Node) { ClassifyNode(n, probe, now, th) })
	}
	// Walk visits a parent before its children, so a node's recommendation
	// can name the one its dead parent was given.
	for _, s := range sessions {
		s.Walk(func(n *model.Node) { classifyInTree(n, now, th) })
	}
}

// ClassifyNode sets n's State, Flags, Reason (and ReasonAge) and Process
// from n's own facts.
// The parts that depend on the tree — the orphaned flag, then the action
// (Recommend) — are ClassifyForest's second pass; Action and OrphanedSince
// are reset here.
func ClassifyNode(n *model.Node, probe Probe, now time.Time, th model.Thresholds) {
	th = ThresholdsFor(n, th)
	var c verdict
	switch {
	case n.HasHeartbeat:
		c = classifyHeartbeat(n, probe, now, th)
	case n.Legacy:
		c = classifyLegacy(n, probe, now, th)
	default:
		c = classifyUnstarted(n, now)
	}
	n.State, n.Reason, n.ReasonAge, n.Process = c.state, c.reason.text, c.reason.age, c.process
	n.Flags = c.flags.with(n.ScanFlags)
	n.Action = ""
	n.OrphanedSince = time.Time{}
}

// verdict is one node's own classification.
type verdict struct {
	state   model.State
	flags   flagSet
	reason  reason
	process model.ProcessStatus
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
	why := "registered but never started"
	if n.Entry == nil {
		why = "no heartbeat file"
	} else if n.Parent != nil && !n.Parent.RegistryMtime.IsZero() {
		why += " (" + model.FormatAge(now.Sub(n.Parent.RegistryMtime)) + " ago)"
	}
	return verdict{state: model.StateMissing, reason: plainReason(why)}
}

// outsideNotRead is the reason of a node the scanner does not read because
// its path leads outside every root.
const outsideNotRead = "outside every root: not read"

// BeatEdges are the beat ages past which classifyHeartbeat judges a node
// differently: the mtime is no longer in the future (-ClockSkew), the pid
// is asked (exit grace), quiet (beat), stalled or dead by mtime (stale),
// kill candidate (kill-after, measured from the beat like stale: SPEC's
// appendix makes a beat 360 s old one). Every comparison is `age > edge`.
// The live engine re-classifies a node just past each edge, so that
// time-based states appear with no file event. For a node with its own
// thresholds or a launch timeout, NodeEdges gives its edges.
func BeatEdges(th model.Thresholds) [5]time.Duration {
	return [5]time.Duration{-ClockSkew, th.ExitGrace, th.Beat, th.Stale, th.KillAfter}
}

// NodeEdges are the ages of n's beat past which the classifier judges n
// differently: BeatEdges of n's own thresholds (ThresholdsFor), then its
// launch timeout while it is starting (kill-after again otherwise). The
// live engine re-classifies n just past each, as for BeatEdges.
func NodeEdges(n *model.Node, th model.Thresholds) [6]time.Duration {
	th = ThresholdsFor(n, th)
	e := BeatEdges(th)
	launch := th.KillAfter
	if n.Traits.LaunchTimeout > 0 && n.Status() == model.StatusStarting {
		launch = n.Traits.LaunchTimeout
	}
	return [6]time.Duration{e[0], e[1], e[2], e[3], e[4], launch}
}

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

// ClockSkew is how far in the future a sentinel's mtime may be and still
// count as written just now. Clocks disagree a little: a writer in a VM or
// on another host a few seconds off NTP, a file server that stamps mtimes
// with its own clock, coarse (2 s) timestamps on FAT or SMB. An mtime this
// far ahead or more is no such rounding: its age means nothing (clock_skew)
// and the pid decides at once. Kept as small as the default exit grace: an
// mtime less than this ahead delays the pid's say by no more than that.
const ClockSkew = 5 * time.Second

// skewedBy reports whether mtime is ClockSkew or more after now, and by how
// much; the arithmetic saturates rather than overflows for any mtime.
func skewedBy(mtime, now time.Time) (time.Duration, bool) {
	if now.Sub(mtime) > -ClockSkew {
		return 0, false
	}
	return TimeDistance(mtime, now), true
}

// classifyHeartbeat applies the state and flag tables to a node with a
// `.heartbeat` file, parseable or not.
func classifyHeartbeat(n *model.Node, probe Probe, now time.Time, th model.Thresholds) verdict {
	var v verdict
	hb := n.Heartbeat
	age := now.Sub(n.BeatMtime)
	pid, started := 0, 0.0
	subject := "" // what the reason says about the heartbeat before its age
	if hb == nil {
		v.flags.add(model.FlagUnreadable)
		subject = "heartbeat unreadable"
	} else {
		pid, started = hb.PID, hb.Started
		switch hb.Status {
		case model.StatusCompleted, model.StatusWithdrawn:
			return verdict{state: model.StateFinished, reason: plainReason(hb.Status)}
		case model.StatusStarting:
			v.flags.add(model.FlagStarting)
			subject = "starting"
		case model.StatusPaused:
			v.flags.add(model.FlagPaused)
			subject = "paused"
		case model.StatusRunning:
			subject = "beating"
		default:
			v.flags.add(model.FlagUnknownStatus)
			subject = "unknown status " + strconv.Quote(termtext.OneLine(hb.Status, maxQuestion))
		}
	}
	blocked := n.Blocked != nil
	if blocked {
		v.flags.add(model.FlagBlocked)
	}
	if n.BeatMtime.IsZero() {
		return unknownMtime(v, subject, n.Blocked)
	}
	ahead, skewed := skewedBy(n.BeatMtime, now)
	if skewed {
		v.flags.add(model.FlagClockSkew)
	}
	// beat is the reason's word on the mtime: how old, or how far ahead.
	// Built only for the reason that quotes it: 10,000 nodes a tick.
	beat := func() reason {
		if skewed {
			return plainReason(inTheFuture("heartbeat", ahead))
		}
		return lastBeat(n.BeatMtime, now)
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
		if age > th.Stale && !blocked && !ageNoSign {
			v.state = model.StateDead
			switch {
			case hb == nil:
				v.reason = beat().prefixed(subject + "; ")
			case pid <= 0:
				v.reason = beat().prefixed("no pid; ")
			default:
				v.reason = plainReason("no beat for " + model.FormatAge(age) + " (pid not checked)")
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
			note = "no process expected (pid " + strconv.Itoa(pid) + " " + endedWord(v.process) + ")"
		case ended && launchTimedOut:
			v.state, v.reason = model.StateDead, launchTimeout(n.BeatMtime, now, tr.LaunchTimeout)
			return v
		case ended && tr.PIDPerTurn:
			turn := betweenTurns(n, probe, pid, age, skewed, blocked, th, beat)
			if turn.dead {
				v.state, v.reason = model.StateDead, turn.reason
				return v
			}
			if turn.idle {
				v.flags.add(model.FlagIdle)
			}
			lead = turn.lead
		case v.process == model.ProcessGone:
			v.state, v.reason = model.StateDead, reasonPidGone(pid, beat())
			return v
		case v.process == model.ProcessReused:
			v.state, v.reason = model.StateDead, reasonPidReused(pid, beat())
			return v
		case v.process == model.ProcessUnverified && !tr.NoProcessExpected && !boot.IsZero() && n.BeatMtime.Before(boot.Add(-th.StartTolerance)):
			v.state = model.StateDead
			v.reason = plainReason(fmt.Sprintf("heartbeat predates the last boot (%s); pid %d is not its process", clock(boot, now), pid))
			return v
		}
		v.state = model.StateRunning
	}

	// Running. The pid is alive as the same process (or unverified) when it
	// was probed; stalled needs that, so a node judged by mtime alone never is.
	probedAlive := v.process == model.ProcessAlive || v.process == model.ProcessUnverified
	unverified := v.process == model.ProcessUnverified
	switch {
	case skewed:
		if unverified {
			v.flags.add(model.FlagPidUnverified)
		}
		v.reason = beat().prefixed(subject + "; ").appended(" (" + pidNote(pid, v.process, unverifiedWhy, th.NoPidCheck) + ")")
	case age > th.Stale && probedAlive && !ageNoSign:
		v.flags.add(model.FlagStalled)
		if unverified {
			v.flags.add(model.FlagPidUnverified)
		}
		if age > th.KillAfter && !blocked && !unverified && !tr.NeverKill {
			v.flags.add(model.FlagKillCandidate)
		}
		v.reason = stalledFor(pid, n.BeatMtime, now, unverified, unverifiedWhy)
	case age > th.Beat && (age <= th.Stale || ageNoSign):
		v.flags.add(model.FlagQuiet)
		v.reason = beat().prefixed(subject + ", quiet: ")
		if age > th.Stale && tr.BeatNotRequired && note == "" {
			// Running only because no beat is required: say so, and
			// what the pid said.
			if unverified {
				v.flags.add(model.FlagPidUnverified)
			}
			note = "no beat required"
			if probedAlive {
				note += " (" + pidNote(pid, v.process, unverifiedWhy, th.NoPidCheck) + ")"
			}
		}
	default:
		v.reason = beat().prefixed(subject + "; ")
	}
	if lead != "" {
		v.reason = beat().prefixed(lead)
	}
	if note != "" {
		v.reason = v.reason.appended("; " + note)
	}
	if blocked {
		v.reason = beat().prefixed(waitingForHuman(n.Blocked) + "; ")
	}
	return v
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
// and was found gone past the exit grace (SPEC §3, §10). With an owner
// recorded (the live engine: the pid's parent when first seen alive), a
// living owner means between turns — running and idle until the beat is
// stale — and an owner gone too means dead at once. With none (`--once`
// has no memory) the source's own rule holds: dead once the beat is
// stale. A blocked node is never dead for idleness, so only its owner's
// end makes it dead.
func betweenTurns(n *model.Node, probe Probe, pid int, age time.Duration, skewed, blocked bool,
	th model.Thresholds, beat func() reason) turn {
	stale := age > th.Stale && !skewed && !blocked
	if n.Owner.PID > 0 {
		owner := ownerStatus(probe.Lookup(n.Owner.PID), n.Owner.Started, th.StartTolerance)
		ownerPid := strconv.Itoa(n.Owner.PID)
		switch {
		case owner == model.ProcessGone || owner == model.ProcessReused:
			why := "pid " + strconv.Itoa(pid) + " gone and its owner pid " + ownerPid + " too"
			if owner == model.ProcessReused {
				why += " (now another process)"
			}
			return turn{dead: true, reason: beat().prefixed(why + "; ")}
		case stale:
			return turn{dead: true, reason: reasonPidGone(pid, beat())}
		}
		return turn{idle: true, lead: "between turns: pid " + strconv.Itoa(pid) + " exited; owner pid " + ownerPid + " alive; "}
	}
	if stale {
		return turn{dead: true, reason: reasonPidGone(pid, beat())}
	}
	return turn{lead: "pid " + strconv.Itoa(pid) + " gone between turns: dead once the beat is stale; "}
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

// endedWord names a pid found not to be its process any more.
func endedWord(p model.ProcessStatus) string {
	if p == model.ProcessReused {
		return "now another process"
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
		return "pid " + strconv.Itoa(pid) + " " + endedWord(process)
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
	pid := n.LegacyPID
	written := beatAge(".running written ", n.BeatMtime, now, " ago")
	ahead, skewed := skewedBy(n.BeatMtime, now)
	if skewed {
		v.flags.add(model.FlagClockSkew)
		written = plainReason(inTheFuture(".running", ahead))
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

// bootOnce asks its BootTimer at most once. ClassifyForest is sequential,
// so it needs no lock.
type bootOnce struct {
	Probe
	timer BootTimer
	boot  time.Time
	read  bool
}

func (b *bootOnce) BootTime() time.Time {
	if !b.read {
		b.boot, b.read = b.timer.BootTime(), true
	}
	return b.boot
}

func bootTime(probe Probe) time.Time {
	if bt, ok := probe.(BootTimer); ok {
		return bt.BootTime()
	}
	return time.Time{}
}

// classifyInTree adds what depends on the tree: orphaned, then the action.
func classifyInTree(n *model.Node, now time.Time, th model.Thresholds) {
	r := reason{text: n.Reason, age: n.ReasonAge}
	if since, word, ok := orphanedBy(n); ok {
		n.Flags = addFlag(n.Flags, model.FlagOrphaned)
		n.OrphanedSince = since
		lead := "lead " + word
		if !since.IsZero() {
			lead += " since " + clock(since, now)
			if !since.After(now) {
				// A lead's mtime in the future (clock_skew) has no age.
				lead += " (" + model.FormatAge(now.Sub(since)) + " ago)"
			}
		}
		r = r.prefixed(lead + "; ")
	}
	r = r.appended(treeNote(n))
	action, note := Recommend(n, now, th)
	n.Action = action
	if note != "" {
		r = r.appended("; " + note)
	}
	n.Reason, n.ReasonAge = r.text, r.age
}

// treeNote names, for a conflict, both claims — the parent kept (or, for a
// session lead that refused a registry, its own word) and the parents that
// lost — and, for a member of a cycle, the edge that was cut (SPEC §2), as
// "; ..." to append to the reason. The scanner lists the losing parents in
// OtherParents and appends, on the node whose parent link broke a cycle
// (left without a parent), that parent last. A registering parent names the
// nodes of other sessions its `.children` claims (RefusedChildren).
func treeNote(n *model.Node) string {
	var note strings.Builder
	losers := n.OtherParents
	if n.Parent == nil && n.HasScanFlag(model.FlagCycle) && len(losers) > 0 {
		losers = losers[:len(losers)-1] // the last is the cycle's cut
	}
	if n.HasScanFlag(model.FlagConflict) && len(losers) > 0 {
		switch {
		case n.Parent != nil:
			note.WriteString("; parent " + termtext.OneLine(n.Parent.ID, maxID))
		case n.Heartbeat != nil && n.Heartbeat.SessionLead():
			note.WriteString(`; a session lead (parent_heartbeat "")`)
		}
		note.WriteString("; also claimed by ")
		writeIDs(&note, losers)
	}
	if len(n.RefusedChildren) > 0 {
		note.WriteString("; its .children names ")
		writeIDs(&note, n.RefusedChildren)
		note.WriteString(" of " + plural(len(n.RefusedChildren), "another session", "other sessions") + ": not adopted")
	}
	if n.HasScanFlag(model.FlagCycle) {
		// The cut is on the member left without a parent: n or an ancestor
		// up the chain of members.
		parent, child := n.ID, n.ID // no cut found: n named itself its parent
		for a := n; a != nil && a.HasScanFlag(model.FlagCycle); a = a.Parent {
			if a.Parent == nil && len(a.OtherParents) > 0 {
				parent, child = a.OtherParents[len(a.OtherParents)-1], a.ID
				break
			}
		}
		note.WriteString("; cycle broken at " + termtext.OneLine(parent, maxID) + " → " + termtext.OneLine(child, maxID))
	}
	return note.String()
}

// writeIDs writes ids, each on one line, separated by ", ".
func writeIDs(note *strings.Builder, ids []string) {
	for i, id := range ids {
		if i > 0 {
			note.WriteString(", ")
		}
		note.WriteString(termtext.OneLine(id, maxID))
	}
}

// orphanedBy reports whether n is orphaned — running and not stalled under
// a dead or finished parent — with the parent's state word and when it
// stopped (its last beat; zero when its heartbeat is gone).
func orphanedBy(n *model.Node) (since time.Time, word string, ok bool) {
	p := n.Parent
	if n.State != model.StateRunning || p == nil || n.HasFlag(model.FlagStalled) {
		return time.Time{}, "", false
	}
	switch p.State {
	case model.StateDead:
		return p.BeatMtime, "dead", true
	case model.StateFinished:
		word = "finished"
		if s := p.Status(); s != "" {
			word = s
		} else if p.Entry != nil {
			word = p.Entry.Status
		}
		return p.BeatMtime, word, true
	}
	return time.Time{}, "", false
}

// Recommend returns n's recommended action (SPEC §3, the first row that
// matches wins, then the compact override) and a short note for the reason
// when the action needs explaining. It reads n's classification, its
// parent's (state and action) and its children's states: ClassifyForest
// calls it parents first.
func Recommend(n *model.Node, now time.Time, th model.Thresholds) (model.Action, string) {
	th = ThresholdsFor(n, th)
	if n.HasScanFlag(model.FlagOutsideRoot) || n.HasFlag(model.FlagOutsideRoot) {
		if !n.HasHeartbeat && !n.Legacy { // its reason already says where it is
			return model.ActionNone, "never acted on"
		}
		return model.ActionNone, "outside every root: never acted on"
	}
	action, note := recommendRow(n, now, th)
	if action == model.ActionNone {
		if k := unstartedRegistrations(n, now, th); k > 0 {
			return model.ActionCompact, strconv.Itoa(k) + " registered " + plural(k, "child", "children") + " never started"
		}
	}
	return action, note
}

// recommendRow is the first-match table of SPEC §3.
func recommendRow(n *model.Node, now time.Time, th model.Thresholds) (model.Action, string) {
	parentState := model.State("")
	if n.Parent != nil {
		parentState = n.Parent.State
	}
	switch {
	case n.HasFlag(model.FlagBlocked):
		if n.State != model.StateRunning {
			// The state reason is about the pid; the answer is about this.
			return model.ActionAnswer, waitingForHuman(n.Blocked)
		}
		return model.ActionAnswer, ""
	case n.HasFlag(model.FlagKillCandidate):
		return model.ActionKill, ""
	case n.HasFlag(model.FlagStalled) && n.HasFlag(model.FlagPidUnverified):
		return model.ActionWait, "never a kill candidate: its pid cannot be verified"
	case n.HasFlag(model.FlagStalled) && n.Traits.NeverKill:
		return model.ActionWait, "never a kill candidate: a human controls it"
	case n.HasFlag(model.FlagStalled):
		return model.ActionWait, "kill candidate in " + model.FormatAge(th.KillAfter-now.Sub(n.BeatMtime))
	case n.State == model.StateRunning:
		return model.ActionNone, ""
	case n.State == model.StateDead:
		return recommendDead(n, parentState)
	case n.State == model.StateFinished:
		if completedOver(n, model.OutcomeFailure) {
			// A completed heartbeat over a failed phase is not work to
			// merge. A withdrawn one said its own word: nothing to surface.
			return model.ActionSurface, "CfA " + termtext.OneLine(n.Cfa.State, maxID) + ": not work to merge"
		}
		if n.Status() == model.StatusCompleted && parentState != model.StateRunning {
			if n.Traits.MergesItself {
				return model.ActionNone, mergesItself
			}
			if n.Merged {
				return model.ActionNone, "merged"
			}
			return model.ActionMerge, "ready to merge"
		}
		return model.ActionNone, ""
	}
	// missing
	return model.ActionWait, ""
}

func recommendDead(n *model.Node, parentState model.State) (model.Action, string) {
	outcome := model.OutcomeWorking
	if n.Cfa != nil {
		outcome = n.Cfa.Outcome()
	}
	switch {
	case parentState == model.StateRunning:
		return model.ActionWait, "its lead is running and owns the recovery"
	case outcome == model.OutcomeSuccess && n.Traits.MergesItself:
		return model.ActionNone, "CfA " + n.Cfa.State + "; " + mergesItself
	case outcome == model.OutcomeSuccess:
		if n.Merged {
			return model.ActionNone, "CfA " + n.Cfa.State + ", merged"
		}
		return model.ActionMerge, "CfA " + n.Cfa.State + ": ready to merge"
	case outcome == model.OutcomeFailure:
		return model.ActionSurface, "CfA " + n.Cfa.State + ": not retryable"
	}
	if _, left := RetriesLeft(n); left <= 0 {
		return model.ActionSurface, "retry budget spent (" + retrySummary(n) + ")"
	}
	if parentState == model.StateDead {
		top := topmostDeadAncestor(n)
		if top.Action == model.ActionResume {
			return model.ActionWait, "resume goes on " + termtext.OneLine(top.ID, maxID)
		}
		return model.ActionWait, "its lead " + termtext.OneLine(top.ID, maxID) + " is dead too"
	}
	return model.ActionResume, retrySummary(n)
}

// completedOver reports whether n finished `completed` (by its heartbeat,
// or by its registry line when the heartbeat is gone) with its CfA state's
// outcome the one given.
func completedOver(n *model.Node, outcome string) bool {
	if n.Cfa == nil || n.Cfa.Outcome() != outcome {
		return false
	}
	if n.Heartbeat != nil {
		return n.Heartbeat.Status == model.StatusCompleted
	}
	return n.Entry != nil && n.Entry.Status == model.StatusCompleted
}

// mergesItself is the note of a node whose source merges finished work by
// itself (Traits.MergesItself): never merge.
const mergesItself = "its source merges by itself"

// topmostDeadAncestor climbs from n's parent while the ancestors are dead.
func topmostDeadAncestor(n *model.Node) *model.Node {
	top := n.Parent
	for top.Parent != nil && top.Parent.State == model.StateDead {
		top = top.Parent
	}
	return top
}

// unstartedRegistrations counts n's registered children that are missing,
// when n's `.children` is older than stale: an optimistic registration that
// had its time to start and did not. Zero otherwise.
func unstartedRegistrations(n *model.Node, now time.Time, th model.Thresholds) int {
	if n.RegistryMtime.IsZero() || now.Sub(n.RegistryMtime) <= th.Stale {
		return 0
	}
	k := 0
	for _, c := range n.Children {
		// A missing node exists only through a registry line; under n it is
		// one of n's own lines (the parent-declared edge wins, SPEC §2).
		// One outside every root was not read, so nothing says it did not start.
		if c.State == model.StateMissing && c.Entry != nil && !c.HasScanFlag(model.FlagOutsideRoot) {
			k++
		}
	}
	return k
}

// RetriesLeft reports the resumes already spent in the node's current CfA
// state and how many are left of both budgets (3 per CfA state, 9 per
// node), never below zero. The JSON `retries` object is
// {"total": n.Retries.Total, "phase": phase, "left": left}.
func RetriesLeft(n *model.Node) (phase, left int) {
	state := ""
	if n.Cfa != nil {
		state = n.Cfa.State
	}
	// A negative count (a hand-edited or corrupt `.retry-count`) spent
	// nothing; it must not buy extra retries.
	phase = max(n.Retries.ByPhase[state], 0)
	total := max(n.Retries.Total, 0)
	left = min(model.RetriesPerState-phase, model.RetriesPerNode-total)
	return phase, max(left, 0)
}

func plural(k int, one, many string) string {
	if k == 1 {
		return one
	}
	return many
}
