package liveness

// One test per table of SPEC §3 — state, flags, recommended action — and the
// appendix's worked example, each row a named case. Thresholds are the
// defaults (beat 30 s, stale 120 s, kill-after 300 s, exit-grace 5 s,
// start-tolerance 2 s); now is 12:00:00.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

var th = model.DefaultThresholds()

func noPidCheck() model.Thresholds {
	t := model.DefaultThresholds()
	t.NoPidCheck = true
	return t
}

func TestStateTable(t *testing.T) {
	tests := []struct {
		name        string
		node        *model.Node
		parentRegAt time.Duration // the parent's `.children` age, for missing nodes
		th          model.Thresholds
		want        model.State
		wantProcess model.ProcessStatus
		wantReason  string // a substring of the reason
	}{
		// missing
		{name: "missing: registered active, no heartbeat file", node: registered("s/x/1", "active"), parentRegAt: 2 * time.Minute,
			want: model.StateMissing, wantReason: "registered but never started (2m00s ago)"},
		{name: "missing: a non-terminal line other than active is still missing", node: registered("s/x/1", "paused"),
			want: model.StateMissing, wantReason: "registered but never started"},
		{name: "missing: neither a heartbeat nor a registry line", node: &model.Node{ID: "s/x/9", InfraDir: "/r/s/x/9"},
			want: model.StateMissing, wantReason: "no heartbeat file"},
		{name: "finished: line marked completed, heartbeat gone", node: registered("s/x/1", "completed"),
			want: model.StateFinished, wantReason: "registry says completed; heartbeat gone"},
		{name: "finished: line marked withdrawn, heartbeat gone", node: registered("s/x/1", "withdrawn"),
			want: model.StateFinished, wantReason: "registry says withdrawn; heartbeat gone"},
		{name: "outside_root: registered, exists but is not read, so never 'never started'", node: outside("s/x/1", "active"), parentRegAt: 2 * time.Minute,
			want: model.StateMissing, wantReason: "outside every root: not read"},
		{name: "outside_root: a line marked completed is not 'heartbeat gone'", node: outside("s/x/1", "completed"),
			want: model.StateFinished, wantReason: "registry says completed; outside every root: not read"},
		{name: "outside_root: a declared parent, no registry line", node: &model.Node{ID: "/elsewhere/job", InfraDir: "/elsewhere/job", Rare: &model.Rare{ScanFlags: []model.Flag{model.FlagOutsideRoot}}},
			want: model.StateMissing, wantReason: "outside every root: not read"},

		// finished
		{name: "finished: status completed (pid gone and stale do not matter)", node: beating("s", "completed", pidGone, time.Hour),
			want: model.StateFinished, wantReason: "completed"},
		{name: "finished: status withdrawn", node: beating("s", "withdrawn", pidAlive, time.Second),
			want: model.StateFinished, wantReason: "withdrawn"},

		// dead (a): stale and the pid not alive as the same process
		{name: "dead (a): stale, pid gone", node: beating("s", "running", pidGone, 3*time.Minute+12*time.Second),
			want: model.StateDead, wantProcess: model.ProcessGone, wantReason: "pid 4122 gone; last beat 3m12s ago"},
		{name: "dead (a): stale, pid reused by another process", node: beating("s", "running", pidReused, 3*time.Minute),
			want: model.StateDead, wantProcess: model.ProcessReused, wantReason: "pid 4123 now belongs to another process; last beat 3m00s ago"},
		{name: "dead (a): stale, create time 2.5s off started is outside start-tolerance", node: beating("s", "running", pidFar, 3*time.Minute),
			want: model.StateDead, wantProcess: model.ProcessReused, wantReason: "another process"},
		{name: "dead (a): no pid (0) and stale", node: beating("s", "running", 0, 3*time.Minute),
			want: model.StateDead, wantReason: "no pid; last beat 3m00s ago"},
		{name: "dead (a): negative pid and stale", node: beating("s", "running", -7, 3*time.Minute),
			want: model.StateDead, wantReason: "no pid"},

		// dead (b): the fast path, pid verified gone past the exit grace
		{name: "dead (b): pid gone, beat 10s old (fresh otherwise)", node: beating("s", "running", pidGone, 10*time.Second),
			want: model.StateDead, wantProcess: model.ProcessGone, wantReason: "pid 4122 gone; last beat 10s ago"},
		{name: "dead (b): pid reused, beat 40s old", node: beating("s", "running", pidReused, 40*time.Second),
			want: model.StateDead, wantProcess: model.ProcessReused, wantReason: "pid 4123 now belongs to another process; last beat 40s ago"},
		{name: "running: pid gone but beat within exit-grace (a finalize may be in flight)", node: beating("s", "running", pidGone, 3*time.Second),
			want: model.StateRunning, wantProcess: model.ProcessNotProbed, wantReason: "last beat 3s ago"},
		{name: "running: pid gone, beat exactly exit-grace old is not older than it", node: beating("s", "running", pidGone, 5*time.Second),
			want: model.StateRunning, wantProcess: model.ProcessNotProbed},

		// running: everything else that has a heartbeat
		{name: "running: fresh beat, probe not asked", node: beating("s", "running", pidAlive, 2*time.Second),
			want: model.StateRunning, wantProcess: model.ProcessNotProbed, wantReason: "beating; last beat 2s ago"},
		{name: "running: stale, pid alive as the same process", node: beating("s", "running", pidAlive, 3*time.Minute),
			want: model.StateRunning, wantProcess: model.ProcessAlive, wantReason: "alive but not beating for 3m00s"},
		{name: "running: create time 1.5s off started is within start-tolerance", node: beating("s", "running", pidNear, 3*time.Minute),
			want: model.StateRunning, wantProcess: model.ProcessAlive},
		{name: "running: stale, pid exists but create time unreadable (treated as alive)", node: beating("s", "running", pidUnverified, 3*time.Minute),
			want: model.StateRunning, wantProcess: model.ProcessUnverified, wantReason: "(pid 4124 unverified)"},
		{name: "running: stale, heartbeat without started (pid unverifiable, treated as alive)", node: beating("s", "running", pidReused, 3*time.Minute, noStarted),
			want: model.StateRunning, wantProcess: model.ProcessUnverified},
		{name: "running: no pid but fresh", node: beating("s", "running", 0, 10*time.Second),
			want: model.StateRunning, wantReason: "beating; last beat 10s ago"},
		{name: "running: beat exactly stale old, pid gone is still dead by (b)", node: beating("s", "running", pidGone, 120*time.Second),
			want: model.StateDead, wantProcess: model.ProcessGone},
		{name: "running: no pid, beat exactly stale old is not older than stale", node: beating("s", "running", 0, 120*time.Second),
			want: model.StateRunning},
		{name: "running: unknown status is non-terminal", node: beating("s", "sleeping", pidAlive, time.Second),
			want: model.StateRunning, wantReason: `unknown status "sleeping"`},
		{name: "dead: unknown status with pid gone", node: beating("s", "sleeping", pidGone, time.Minute),
			want: model.StateDead, wantProcess: model.ProcessGone},

		// --no-pid-check: mtime alone
		{name: "no-pid-check: stale is dead even with a live pid", node: beating("s", "running", pidAlive, 3*time.Minute), th: noPidCheck(),
			want: model.StateDead, wantReason: "no beat for 3m00s (pid not checked)"},
		{name: "no-pid-check: fresh is running even with a gone pid", node: beating("s", "running", pidGone, 60*time.Second), th: noPidCheck(),
			want: model.StateRunning},

		// an unreadable heartbeat: state from the mtime
		{name: "unreadable heartbeat, fresh mtime: running", node: unreadable("s", 10*time.Second),
			want: model.StateRunning, wantReason: "heartbeat unreadable; last beat 10s ago"},
		{name: "unreadable heartbeat, stale mtime: dead", node: unreadable("s", 3*time.Minute),
			want: model.StateDead, wantReason: "heartbeat unreadable; last beat 3m00s ago"},

		{name: "unreadable heartbeat that could not be opened (no mtime): running, not probed", node: unreadable("s", 0),
			want: model.StateRunning, wantReason: "heartbeat unreadable; mtime unknown"},

		// legacy `.running`
		{name: "legacy: .running that could not be opened (no mtime): running", node: legacy("c", 0, 0),
			want: model.StateRunning, wantReason: ".running unreadable; mtime unknown"},
		{name: "legacy: live pid, written after boot: running", node: legacy("c", pidAlive, 3*time.Hour),
			want: model.StateRunning, wantProcess: model.ProcessAlive, wantReason: "pid 4121 alive; .running written 3h00m ago"},
		{name: "legacy: live pid with another create time is not called reused (no started)", node: legacy("c", pidReused, time.Hour),
			want: model.StateRunning, wantProcess: model.ProcessAlive},
		{name: "legacy: pid gone past exit-grace: dead", node: legacy("c", pidGone, 10*time.Second),
			want: model.StateDead, wantProcess: model.ProcessGone, wantReason: "pid 4122 gone"},
		{name: "legacy: pid gone within exit-grace: running", node: legacy("c", pidGone, 2*time.Second),
			want: model.StateRunning, wantProcess: model.ProcessNotProbed},
		{name: "legacy: written before the last boot: dead even with a live pid", node: legacy("c", pidAlive, 48*time.Hour),
			want: model.StateDead, wantReason: ".running predates the last boot"},
		{name: "legacy: no pid in .running and stale: dead", node: legacy("c", 0, time.Hour),
			want: model.StateDead, wantReason: "no pid in .running"},
		{name: "legacy, no-pid-check: stale is dead", node: legacy("c", pidAlive, time.Hour), th: noPidCheck(),
			want: model.StateDead, wantReason: "(pid not checked)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.parentRegAt > 0 {
				adopt(beating("p", "running", pidAlive, time.Second, registryAge(tt.parentRegAt)), tt.node)
			}
			thr := tt.th
			if thr == (model.Thresholds{}) {
				thr = th
			}
			ClassifyNode(tt.node, newFakeProbe(), now, thr)
			if tt.node.State != tt.want {
				t.Errorf("state = %s, want %s (reason %q)", tt.node.State, tt.want, tt.node.Reason)
			}
			if tt.node.Process != tt.wantProcess {
				t.Errorf("process = %s, want %s", tt.node.Process, tt.wantProcess)
			}
			if !strings.Contains(tt.node.Reason, tt.wantReason) {
				t.Errorf("reason = %q, want it to contain %q", tt.node.Reason, tt.wantReason)
			}
		})
	}
}

