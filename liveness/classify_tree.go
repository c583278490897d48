package liveness

// The second pass, parents first: what depends on the tree — orphaned, the
// conflict and cycle notes, and the recommended action (Recommend).

import (
	"strconv"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

// classifyInTree adds what depends on the tree: orphaned, then the action.
func classifyInTree(n *model.Node, now time.Time, th model.Thresholds) {
	r := reason{text: n.Reason, age: n.ReasonAge}
	if since, word, ok := orphanedBy(n); ok {
		n.Flags = addFlag(n.Flags, model.FlagOrphaned)
		n.SetOrphanedSince(since)
		lead, aged := "lead "+word, false
		if !since.IsZero() {
			lead += " since " + clock(since, now)
			if !since.After(now) {
				// A lead's mtime in the future (clock_skew) has no age.
				lead += " (" + model.FormatAge(now.Sub(since)) + " ago)"
				aged = true
			}
		}
		r = r.prefixed(lead + "; ")
		if aged {
			r = r.quotingTheClock()
		}
	}
	r = r.appended(treeNote(n))
	action, note := recommend(n, now, th)
	n.Action = action
	if note.text != "" {
		r = r.appendedReason("; ", note)
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
	losers := n.OtherParents()
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
	if refused := n.RefusedChildren(); len(refused) > 0 {
		note.WriteString("; its .children names ")
		writeIDs(&note, refused)
		note.WriteString(" of " + plural(len(refused), "another session", "other sessions") + ": not adopted")
	}
	if n.HasScanFlag(model.FlagCycle) {
		// The cut is on the member left without a parent: n or an ancestor
		// up the chain of members.
		parent, child := n.ID, n.ID // no cut found: n named itself its parent
		for a := n; a != nil && a.HasScanFlag(model.FlagCycle); a = a.Parent {
			if others := a.OtherParents(); a.Parent == nil && len(others) > 0 {
				parent, child = others[len(others)-1], a.ID
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
	action, note := recommend(n, now, th)
	return action, note.text
}

// recommend is Recommend with its note as a reason: whether the note
// quotes an age that moves with the clock ("kill candidate in 1m30s").
func recommend(n *model.Node, now time.Time, th model.Thresholds) (model.Action, reason) {
	th = ThresholdsFor(n, th)
	if n.HasScanFlag(model.FlagOutsideRoot) || n.HasFlag(model.FlagOutsideRoot) {
		if !n.HasHeartbeat && !n.Legacy { // its reason already says where it is
			return model.ActionNone, plainReason("never acted on")
		}
		return model.ActionNone, plainReason("outside every root: never acted on")
	}
	action, note := recommendRow(n, now, th)
	action, note = inItsDir(n, action, note)
	if action == model.ActionNone {
		if k := unstartedRegistrations(n, now, th); k > 0 {
			return model.ActionCompact, plainReason(strconv.Itoa(k) + " registered " + plural(k, "child", "children") + " never started")
		}
	}
	return action, note
}

// recommendRow is the first-match table of SPEC §3.
func recommendRow(n *model.Node, now time.Time, th model.Thresholds) (model.Action, reason) {
	parentState := model.State("")
	if n.Parent != nil {
		parentState = n.Parent.State
	}
	switch {
	case n.HasFlag(model.FlagBlocked):
		if n.State != model.StateRunning {
			// The state reason is about the pid; the answer is about this.
			return model.ActionAnswer, plainReason(waitingForHuman(n.Blocked))
		}
		return model.ActionAnswer, plainReason("")
	case n.HasFlag(model.FlagKillCandidate):
		return model.ActionKill, plainReason("")
	case n.HasFlag(model.FlagStalled):
		return model.ActionWait, whyNoKillYet(n, now, th)
	case n.State == model.StateRunning:
		return model.ActionNone, plainReason("")
	case n.State == model.StateDead:
		return recommendDead(n, parentState)
	case n.State == model.StateFinished:
		return recommendFinished(n, parentState)
	}
	// missing
	return model.ActionWait, plainReason("")
}

// whyNoKillYet is the note of the row "stalled, not yet kill_candidate":
// why the node waits, for good or until kill-after.
func whyNoKillYet(n *model.Node, now time.Time, th model.Thresholds) reason {
	switch {
	case n.HasFlag(model.FlagPidUnverified):
		return plainReason("never a kill candidate: its pid cannot be verified")
	case n.Traits.ProcessUnseen && n.PID() <= 0:
		// No pid to kill: it waits for its system's own kill time, past
		// which it is dead.
		return deadIn(th.KillAfter - now.Sub(n.BeatMtime))
	case n.Traits.NeverKill:
		return plainReason("never a kill candidate: a human controls it")
	case n.PID() <= 1:
		return plainReason("never a kill candidate: pid " + strconv.Itoa(n.PID()) + " is never signalled")
	case now.Sub(n.BeatMtime) > th.KillAfter:
		// Past kill-after, neither blocked, unverified nor a human's,
		// and still no candidate: the classifier found its pid to be
		// dispatchtop's own or an ancestor's (neverSignalledBy), in the
		// same pass, at the same now.
		return plainReason("never a kill candidate: pid " + strconv.Itoa(n.PID()) + " is dispatchtop itself or one of its ancestors")
	}
	return killCandidateIn(th.KillAfter - now.Sub(n.BeatMtime))
}

// recommendFinished is the finished rows of the table.
func recommendFinished(n *model.Node, parentState model.State) (model.Action, reason) {
	if completedOver(n, model.OutcomeFailure) {
		// A completed heartbeat over a failed phase is not work to
		// merge. A withdrawn one said its own word: nothing to surface.
		return model.ActionSurface, plainReason("CfA " + termtext.OneLine(n.Cfa.State, maxID) + ": not work to merge")
	}
	if n.Status() != model.StatusCompleted || parentState == model.StateRunning {
		return model.ActionNone, plainReason("")
	}
	switch {
	case n.Traits.MergesItself:
		return model.ActionNone, plainReason(mergesItself)
	case n.Merged:
		return model.ActionNone, plainReason("merged")
	}
	return model.ActionMerge, plainReason("ready to merge")
}

func recommendDead(n *model.Node, parentState model.State) (model.Action, reason) {
	outcome := model.OutcomeWorking
	if n.Cfa != nil {
		outcome = n.Cfa.Outcome()
	}
	switch {
	case parentState == model.StateRunning:
		return model.ActionWait, plainReason("its lead is running and owns the recovery")
	case outcome == model.OutcomeSuccess && n.Traits.MergesItself:
		return model.ActionNone, plainReason("CfA " + n.Cfa.State + "; " + mergesItself)
	case outcome == model.OutcomeSuccess:
		if n.Merged {
			return model.ActionNone, plainReason("CfA " + n.Cfa.State + ", merged")
		}
		return model.ActionMerge, plainReason("CfA " + n.Cfa.State + ": ready to merge")
	case outcome == model.OutcomeFailure:
		return model.ActionSurface, plainReason("CfA " + n.Cfa.State + ": not retryable")
	}
	if _, left := RetriesLeft(n); left <= 0 {
		return model.ActionSurface, plainReason("retry budget spent (" + retrySummary(n) + ")")
	}
	if parentState == model.StateDead {
		top := topmostDeadAncestor(n)
		if top.Action == model.ActionResume {
			return model.ActionWait, plainReason("resume goes on " + termtext.OneLine(top.ID, maxID))
		}
		return model.ActionWait, plainReason("its lead " + termtext.OneLine(top.ID, maxID) + " is dead too")
	}
	return model.ActionResume, plainReason(retrySummary(n))
}

// inItsDir keeps the row's action when n can take it: resume and merge
// work in the node's infra dir (SPEC §5.2, §5.4), so a node without one (a
// record of another source whose store keeps no dir for it) is given
// `surface` instead — an operator can look, the engine could not act.
func inItsDir(n *model.Node, action model.Action, note reason) (model.Action, reason) {
	if n.InfraDir != "" {
		return action, note
	}
	var verb string
	switch action {
	case model.ActionResume:
		verb = "resumed"
	case model.ActionMerge:
		verb = "merged"
	default:
		return action, note
	}
	source := n.Source
	if source == "" {
		source = "native"
	}
	return model.ActionSurface, plainReason("cannot be " + verb + " here: its " + termtext.OneLine(source, maxID) + " record has no dir")
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
	if n.RegistryMtime().IsZero() || now.Sub(n.RegistryMtime()) <= th.Stale {
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
