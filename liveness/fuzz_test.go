package liveness

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// FuzzClassify feeds arbitrary facts to a parent and a child and checks the
// invariants that tie SPEC §3's tables together, whatever the input (SPEC
// §9: bad input never crashes).
func FuzzClassify(f *testing.F) {
	// status, pid choice, beat age (s), blocked, cfa state, retries total,
	// per state, scan flag bits, no-pid-check, parent status, parent pid, parent age,
	// registry age (s), question
	f.Add("running", uint8(0), int64(3), false, "EXECUTE", 0, 0, uint8(0), false, "running", uint8(0), int64(1), int64(600), "")
	f.Add("running", uint8(1), int64(400), true, "DONE", 9, 3, uint8(7), false, "completed", uint8(1), int64(90), int64(0), "go?\n")
	f.Add("sleeping", uint8(3), int64(-5), false, "", -1, 99, uint8(255), true, "", uint8(5), int64(1<<40), int64(-1), "\x1b[2J")
	f.Add("", uint8(2), int64(0), true, "WITHDRAWN", 2, 1, uint8(1), false, "withdrawn", uint8(2), int64(130), int64(7200), "q")
	f.Fuzz(func(t *testing.T, status string, pidChoice uint8, ageSec int64, isBlocked bool, cfaState string,
		total, perState int, scanBits uint8, noPid bool, parentStatus string, parentPid uint8, parentAgeSec int64,
		registryAgeSec int64, question string) {
		pids := []int{pidAlive, pidGone, pidReused, pidUnverified, 0, -3}
		parent := node("p", parentStatus, pids[int(parentPid)%len(pids)], parentAgeSec)
		child := node("p/c/1", status, pids[int(pidChoice)%len(pids)], ageSec)
		if isBlocked {
			child.Blocked = &model.Blocked{Question: question}
		}
		if cfaState != "" {
			child.Cfa = &model.CfaState{State: cfaState}
		}
		child.Retries = model.RetryCount{Total: total, ByPhase: map[string]int{cfaState: perState}}
		for i, fl := range []model.Flag{model.FlagConflict, model.FlagCycle, model.FlagOutsideRoot, model.FlagUnreadable} {
			if scanBits&(1<<i) != 0 {
				child.ScanFlags = append(child.ScanFlags, fl)
			}
		}
		if registryAgeSec != 0 {
			parent.RegistryMtime = now.Add(-time.Duration(registryAgeSec) * time.Second)
		}
		adopt(parent, child, registered("p/d/2", "active"))

		thr := model.DefaultThresholds()
		thr.NoPidCheck = noPid
		probe := newFakeProbe()
		ClassifyForest([]*model.Node{parent}, probe, now, thr)

		if noPid && len(probe.askedAbout()) > 0 {
			t.Errorf("--no-pid-check asked the probe about %v", probe.askedAbout())
		}
		parent.Walk(func(n *model.Node) { checkInvariants(t, n) })
	})
}

// node builds a fuzzed node: an empty status means an unreadable heartbeat.
func node(id, status string, pid int, ageSec int64) *model.Node {
	n := beating(id, status, pid, time.Duration(ageSec)*time.Second)
	if ageSec > 1<<33 || ageSec < -(1<<33) {
		n.BeatMtime = time.Time{} // no mtime, as for a file that could not be opened
	}
	if status == "" {
		n.Heartbeat = nil
	}
	return n
}

func checkInvariants(t *testing.T, n *model.Node) {
	t.Helper()
	if !slices.Contains(model.States, n.State) {
		t.Fatalf("%s: state %q", n.ID, n.State)
	}
	known := []model.Action{model.ActionNone, model.ActionWait, model.ActionAnswer, model.ActionKill,
		model.ActionResume, model.ActionMerge, model.ActionSurface, model.ActionCompact}
	if !slices.Contains(known, n.Action) {
		t.Fatalf("%s: action %q", n.ID, n.Action)
	}
	if n.Reason == "" || strings.ContainsAny(n.Reason, "\n\r\x1b") {
		t.Errorf("%s: reason %q is not one clean line", n.ID, n.Reason)
	}
	last := -1
	for _, fl := range n.Flags {
		i := slices.Index(model.Flags, fl)
		if i <= last {
			t.Errorf("%s: flags %v not deduplicated in model.Flags order", n.ID, n.Flags)
		}
		last = i
	}
	has := n.HasFlag
	running := n.State == model.StateRunning
	switch {
	case has(model.FlagKillCandidate) && (!has(model.FlagStalled) || has(model.FlagBlocked)):
		t.Errorf("%s: kill_candidate without stalled or with blocked: %v", n.ID, n.Flags)
	case (has(model.FlagStalled) || has(model.FlagQuiet) || has(model.FlagOrphaned)) && !running:
		t.Errorf("%s: %s with %v", n.ID, n.State, n.Flags)
	case has(model.FlagStalled) && has(model.FlagQuiet):
		t.Errorf("%s: both stalled and quiet", n.ID)
	case has(model.FlagBlocked) && n.State == model.StateFinished:
		t.Errorf("%s: a finished node flagged blocked", n.ID)
	case has(model.FlagOutsideRoot) && n.Action != model.ActionNone:
		t.Errorf("%s: outside_root but action %s", n.ID, n.Action)
	case has(model.FlagBlocked) && !has(model.FlagOutsideRoot) && n.Action != model.ActionAnswer:
		t.Errorf("%s: blocked but action %s", n.ID, n.Action)
	case n.Action == model.ActionKill && !has(model.FlagKillCandidate):
		t.Errorf("%s: kill without kill_candidate", n.ID)
	case n.Action == model.ActionResume && n.State != model.StateDead:
		t.Errorf("%s: resume on a %s node", n.ID, n.State)
	case n.Action == model.ActionResume && n.Parent != nil && n.Parent.State == model.StateDead:
		t.Errorf("%s: resume under a dead parent (it belongs on the topmost)", n.ID)
	case n.State == model.StateMissing && n.Action != model.ActionWait:
		t.Errorf("%s: missing with action %s", n.ID, n.Action)
	case has(model.FlagOrphaned) && (n.Parent == nil || !n.OrphanedSince.Equal(n.Parent.BeatMtime)):
		t.Errorf("%s: orphaned since %v, not its parent's last beat", n.ID, n.OrphanedSince)
	case !has(model.FlagOrphaned) && !n.OrphanedSince.IsZero():
		t.Errorf("%s: orphaned since %v without the flag", n.ID, n.OrphanedSince)
	}
	if _, left := RetriesLeft(n); left < 0 || left > model.RetriesPerState {
		t.Errorf("%s: %d retries left", n.ID, left)
	}
}