func TestFlagTable(t *testing.T) {
	tests := []struct {
		name      string
		node      *model.Node
		th        model.Thresholds
		wantState model.State
		want      []model.Flag
	}{
		{name: "starting: status starting", node: beating("s", "starting", pidAlive, time.Second),
			wantState: model.StateRunning, want: fl(model.FlagStarting)},
		{name: "starting: status starting, pid gone past exit-grace stays flagged", node: beating("s", "starting", pidGone, time.Minute),
			wantState: model.StateDead, want: fl(model.FlagStarting)},
		{name: "no flag: beat exactly one beat old", node: beating("s", "running", pidAlive, 30*time.Second),
			wantState: model.StateRunning, want: fl()},
		{name: "quiet: older than one beat, not stale", node: beating("s", "running", pidAlive, 45*time.Second),
			wantState: model.StateRunning, want: fl(model.FlagQuiet)},
		{name: "quiet: exactly stale old is not yet stale", node: beating("s", "running", pidAlive, 120*time.Second),
			wantState: model.StateRunning, want: fl(model.FlagQuiet)},
		{name: "stalled: older than stale, pid alive as the same process", node: beating("s", "running", pidAlive, 121*time.Second),
			wantState: model.StateRunning, want: fl(model.FlagStalled)},
		{name: "stalled, not kill_candidate: exactly kill-after old", node: beating("s", "running", pidAlive, 300*time.Second),
			wantState: model.StateRunning, want: fl(model.FlagStalled)},
		{name: "kill_candidate: stalled and older than kill-after", node: beating("s", "running", pidAlive, 6*time.Minute),
			wantState: model.StateRunning, want: fl(model.FlagStalled, model.FlagKillCandidate)},
		{name: "blocked: suppresses kill_candidate", node: beating("s", "running", pidAlive, 20*time.Minute, blocked("ship it?")),
			wantState: model.StateRunning, want: fl(model.FlagStalled, model.FlagBlocked)},
		{name: "blocked: fresh beat", node: beating("s", "running", pidAlive, time.Second, blocked("")),
			wantState: model.StateRunning, want: fl(model.FlagBlocked)},
		{name: "blocked: never dead for idleness (no pid, stale)", node: beating("s", "running", 0, time.Hour, blocked("q")),
			wantState: model.StateRunning, want: fl(model.FlagBlocked)},
		{name: "blocked: never dead for idleness (no-pid-check, stale)", node: beating("s", "running", pidAlive, time.Hour, blocked("q")), th: noPidCheck(),
			wantState: model.StateRunning, want: fl(model.FlagBlocked)},
		{name: "blocked: a pid verified gone is still dead", node: beating("s", "running", pidGone, time.Hour, blocked("q")),
			wantState: model.StateDead, want: fl(model.FlagBlocked)},
		{name: "blocked: a finished node ignores a leftover sentinel", node: beating("s", "completed", pidGone, time.Hour, blocked("q")),
			wantState: model.StateFinished, want: fl()},
		{name: "paused: status paused", node: beating("s", "paused", pidAlive, time.Second),
			wantState: model.StateRunning, want: fl(model.FlagPaused)},
		{name: "paused: a paused node whose pid is gone is dead", node: beating("s", "paused", pidGone, time.Minute),
			wantState: model.StateDead, want: fl(model.FlagPaused)},
		{name: "legacy + blocked: never dead for idleness (no pid, stale)", node: func() *model.Node {
			n := legacy("c", 0, time.Hour)
			blocked("q")(n)
			return n
		}(), wantState: model.StateRunning, want: fl(model.FlagBlocked, model.FlagLegacy)},
		{name: "legacy: known from .running only", node: legacy("c", pidAlive, time.Hour),
			wantState: model.StateRunning, want: fl(model.FlagLegacy)},
		{name: "legacy: never quiet or stalled (.running is not bumped)", node: legacy("c", pidAlive, 10*time.Minute),
			wantState: model.StateRunning, want: fl(model.FlagLegacy)},
		{name: "unreadable: unparseable heartbeat, fresh", node: unreadable("s", 10*time.Second),
			wantState: model.StateRunning, want: fl(model.FlagUnreadable)},
		{name: "unreadable: another file of the node (scan flag) keeps the heartbeat's state", node: beating("s", "running", pidAlive, time.Second, scanFlags(model.FlagUnreadable)),
			wantState: model.StateRunning, want: fl(model.FlagUnreadable)},
		{name: "pid_unverified: stale, create time unreadable: treated as alive", node: beating("s", "running", pidUnverified, 3*time.Minute),
			wantState: model.StateRunning, want: fl(model.FlagStalled, model.FlagPidUnverified)},
		{name: "pid_unverified: past kill-after is never a kill candidate (kill would refuse it)", node: beating("s", "running", pidUnverified, 6*time.Minute),
			wantState: model.StateRunning, want: fl(model.FlagStalled, model.FlagPidUnverified)},
		{name: "pid_unverified: not flagged while the beat alone says running", node: beating("s", "running", pidUnverified, 60*time.Second),
			wantState: model.StateRunning, want: fl(model.FlagQuiet)},
		{name: "conflict: copied from the scan", node: beating("s", "running", pidAlive, time.Second, scanFlags(model.FlagConflict)),
			wantState: model.StateRunning, want: fl(model.FlagConflict)},
		{name: "cycle: copied from the scan", node: beating("s", "running", pidAlive, time.Second, scanFlags(model.FlagCycle)),
			wantState: model.StateRunning, want: fl(model.FlagCycle)},
		{name: "outside_root: copied from the scan", node: beating("s", "running", pidAlive, time.Second, scanFlags(model.FlagOutsideRoot)),
			wantState: model.StateRunning, want: fl(model.FlagOutsideRoot)},
		{name: "unknown_status: status outside the vocabulary", node: beating("s", "sleeping", pidAlive, time.Second),
			wantState: model.StateRunning, want: fl(model.FlagUnknownStatus)},
		{name: "flags come out in model.Flags order, scan flags merged without duplicates",
			node:      beating("s", "starting", pidAlive, 6*time.Minute, scanFlags(model.FlagCycle, model.FlagUnreadable, model.FlagConflict, model.FlagUnreadable)),
			wantState: model.StateRunning,
			want:      fl(model.FlagStarting, model.FlagStalled, model.FlagKillCandidate, model.FlagUnreadable, model.FlagConflict, model.FlagCycle)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			thr := tt.th
			if thr == (model.Thresholds{}) {
				thr = th
			}
			ClassifyForest([]*model.Node{tt.node}, newFakeProbe(), now, thr)
			if tt.node.State != tt.wantState {
				t.Errorf("state = %s, want %s (reason %q)", tt.node.State, tt.wantState, tt.node.Reason)
			}
			if !slices.Equal(flagsOf(tt.node), tt.want) {
				t.Errorf("flags = %v, want %v", tt.node.Flags, tt.want)
			}
		})
	}
}

// TestFlagOrphaned: running, but its parent is dead or finished.
func TestFlagOrphaned(t *testing.T) {
	leadBeat := now.Add(-90 * time.Second)
	tests := []struct {
		name       string
		parent     *model.Node
		child      *model.Node
		want       bool
		wantSince  time.Time
		wantReason string
	}{
		{name: "orphaned: parent dead", parent: beating("B", "running", pidGone, 90*time.Second),
			child: beating("B/c/1", "running", pidAlive, 15*time.Second), want: true, wantSince: leadBeat,
			wantReason: "lead dead since 11:58:30 (1m30s ago); beating; last beat 15s ago"},
		{name: "orphaned: parent finished completed", parent: beating("B", "completed", pidGone, 90*time.Second),
			child: beating("B/c/1", "running", pidAlive, time.Second), want: true, wantSince: leadBeat,
			wantReason: "lead completed since 11:58:30"},
		{name: "orphaned: parent finished withdrawn", parent: beating("B", "withdrawn", pidGone, 90*time.Second),
			child: beating("B/c/1", "running", pidAlive, time.Second), want: true, wantSince: leadBeat,
			wantReason: "lead withdrawn since 11:58:30"},
		{name: "orphaned: parent finished by its registry line (heartbeat gone), no since", parent: registered("B", "completed"),
			child: beating("B/c/1", "running", pidAlive, time.Second), want: true,
			wantReason: "lead completed; beating"},
		{name: "not orphaned: parent running", parent: beating("B", "running", pidAlive, time.Second),
			child: beating("B/c/1", "running", pidAlive, time.Second), want: false},
		{name: "not orphaned: parent missing", parent: registered("B", "active"),
			child: beating("B/c/1", "running", pidAlive, time.Second), want: false},
		{name: "not orphaned: a dead child of a dead parent", parent: beating("B", "running", pidGone, time.Hour),
			child: beating("B/c/1", "running", pidGone, time.Hour), want: false},
		{name: "not orphaned: a stalled child of a dead parent is reported as stalled", parent: beating("B", "running", pidGone, 90*time.Second),
			child: beating("B/c/1", "running", pidAlive, 6*time.Minute), want: false},
		{name: "orphaned: a quiet child of a dead parent", parent: beating("B", "running", pidGone, 90*time.Second),
			child: beating("B/c/1", "running", pidAlive, time.Minute), want: true, wantSince: leadBeat, wantReason: "quiet"},
		{name: "orphaned: a blocked, beating child of a dead parent", parent: beating("B", "running", pidGone, 90*time.Second),
			child: beating("B/c/1", "running", pidAlive, time.Second, blocked("q")), want: true, wantSince: leadBeat, wantReason: "waiting for a human: q"},
		{name: "orphaned: a legacy child of a dead parent", parent: beating("B", "running", pidGone, 90*time.Second),
			child: legacy("B/c/1", pidAlive, time.Hour), want: true, wantSince: leadBeat},
		{name: "orphaned: a lead dead with its mtime in the future gives no age", parent: beating("B", "running", pidReused, -time.Minute),
			child: beating("B/c/1", "running", pidAlive, time.Second), want: true, wantSince: now.Add(time.Minute),
			wantReason: "lead dead since 12:01:00; beating"},
		{name: "not orphaned: a finished child of a dead parent", parent: beating("B", "running", pidGone, time.Hour),
			child: beating("B/c/1", "completed", pidGone, time.Hour), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ClassifyForest([]*model.Node{adopt(tt.parent, tt.child)}, newFakeProbe(), now, th)
			if got := tt.child.HasFlag(model.FlagOrphaned); got != tt.want {
				t.Fatalf("orphaned = %v, want %v (flags %v, reason %q)", got, tt.want, tt.child.Flags, tt.child.Reason)
			}
			if !tt.child.OrphanedSince().Equal(tt.wantSince) {
				t.Errorf("orphaned since = %v, want %v", tt.child.OrphanedSince(), tt.wantSince)
			}
			if !strings.Contains(tt.child.Reason, tt.wantReason) {
				t.Errorf("reason = %q, want it to contain %q", tt.child.Reason, tt.wantReason)
			}
			if tt.want && !tt.child.HasFlag(model.FlagBlocked) && tt.child.Action != model.ActionNone {
				t.Errorf("an orphaned running node gets action %s, want none", tt.child.Action)
			}
		})
	}
}

func TestRecommendedActionTable(t *testing.T) {
	// Each case builds a forest and names the node whose action it checks.
	tests := []struct {
		name       string
		build      func() (sessions []*model.Node, target *model.Node)
		want       model.Action
		wantReason string
	}{
		{name: "blocked: answer (running, fresh)", want: model.ActionAnswer, wantReason: "waiting for a human: deploy to prod?",
			build: single(beating("s", "running", pidAlive, time.Second, blocked("deploy to prod?")))},
		{name: "blocked: answer, never kill (stalled past kill-after)", want: model.ActionAnswer,
			build: single(beating("s", "running", pidAlive, time.Hour, blocked("q")))},
		{name: "blocked: answer, never fail (dead, pid gone)", want: model.ActionAnswer, wantReason: "pid 4122 gone; last beat 1h00m ago; waiting for a human: q",
			build: single(beating("s", "running", pidGone, time.Hour, blocked("q"), cfa("FAILURE")))},
		{name: "kill_candidate: kill", want: model.ActionKill, wantReason: "alive but not beating for 6m00s",
			build: single(beating("s", "running", pidAlive, 6*time.Minute))},
		{name: "stalled, not yet kill_candidate: wait", want: model.ActionWait, wantReason: "kill candidate in 2m00s",
			build: single(beating("s", "running", pidAlive, 3*time.Minute))},
		{name: "running otherwise: none", want: model.ActionNone,
			build: single(beating("s", "running", pidAlive, time.Second))},
		{name: "running otherwise, quiet: none", want: model.ActionNone,
			build: single(beating("s", "running", pidAlive, time.Minute))},
		{name: "running otherwise, orphaned: none, and says since when", want: model.ActionNone, wantReason: "lead dead since 11:58:30",
			build: func() ([]*model.Node, *model.Node) {
				c := beating("B/c/1", "running", pidAlive, time.Second)
				return []*model.Node{adopt(beating("B", "running", pidGone, 90*time.Second), c)}, c
			}},
		{name: "dead, parent running: wait (its lead owns the recovery)", want: model.ActionWait, wantReason: "its lead is running and owns the recovery",
			build: func() ([]*model.Node, *model.Node) {
				c := beating("A/c/1", "running", pidGone, time.Minute, cfa("DONE"))
				return []*model.Node{adopt(beating("A", "running", pidAlive, time.Second), c)}, c
			}},
		{name: "dead, parent running and stalled: wait", want: model.ActionWait,
			build: func() ([]*model.Node, *model.Node) {
				c := beating("A/c/1", "running", pidGone, time.Minute)
				return []*model.Node{adopt(beating("A", "running", pidAlive, 4*time.Minute), c)}, c
			}},
		{name: "dead, CfA DONE: merge", want: model.ActionMerge, wantReason: "CfA DONE: ready to merge",
			build: single(beating("s", "running", pidGone, time.Minute, cfa("DONE")))},
		{name: "dead, CfA COMPLETED_WORK: merge", want: model.ActionMerge,
			build: single(beating("s", "running", pidGone, time.Minute, cfa("COMPLETED_WORK")))},
		{name: "dead, CfA terminal success, already merged: none", want: model.ActionNone, wantReason: "merged",
			build: single(beating("s", "running", pidGone, time.Minute, cfa("DONE"), merged))},
		{name: "dead, CfA terminal success under a dead parent: merge", want: model.ActionMerge,
			build: func() ([]*model.Node, *model.Node) {
				c := beating("B/c/1", "running", pidGone, time.Minute, cfa("DONE"))
				return []*model.Node{adopt(beating("B", "running", pidGone, time.Hour), c)}, c
			}},
		{name: "dead, CfA WITHDRAWN: surface (not retryable)", want: model.ActionSurface, wantReason: "CfA WITHDRAWN: not retryable",
			build: single(beating("s", "running", pidGone, time.Minute, cfa("WITHDRAWN")))},
		{name: "dead, CfA FAILURE: surface", want: model.ActionSurface,
			build: single(beating("s", "running", pidGone, time.Minute, cfa("FAILURE")))},
		{name: "dead, retries left (none spent): resume", want: model.ActionResume, wantReason: "retries 0/3 in EXECUTE, 0/9 in all",
			build: single(beating("s", "running", pidGone, time.Minute, cfa("EXECUTE")))},
		{name: "dead, retries left, no CfA state at all: resume", want: model.ActionResume,
			build: single(beating("s", "running", pidGone, time.Minute))},
		{name: "dead, retries left (2 of 3 in this state, 8 of 9 in all): resume", want: model.ActionResume,
			build: single(beating("s", "running", pidGone, time.Minute, cfa("EXECUTE"), retries(8, map[string]int{"EXECUTE": 2})))},
		{name: "dead, another state's budget spent does not count: resume", want: model.ActionResume,
			build: single(beating("s", "running", pidGone, time.Minute, cfa("EXECUTE"), retries(3, map[string]int{"PLAN": 3})))},
		{name: "dead, retries left, parent dead too: resume on the topmost dead ancestor", want: model.ActionResume,
			build: func() ([]*model.Node, *model.Node) {
				b := beating("B", "running", pidGone, time.Hour)
				adopt(b, adopt(beating("B/c/1", "running", pidGone, time.Hour), beating("B/c/1/w/1", "running", pidGone, time.Hour)))
				return []*model.Node{b}, b
			}},
		{name: "dead, retries left, parent dead too: its dead child waits", want: model.ActionWait, wantReason: "resume goes on B",
			build: func() ([]*model.Node, *model.Node) {
				c := beating("B/c/1", "running", pidGone, time.Hour)
				return []*model.Node{adopt(beating("B", "running", pidGone, time.Hour), c)}, c
			}},
		{name: "dead, retries left, parent dead too: a dead grandchild waits for the topmost", want: model.ActionWait, wantReason: "resume goes on B",
			build: func() ([]*model.Node, *model.Node) {
				g := beating("B/c/1/w/1", "running", pidGone, time.Hour)
				return []*model.Node{adopt(beating("B", "running", pidGone, time.Hour), adopt(beating("B/c/1", "running", pidGone, time.Hour), g))}, g
			}},
		{name: "dead, retries left, parent dead with its budget spent: wait, naming it", want: model.ActionWait, wantReason: "its lead B is dead too",
			build: func() ([]*model.Node, *model.Node) {
				c := beating("B/c/1", "running", pidGone, time.Hour)
				return []*model.Node{adopt(beating("B", "running", pidGone, time.Hour, retries(9, nil)), c)}, c
			}},
		{name: "dead, retries left, parent finished: resume", want: model.ActionResume,
			build: func() ([]*model.Node, *model.Node) {
				c := beating("B/c/1", "running", pidGone, time.Hour)
				return []*model.Node{adopt(beating("B", "withdrawn", pidGone, time.Hour), c)}, c
			}},
		{name: "dead, retry budget spent in this state (3): surface", want: model.ActionSurface, wantReason: "retry budget spent (retries 3/3 in EXECUTE, 3/9 in all)",
			build: single(beating("s", "running", pidGone, time.Minute, cfa("EXECUTE"), retries(3, map[string]int{"EXECUTE": 3})))},
		{name: "dead, retry budget spent for the node (9): surface", want: model.ActionSurface,
			build: single(beating("s", "running", pidGone, time.Minute, cfa("EXECUTE"), retries(9, map[string]int{"EXECUTE": 1})))},
		{name: "dead, retry budget spent, under a dead parent: surface", want: model.ActionSurface,
			build: func() ([]*model.Node, *model.Node) {
				c := beating("B/c/1", "running", pidGone, time.Hour, retries(9, nil))
				return []*model.Node{adopt(beating("B", "running", pidGone, time.Hour), c)}, c
			}},
		{name: "finished completed, no parent (session), not merged: merge", want: model.ActionMerge, wantReason: "ready to merge",
			build: single(beating("s", "completed", pidGone, time.Hour))},
		{name: "finished completed, parent dead: merge", want: model.ActionMerge,
			build: func() ([]*model.Node, *model.Node) {
				c := beating("B/c/1", "completed", pidGone, time.Hour)
				return []*model.Node{adopt(beating("B", "running", pidGone, time.Hour), c)}, c
			}},
		{name: "finished completed, parent finished: merge", want: model.ActionMerge,
			build: func() ([]*model.Node, *model.Node) {
				c := beating("B/c/1", "completed", pidGone, time.Hour)
				return []*model.Node{adopt(beating("B", "completed", pidGone, time.Hour), c)}, c
			}},
		{name: "finished completed, already merged: none", want: model.ActionNone,
			build: single(beating("s", "completed", pidGone, time.Hour, merged))},
		{name: "finished otherwise: completed under a running parent: none", want: model.ActionNone,
			build: func() ([]*model.Node, *model.Node) {
				c := beating("A/c/1", "completed", pidGone, time.Hour)
				return []*model.Node{adopt(beating("A", "running", pidAlive, time.Second), c)}, c
			}},
		{name: "finished otherwise: withdrawn: none", want: model.ActionNone,
			build: single(beating("s", "withdrawn", pidGone, time.Hour))},
		{name: "finished otherwise: registry says completed, heartbeat gone: none", want: model.ActionNone,
			build: func() ([]*model.Node, *model.Node) {
				c := registered("B/c/1", "completed")
				return []*model.Node{adopt(beating("B", "running", pidGone, time.Hour), c)}, c
			}},
		{name: "missing: wait", want: model.ActionWait,
			build: func() ([]*model.Node, *model.Node) {
				c := registered("A/c/1", "active")
				return []*model.Node{adopt(beating("A", "running", pidAlive, time.Second), c)}, c
			}},

		// the compact override
		{name: "override: none + a missing registration in a .children older than stale: compact", want: model.ActionCompact,
			wantReason: "1 registered child never started",
			build: func() ([]*model.Node, *model.Node) {
				a := beating("A", "running", pidAlive, time.Second, registryAge(10*time.Minute))
				return []*model.Node{adopt(a, registered("A/c/1", "active"))}, a
			}},
		{name: "override: .children younger than stale (may still start): none", want: model.ActionNone,
			build: func() ([]*model.Node, *model.Node) {
				a := beating("A", "running", pidAlive, time.Second, registryAge(time.Minute))
				return []*model.Node{adopt(a, registered("A/c/1", "active"))}, a
			}},
		{name: "override: terminal entries alone are history: none", want: model.ActionNone,
			build: func() ([]*model.Node, *model.Node) {
				a := beating("A", "running", pidAlive, time.Second, registryAge(10*time.Minute))
				return []*model.Node{adopt(a, registered("A/c/1", "completed"),
					beating("A/c/2", "completed", pidGone, time.Hour, entry("completed")))}, a
			}},
		{name: "override: a finished node with a missing registration: compact", want: model.ActionCompact,
			wantReason: "2 registered children never started",
			build: func() ([]*model.Node, *model.Node) {
				a := beating("A", "withdrawn", pidGone, time.Hour, registryAge(time.Hour))
				return []*model.Node{adopt(a, registered("A/c/1", "active"), registered("A/c/2", "active"))}, a
			}},
		{name: "override: only a row that gave none (a dead lead still resumes)", want: model.ActionResume,
			build: func() ([]*model.Node, *model.Node) {
				a := beating("A", "running", pidGone, time.Hour, registryAge(time.Hour))
				return []*model.Node{adopt(a, registered("A/c/1", "active"))}, a
			}},

		{name: "override: an entry outside every root is not an unstarted registration: none", want: model.ActionNone,
			build: func() ([]*model.Node, *model.Node) {
				a := beating("A", "running", pidAlive, time.Second, registryAge(10*time.Minute))
				return []*model.Node{adopt(a, outside("A/c/1", "active"))}, a
			}},

		// outside_root: shown, never acted on
		{name: "outside_root: none, whatever the row would say", want: model.ActionNone, wantReason: "outside every root",
			build: single(beating("s", "running", pidAlive, time.Hour, scanFlags(model.FlagOutsideRoot)))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sessions, target := tt.build()
			ClassifyForest(sessions, newFakeProbe(), now, th)
			if target.Action != tt.want {
				t.Errorf("action = %s, want %s (state %s, flags %v, reason %q)", target.Action, tt.want, target.State, target.Flags, target.Reason)
			}
			if !strings.Contains(target.Reason, tt.wantReason) {
				t.Errorf("reason = %q, want it to contain %q", target.Reason, tt.wantReason)
			}
		})
	}
}

func single(n *model.Node) func() ([]*model.Node, *model.Node) {
	return func() ([]*model.Node, *model.Node) { return []*model.Node{n}, n }
}

// TestAppendixWorkedExample is SPEC's appendix, row for row.
func TestAppendixWorkedExample(t *testing.T) {
	at := func(hms string) time.Duration {
		tm, err := time.Parse("15:04:05", hms)
		if err != nil {
			t.Fatal(err)
		}
		return 12*time.Hour - (time.Duration(tm.Hour())*time.Hour + time.Duration(tm.Minute())*time.Minute + time.Duration(tm.Second())*time.Second)
	}
	a := beating("A", "running", pidAlive, at("11:59:50"), registryAge(at("11:50:00")))
	aPlan := beating("A/plan/1", "completed", pidGone, at("11:59:00"), entry("active"), cfa("DONE"))
	aCode := beating("A/code/2", "running", pidGone, at("11:57:00"), entry("active"))
	aTest := beating("A/test/3", "running", pidAlive, at("11:54:00"), entry("active"))
	aDocs := registered("A/docs/4", "active")
	adopt(a, aPlan, aCode, aTest, aDocs)

	b := beating("B", "running", pidGone, at("11:58:30"), cfa("EXECUTE"))
	bCode := beating("B/code/1", "running", pidAlive, at("11:59:45"))
	bTest := beating("B/test/2", "running", pidGone, at("11:59:40"))
	bAsk := beating("B/ask/3", "running", pidAlive, at("11:40:00"), blocked("which schema?"))
	adopt(b, bCode, bTest, bAsk)

	c := legacy("C", pidAlive, 3*time.Hour)

	probe := newFakeProbe()
	ClassifyForest([]*model.Node{a, b, c}, probe, now, th)

	tests := []struct {
		node       *model.Node
		state      model.State
		flags      []model.Flag
		action     model.Action
		wantReason string
	}{
		{a, model.StateRunning, fl(), model.ActionCompact, "1 registered child never started"},
		{aPlan, model.StateFinished, fl(), model.ActionNone, "completed"},
		{aCode, model.StateDead, fl(), model.ActionWait, "pid 4122 gone; last beat 3m00s ago; its lead is running"},
		{aTest, model.StateRunning, fl(model.FlagStalled, model.FlagKillCandidate), model.ActionKill, "alive but not beating for 6m00s"},
		{aDocs, model.StateMissing, fl(), model.ActionWait, "registered but never started (10m00s ago)"},
		{b, model.StateDead, fl(), model.ActionResume, "pid 4122 gone; last beat 1m30s ago"},
		{bCode, model.StateRunning, fl(model.FlagOrphaned), model.ActionNone, "lead dead since 11:58:30"},
		{bTest, model.StateDead, fl(), model.ActionWait, "pid 4122 gone; last beat 20s ago; resume goes on B"},
		{bAsk, model.StateRunning, fl(model.FlagStalled, model.FlagBlocked), model.ActionAnswer, "waiting for a human: which schema?"},
		{c, model.StateRunning, fl(model.FlagLegacy), model.ActionNone, "pid 4121 alive"},
	}
	for _, tt := range tests {
		t.Run(tt.node.ID, func(t *testing.T) {
			n := tt.node
			if n.State != tt.state || !slices.Equal(flagsOf(n), tt.flags) || n.Action != tt.action {
				t.Errorf("got %s %v %s, want %s %v %s (reason %q)", n.State, n.Flags, n.Action, tt.state, tt.flags, tt.action, n.Reason)
			}
			if !strings.Contains(n.Reason, tt.wantReason) {
				t.Errorf("reason = %q, want it to contain %q", n.Reason, tt.wantReason)
			}
		})
	}
	// Every node with a pid and a beat older than the exit grace is probed,
	// once: A, A/code/2, A/test/3, B, B/code/1, B/test/2, B/ask/3, C.
	if got, want := len(probe.askedAbout()), 8; got != want {
		t.Errorf("probe asked %d times (%v), want %d", got, probe.askedAbout(), want)
	}
}

// TestProbeOnlyWhenThePidIsDecisive: SPEC §3 "probe pids only of nodes whose
// age makes the pid decisive"; --no-pid-check probes nothing.
func TestProbeOnlyWhenThePidIsDecisive(t *testing.T) {
	tests := []struct {
		name  string
		node  *model.Node
		th    model.Thresholds
		asked bool
	}{
		{name: "fresh beat (within exit-grace): not asked", node: beating("s", "running", pidAlive, 5*time.Second), th: th},
		{name: "beat older than exit-grace: asked", node: beating("s", "running", pidAlive, 6*time.Second), th: th, asked: true},
		{name: "stale beat: asked", node: beating("s", "running", pidAlive, time.Hour), th: th, asked: true},
		{name: "no pid: not asked", node: beating("s", "running", 0, time.Hour), th: th},
		{name: "finished: not asked", node: beating("s", "completed", pidAlive, time.Hour), th: th},
		{name: "missing: not asked", node: registered("s", "active"), th: th},
		{name: "unreadable heartbeat: not asked", node: unreadable("s", time.Hour), th: th},
		{name: "heartbeat without an mtime: not asked", node: beating("s", "running", pidGone, 0, func(n *model.Node) { n.BeatMtime = time.Time{} }), th: th},
		{name: "no-pid-check, stale: not asked", node: beating("s", "running", pidAlive, time.Hour), th: noPidCheck()},
		{name: "no-pid-check, legacy: not asked", node: legacy("c", pidAlive, time.Hour), th: noPidCheck()},
		{name: "legacy predating the boot: not asked", node: legacy("c", pidAlive, 72*time.Hour), th: th},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probe := newFakeProbe()
			ClassifyForest([]*model.Node{tt.node}, probe, now, tt.th)
			if got := len(probe.askedAbout()) > 0; got != tt.asked {
				t.Errorf("asked = %v (%v), want %v", got, probe.askedAbout(), tt.asked)
			}
		})
	}
}

// TestBootTimeReadOncePerForest: the legacy rule compares every `.running`
// with the same boot time; it is asked for once per classification.
func TestBootTimeReadOncePerForest(t *testing.T) {
	inner := &countingProbe{}
	var sessions []*model.Node
	for i := range 5 {
		sessions = append(sessions, legacy(fmt.Sprintf("c%d", i), 2, time.Minute))
	}
	ClassifyForest(sessions, inner, now, th)
	if inner.boots != 1 {
		t.Errorf("boot time read %d times for 5 legacy nodes, want once", inner.boots)
	}
	for _, n := range sessions {
		if n.State != model.StateRunning {
			t.Errorf("%s: %s (%s), want running", n.ID, n.State, n.Reason)
		}
	}
}

// SPEC §2: a conflict is flagged "with both parents named", and a cycle is
// broken and flagged: the reason names the other parents and the edge cut.
// The scanner lists a conflict's losing parents in OtherParents and, for the
// node whose parent link broke a cycle, appends that parent last.
func TestConflictAndCycleReasonsNameTheParents(t *testing.T) {
	withOthers := func(flags []model.Flag, others ...string) func(*model.Node) {
		return func(n *model.Node) {
			n.EditRare(func(r *model.Rare) { r.ScanFlags, r.OtherParents = flags, others })
		}
	}
	conflict, cycle := []model.Flag{model.FlagConflict}, []model.Flag{model.FlagCycle}
	tests := []struct {
		name  string
		build func() (sessions []*model.Node, target *model.Node)
		want  string
	}{
		{name: "conflict: the losing parent named", want: "; also claimed by Q",
			build: func() ([]*model.Node, *model.Node) {
				k := beating("P/k", "running", pidAlive, time.Second, withOthers(conflict, "Q"))
				return []*model.Node{adopt(beating("P", "running", pidAlive, time.Second), k)}, k
			}},
		{name: "conflict: every losing parent named", want: "; also claimed by Q, R",
			build: func() ([]*model.Node, *model.Node) {
				k := beating("P/k", "running", pidAlive, time.Second, withOthers(conflict, "Q", "R"))
				return []*model.Node{adopt(beating("P", "running", pidAlive, time.Second), k)}, k
			}},
		{name: "cycle: the node cut loose names the edge", want: "; cycle broken at Y2 → Y1",
			build: func() ([]*model.Node, *model.Node) {
				y1 := beating("Y1", "running", pidAlive, time.Second, withOthers(cycle, "Y2"))
				return []*model.Node{adopt(y1, beating("Y2", "running", pidAlive, time.Second, withOthers(cycle)))}, y1
			}},
		{name: "cycle: another member names the same edge", want: "; cycle broken at Y2 → Y1",
			build: func() ([]*model.Node, *model.Node) {
				y2 := beating("Y2", "running", pidAlive, time.Second, withOthers(cycle))
				return []*model.Node{adopt(beating("Y1", "running", pidAlive, time.Second, withOthers(cycle, "Y2")), y2)}, y2
			}},
		{name: "cycle and conflict on the node cut loose: both said", want: "; also claimed by Q; cycle broken at Y2 → Y1",
			build: func() ([]*model.Node, *model.Node) {
				y1 := beating("Y1", "running", pidAlive, time.Second, withOthers([]model.Flag{model.FlagConflict, model.FlagCycle}, "Q", "Y2"))
				return []*model.Node{adopt(y1, beating("Y2", "running", pidAlive, time.Second, withOthers(cycle)))}, y1
			}},
		{name: "cycle: a node naming itself its parent", want: "; cycle broken at A → A",
			build: single(beating("A", "running", pidAlive, time.Second, withOthers(cycle)))},
		{name: "conflict: the parent kept is named too", want: "; parent P; also claimed by Q",
			build: func() ([]*model.Node, *model.Node) {
				k := beating("P/k", "running", pidAlive, time.Second, withOthers(conflict, "Q"))
				return []*model.Node{adopt(beating("P", "running", pidAlive, time.Second), k)}, k
			}},
		{name: "conflict: a session lead that refused a registry names its own word and the registry", want: `; a session lead (parent_heartbeat ""); also claimed by X`,
			build: single(beating("Y", "running", pidAlive, time.Second, withOthers(conflict, "X"), func(n *model.Node) {
				n.Heartbeat.HasParentField = true
			}))},
		{name: "conflict: a registering parent names the nodes of other sessions it claims", want: "; its .children names L/y, Y of other sessions: not adopted",
			build: single(beating("X", "running", pidAlive, time.Second, withOthers(conflict), func(n *model.Node) {
				n.EditRare(func(r *model.Rare) { r.RefusedChildren = []string{"L/y", "Y"} })
			}))},
		{name: "conflict: an id written by an agent stays one line", want: "; also claimed by Q x",
			build: func() ([]*model.Node, *model.Node) {
				k := beating("P/k", "running", pidAlive, time.Second, withOthers(conflict, "Q\nx"))
				return []*model.Node{adopt(beating("P", "running", pidAlive, time.Second), k)}, k
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sessions, target := tt.build()
			ClassifyForest(sessions, newFakeProbe(), now, th)
			if !strings.Contains(target.Reason, tt.want) {
				t.Errorf("reason = %q, want it to contain %q", target.Reason, tt.want)
			}
		})
	}
}

// TestReclassifyIsIdempotent: the live engine re-runs classification on the
// same nodes every tick; nothing may accumulate (flags, reason notes).
func TestReclassifyIsIdempotent(t *testing.T) {
	b := beating("B", "running", pidGone, 90*time.Second, registryAge(time.Hour))
	c := beating("B/c/1", "running", pidAlive, 6*time.Minute)
	adopt(b, c, registered("B/c/2", "active"))
	probe := newFakeProbe()
	ClassifyForest([]*model.Node{b}, probe, now, th)
	firstFlags, firstReason, firstAction := slices.Clone(c.Flags), c.Reason, b.Action
	ClassifyForest([]*model.Node{b}, probe, now, th)
	if !slices.Equal(c.Flags, firstFlags) || c.Reason != firstReason || b.Action != firstAction {
		t.Errorf("second pass changed the result: %v %q -> %v %q", firstFlags, firstReason, c.Flags, c.Reason)
	}
	// And a node that stops being orphaned loses the flag and its since.
	b.BeatMtime, b.Heartbeat.PID = now, pidAlive
	ClassifyForest([]*model.Node{b}, probe, now, th)
	if c.HasFlag(model.FlagOrphaned) || !c.OrphanedSince().IsZero() {
		t.Errorf("flags %v since %v after the lead came back", c.Flags, c.OrphanedSince())
	}
}

func TestRetriesLeft(t *testing.T) {
	tests := []struct {
		name      string
		node      *model.Node
		wantPhase int
		wantLeft  int
	}{
		{"no retry count: 3 left", beating("s", "running", pidGone, time.Hour, cfa("EXECUTE")), 0, 3},
		{"per-state budget binds: 1 spent leaves 2", beating("s", "running", pidGone, time.Hour, cfa("EXECUTE"), retries(1, map[string]int{"EXECUTE": 1})), 1, 2},
		{"per-node budget binds: 8 spent leaves 1", beating("s", "running", pidGone, time.Hour, cfa("EXECUTE"), retries(8, map[string]int{"PLAN": 3})), 0, 1},
		{"spent beyond the budget (forced): 0, not negative", beating("s", "running", pidGone, time.Hour, cfa("EXECUTE"), retries(12, map[string]int{"EXECUTE": 5})), 5, 0},
		{"negative counts (corrupt file) spend nothing and buy nothing", beating("s", "running", pidGone, time.Hour, cfa("EXECUTE"), retries(-10, map[string]int{"EXECUTE": -6})), 0, 3},
		{"no CfA state: the budget of the empty state", beating("s", "running", pidGone, time.Hour, retries(2, nil)), 0, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			phase, left := RetriesLeft(tt.node)
			if phase != tt.wantPhase || left != tt.wantLeft {
				t.Errorf("RetriesLeft = (%d, %d), want (%d, %d)", phase, left, tt.wantPhase, tt.wantLeft)
			}
		})
	}
}

// TestBlockedQuestionIsOneSafeLine: the question comes from a file any agent
// writes; the reason stays one line with no terminal control in it.
func TestBlockedQuestionIsOneSafeLine(t *testing.T) {
	tests := []struct {
		name     string
		question string
		want     string
	}{
		{"plain", "merge now?", "waiting for a human: merge now?"},
		{"newlines and tabs collapse", "  line one\n\n\tline two \r\n", "waiting for a human: line one line two"},
		{"terminal escapes are neutralised", "\x1b[2Jwipe\x07", "waiting for a human: \uFFFD[2Jwipe\uFFFD"},
		{"only whitespace: no question", " \n\t", "waiting for a human (no question given)"},
		{"long: cut with an ellipsis", strings.Repeat("a", 300), "waiting for a human: " + strings.Repeat("a", 200) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := beating("s", "running", pidAlive, time.Second, blocked(tt.question))
			ClassifyForest([]*model.Node{n}, newFakeProbe(), now, th)
			if !strings.HasPrefix(n.Reason, tt.want+"; last beat") {
				t.Errorf("reason = %q, want it to start with %q", n.Reason, tt.want)
			}
		})
	}
}
