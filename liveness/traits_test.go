package liveness

// One test per trait of model.Traits (SPEC §10), the between-turns rule and
// its idle flag (SPEC §3), and a node's own thresholds: each row a named
// case. A fake probe where the rule is about timing; real processes in
// TestIdleWithRealProcesses, where it is about processes.

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// pidOwnerGone is an owner pid the fake probe does not know: gone.
const pidOwnerGone = 4199

func traits(tr model.Traits) func(*model.Node) {
	return func(n *model.Node) { n.Traits = tr }
}

func owner(pid int) func(*model.Node) {
	return func(n *model.Node) { n.Owner = &model.Owner{PID: pid, Started: started} }
}

func ownThresholds(th model.Thresholds) func(*model.Node) {
	return func(n *model.Node) { n.Thresholds = &th }
}

func source(kind string) func(*model.Node) {
	return func(n *model.Node) { n.Source = kind }
}

// traitCase is a node classified alone (ClassifyForest, so the action too).
type traitCase struct {
	name        string
	node        *model.Node
	th          model.Thresholds // zero: the defaults
	wantState   model.State
	wantFlags   []model.Flag
	wantAction  model.Action // "" not checked
	wantReason  string       // a substring
	avoidReason string       // a substring the reason must not hold
}

func runTraitCases(t *testing.T, tests []traitCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			thr := tt.th
			if thr == (model.Thresholds{}) {
				thr = th
			}
			ClassifyForest([]*model.Node{tt.node}, newFakeProbe(), now, thr)
			n := tt.node
			if n.State != tt.wantState {
				t.Errorf("state = %s, want %s (reason %q)", n.State, tt.wantState, n.Reason)
			}
			if !slices.Equal(flagsOf(n), fl(tt.wantFlags...)) {
				t.Errorf("flags = %v, want %v (reason %q)", n.Flags, tt.wantFlags, n.Reason)
			}
			if tt.wantAction != "" && n.Action != tt.wantAction {
				t.Errorf("action = %s, want %s (reason %q)", n.Action, tt.wantAction, n.Reason)
			}
			if !strings.Contains(n.Reason, tt.wantReason) {
				t.Errorf("reason = %q, want it to contain %q", n.Reason, tt.wantReason)
			}
			if tt.avoidReason != "" && strings.Contains(n.Reason, tt.avoidReason) {
				t.Errorf("reason = %q, want it without %q", n.Reason, tt.avoidReason)
			}
		})
	}
}

var perTurn = traits(model.Traits{PIDPerTurn: true})

func TestTraitPIDPerTurn(t *testing.T) {
	runTraitCases(t, []traitCase{
		// --once: no owner recorded, so the source's own rule: stale.
		{name: "once: a gone per-turn pid is not dead before stale", node: beating("s", "running", pidGone, 40*time.Second, perTurn),
			wantState: model.StateRunning, wantFlags: fl(model.FlagQuiet), wantAction: model.ActionNone,
			wantReason: "pid 4122 gone between turns: dead once the beat is stale; last beat 40s ago"},
		{name: "once: a reused per-turn pid is not dead before stale either", node: beating("s", "running", pidReused, 20*time.Second, perTurn),
			wantState: model.StateRunning, wantFlags: fl(), wantReason: "between turns"},
		{name: "once: a gone per-turn pid past stale is dead", node: beating("s", "running", pidGone, 3*time.Minute, perTurn),
			wantState: model.StateDead, wantFlags: fl(), wantReason: "pid 4122 gone; last beat 3m00s ago"},
		{name: "once: a stale beat alone never makes a blocked per-turn node dead", node: beating("s", "running", pidGone, time.Hour, perTurn, blocked("ok?")),
			wantState: model.StateRunning, wantFlags: fl(model.FlagBlocked), wantAction: model.ActionAnswer},
		{name: "a live per-turn pid is judged as any other", node: beating("s", "running", pidAlive, 6*time.Minute, perTurn),
			wantState: model.StateRunning, wantFlags: fl(model.FlagStalled, model.FlagKillCandidate), wantAction: model.ActionKill},

		// live engine: the owner recorded when the pid was first seen alive.
		{name: "idle: gone pid, owner alive: running between turns", node: beating("s", "running", pidGone, 20*time.Second, perTurn, owner(pidAlive)),
			wantState: model.StateRunning, wantFlags: fl(model.FlagIdle), wantAction: model.ActionNone,
			wantReason: "between turns: pid 4122 exited; owner pid 4121 alive; last beat 20s ago"},
		{name: "idle, clock_skew: the reason says both", node: beating("s", "running", pidGone, -time.Minute, perTurn, owner(pidAlive)),
			wantState: model.StateRunning, wantFlags: fl(model.FlagIdle, model.FlagClockSkew),
			wantReason: "between turns: pid 4122 exited; owner pid 4121 alive; heartbeat mtime 1m00s in the future"},
		{name: "idle: quiet too past one beat", node: beating("s", "running", pidGone, time.Minute, perTurn, owner(pidAlive)),
			wantState: model.StateRunning, wantFlags: fl(model.FlagQuiet, model.FlagIdle)},
		{name: "idle: owner exists, create time unreadable: taken as alive", node: beating("s", "running", pidGone, 20*time.Second, perTurn, owner(pidUnverified)),
			wantState: model.StateRunning, wantFlags: fl(model.FlagIdle)},
		{name: "idle ends at stale: dead", node: beating("s", "running", pidGone, 3*time.Minute, perTurn, owner(pidAlive)),
			wantState: model.StateDead, wantFlags: fl(), wantReason: "pid 4122 gone; last beat 3m00s ago"},
		{name: "owner gone too: dead past the exit grace", node: beating("s", "running", pidGone, 10*time.Second, perTurn, owner(pidOwnerGone)),
			wantState: model.StateDead, wantFlags: fl(), wantReason: "pid 4122 gone and its owner pid 4199 too; last beat 10s ago"},
		{name: "owner pid reused: dead past the exit grace", node: beating("s", "running", pidGone, 10*time.Second, perTurn, owner(pidReused)),
			wantState: model.StateDead, wantFlags: fl(), wantReason: "its owner pid 4123 too"},
		{name: "owner gone, within the exit grace: running, not asked", node: beating("s", "running", pidGone, 3*time.Second, perTurn, owner(pidOwnerGone)),
			wantState: model.StateRunning, wantFlags: fl()},
		{name: "not per turn: a gone pid under a living owner is dead (the fast path stands)", node: beating("s", "running", pidGone, 10*time.Second, owner(pidAlive)),
			wantState: model.StateDead, wantFlags: fl(), avoidReason: "between turns"},
	})
}

func TestTraitNoProcessExpected(t *testing.T) {
	paused := traits(model.Traits{NoProcessExpected: true})
	runTraitCases(t, []traitCase{
		{name: "paused, pid gone past the exit grace: running", node: beating("s", "paused", pidGone, 10*time.Second, paused),
			wantState: model.StateRunning, wantFlags: fl(model.FlagPaused), wantAction: model.ActionNone,
			wantReason: "no process expected (pid 4122 gone)"},
		{name: "paused, pid gone, beat an hour old: never dead, quiet", node: beating("s", "paused", pidGone, time.Hour, paused),
			wantState: model.StateRunning, wantFlags: fl(model.FlagQuiet, model.FlagPaused), wantAction: model.ActionNone},
		{name: "paused, pid reused: running", node: beating("s", "paused", pidReused, time.Hour, paused),
			wantState: model.StateRunning, wantFlags: fl(model.FlagQuiet, model.FlagPaused)},
		{name: "paused, no pid, beat an hour old: running", node: beating("s", "paused", 0, time.Hour, paused),
			wantState: model.StateRunning, wantFlags: fl(model.FlagQuiet, model.FlagPaused)},
		{name: "paused, a live pid past kill-after is never stalled or killed", node: beating("s", "paused", pidAlive, time.Hour, paused),
			wantState: model.StateRunning, wantFlags: fl(model.FlagQuiet, model.FlagPaused), wantAction: model.ActionNone},
		{name: "the record's own word still ends it", node: beating("s", "withdrawn", pidGone, time.Hour, paused),
			wantState: model.StateFinished, wantFlags: fl()},
	})
}

func TestTraitNeverKill(t *testing.T) {
	human := traits(model.Traits{NeverKill: true})
	runTraitCases(t, []traitCase{
		{name: "stalled past kill-after: never kill_candidate, wait, a human controls it", node: beating("s", "running", pidAlive, 6*time.Minute, human),
			wantState: model.StateRunning, wantFlags: fl(model.FlagStalled), wantAction: model.ActionWait,
			wantReason: "never a kill candidate: a human controls it", avoidReason: "kill candidate in"},
		{name: "stalled, before kill-after: wait, a human controls it", node: beating("s", "running", pidAlive, 3*time.Minute, human),
			wantState: model.StateRunning, wantFlags: fl(model.FlagStalled), wantAction: model.ActionWait,
			wantReason: "a human controls it"},
		{name: "running: none", node: beating("s", "running", pidAlive, time.Second, human),
			wantState: model.StateRunning, wantFlags: fl(), wantAction: model.ActionNone},
	})
}

func TestTraitRecordIdle(t *testing.T) {
	idle := traits(model.Traits{RecordIdle: true, BeatNotRequired: true})
	runTraitCases(t, []traitCase{
		{name: "its pid alive: running, idle", node: beating("s", "running", pidAlive, time.Second, idle),
			wantState: model.StateRunning, wantFlags: fl(model.FlagIdle), wantAction: model.ActionNone},
		{name: "its pid alive, an hour since its record changed: running, idle, quiet", node: beating("s", "running", pidAlive, time.Hour, idle),
			wantState: model.StateRunning, wantFlags: fl(model.FlagQuiet, model.FlagIdle), wantAction: model.ActionNone},
		{name: "its pid gone (the file a hard kill leaves): dead, never idle", node: beating("s", "running", pidGone, time.Hour, idle),
			wantState: model.StateDead, wantFlags: fl(), wantReason: "pid 4122 gone"},
		{name: "its pid reused: dead, never idle", node: beating("s", "running", pidReused, time.Hour, idle),
			wantState: model.StateDead, wantFlags: fl()},
	})
}

func TestTraitMergesItself(t *testing.T) {
	selfMerging := traits(model.Traits{MergesItself: true})
	runTraitCases(t, []traitCase{
		{name: "finished completed, no parent: none, never merge", node: beating("s", "completed", pidGone, time.Hour, selfMerging),
			wantState: model.StateFinished, wantFlags: fl(), wantAction: model.ActionNone, wantReason: "its source merges by itself"},
		{name: "dead, CfA DONE: none, never merge", node: beating("s", "running", pidGone, time.Minute, cfa("DONE"), selfMerging),
			wantState: model.StateDead, wantFlags: fl(), wantAction: model.ActionNone, wantReason: "its source merges by itself"},
		{name: "dead, CfA EXECUTE: still resume", node: beating("s", "running", pidGone, time.Minute, cfa("EXECUTE"), selfMerging),
			wantState: model.StateDead, wantFlags: fl(), wantAction: model.ActionResume},
	})
}

func TestTraitLaunchTimeout(t *testing.T) {
	launch := traits(model.Traits{LaunchTimeout: time.Minute})
	spawning := traits(model.Traits{LaunchTimeout: time.Minute, BeatNotRequired: true})
	runTraitCases(t, []traitCase{
		{name: "starting, older than the launch timeout: dead", node: beating("s", "starting", 0, 61*time.Second, launch),
			wantState: model.StateDead, wantFlags: fl(model.FlagStarting), wantAction: model.ActionResume,
			wantReason: "launch timed out: starting for 1m01s (launch timeout 1m00s)"},
		{name: "starting, exactly the launch timeout old: running", node: beating("s", "starting", 0, time.Minute, launch),
			wantState: model.StateRunning, wantFlags: fl(model.FlagStarting, model.FlagQuiet)},
		{name: "starting with no beat required, past the timeout: dead all the same", node: beating("s", "starting", 0, 90*time.Second, spawning),
			wantState: model.StateDead, wantFlags: fl(model.FlagStarting), wantReason: "launch timed out"},
		{name: "starting, its pid gone past the timeout: dead, the launch timed out", node: beating("s", "starting", pidGone, 90*time.Second, launch),
			wantState: model.StateDead, wantFlags: fl(model.FlagStarting), wantReason: "launch timed out"},
		{name: "starting, its pid alive: the process decides, not the timeout", node: beating("s", "starting", pidAlive, 90*time.Second, launch),
			wantState: model.StateRunning, wantFlags: fl(model.FlagStarting, model.FlagQuiet)},
		{name: "starting and blocked: never dead for idleness", node: beating("s", "starting", 0, 90*time.Second, launch, blocked("q")),
			wantState: model.StateRunning, wantFlags: fl(model.FlagStarting, model.FlagQuiet, model.FlagBlocked)},
		{name: "running past the timeout: the timeout is for a launch only", node: beating("s", "running", 0, 90*time.Second, launch),
			wantState: model.StateRunning, wantFlags: fl(model.FlagQuiet)},
		{name: "no trait: a starting record is dead only past stale", node: beating("s", "starting", 0, 90*time.Second),
			wantState: model.StateRunning, wantFlags: fl(model.FlagStarting, model.FlagQuiet)},
	})
}

func TestTraitBeatNotRequired(t *testing.T) {
	noBeat := traits(model.Traits{BeatNotRequired: true})
	runTraitCases(t, []traitCase{
		{name: "no pid, beat an hour old: quiet, not dead", node: beating("s", "running", 0, time.Hour, noBeat),
			wantState: model.StateRunning, wantFlags: fl(model.FlagQuiet), wantAction: model.ActionNone, wantReason: "no beat required"},
		{name: "live pid, beat an hour old: quiet, never stalled or a kill candidate", node: beating("s", "running", pidAlive, time.Hour, noBeat),
			wantState: model.StateRunning, wantFlags: fl(model.FlagQuiet), wantAction: model.ActionNone, wantReason: "pid 4121 alive"},
		{name: "unverified pid past stale: quiet, flagged unverified", node: beating("s", "running", pidUnverified, time.Hour, noBeat),
			wantState: model.StateRunning, wantFlags: fl(model.FlagQuiet, model.FlagPidUnverified), wantAction: model.ActionNone},
		{name: "pid gone: dead", node: beating("s", "running", pidGone, time.Minute, noBeat),
			wantState: model.StateDead, wantFlags: fl(), wantReason: "pid 4122 gone"},
		{name: "pid reused: dead", node: beating("s", "running", pidReused, time.Hour, noBeat),
			wantState: model.StateDead, wantFlags: fl(), wantReason: "another process"},
		{name: "the record says it stopped: finished", node: beating("s", "completed", 0, time.Hour, noBeat),
			wantState: model.StateFinished, wantFlags: fl()},
		{name: "--no-pid-check, beat an hour old: quiet, not dead", node: beating("s", "running", pidAlive, time.Hour, noBeat), th: noPidCheck(),
			wantState: model.StateRunning, wantFlags: fl(model.FlagQuiet)},
	})
}

// pidSlack names a process created 100 s before its record's started.
const pidSlack = 4127

// slackProbe is the fake probe plus a process created late-stamped.
type slackProbe struct{ *fakeProbe }

func (p slackProbe) Lookup(pid int) ProcessInfo {
	if pid == pidSlack {
		return ProcessInfo{Exists: true, CreateTime: started.Add(-100 * time.Second)}
	}
	return p.fakeProbe.Lookup(pid)
}

func TestTraitStartSlack(t *testing.T) {
	at := time.Unix(1711234567, 0)
	slack, tol := 120*time.Second, 2*time.Second
	tests := []struct {
		name   string
		create time.Time
		slack  time.Duration
		want   model.ProcessStatus
	}{
		{"created 100s before started, slack 120s: alive", at.Add(-100 * time.Second), slack, model.ProcessAlive},
		{"created slack + tolerance before started: alive", at.Add(-slack - tol), slack, model.ProcessAlive},
		{"created 1ms earlier than that: reused", at.Add(-slack - tol - time.Millisecond), slack, model.ProcessReused},
		{"created tolerance after started: alive", at.Add(tol), slack, model.ProcessAlive},
		{"created 1ms later than that: reused (slack is for a late stamp only)", at.Add(tol + time.Millisecond), slack, model.ProcessReused},
		{"no slack: created 100s before started is reused", at.Add(-100 * time.Second), 0, model.ProcessReused},
		{"a slack that does not fit with the tolerance saturates, never wraps", at.Add(-time.Hour), math.MaxInt64, model.ProcessAlive},
		{"a negative slack counts as none", at.Add(-10 * time.Second), -time.Hour, model.ProcessReused},
	}
	boot, later := at.Add(-24*time.Hour), at.Add(time.Hour)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := ProcessInfo{Exists: true, CreateTime: tt.create}
			if got, why := VerifyWithin(info, unixSeconds(at), tt.slack, tol, boot, later); got != tt.want || why != nil {
				t.Errorf("VerifyWithin = %s (%v), want %s", got, why, tt.want)
			}
		})
	}

	t.Run("the classifier honours the node's slack", func(t *testing.T) {
		late := beating("s", "running", pidSlack, time.Minute, traits(model.Traits{StartSlack: slack, BeatNotRequired: true}))
		ClassifyNode(late, slackProbe{newFakeProbe()}, now, th)
		if late.State != model.StateRunning || late.Process != model.ProcessAlive {
			t.Errorf("late-stamped process: %s %s (%s), want running, alive", late.State, late.Process, late.Reason)
		}
		plain := beating("s", "running", pidSlack, time.Minute)
		ClassifyNode(plain, slackProbe{newFakeProbe()}, now, th)
		if plain.State != model.StateDead || plain.Process != model.ProcessReused {
			t.Errorf("without the trait: %s %s (%s), want dead, reused", plain.State, plain.Process, plain.Reason)
		}
	})
}

// TestFinishedCfaFailureSurfaces: a finished node over a terminal failure
// of its CfA state recommends surface, never merge, whatever its source.
func TestFinishedCfaFailureSurfaces(t *testing.T) {
	runTraitCases(t, []traitCase{
		{name: "native, completed over FAILURE: surface", node: beating("s", "completed", pidGone, time.Hour, cfa("FAILURE")),
			wantState: model.StateFinished, wantFlags: fl(), wantAction: model.ActionSurface, wantReason: "CfA FAILURE: not work to merge"},
		{name: "teaparty, completed over WITHDRAWN: surface", node: beating("s", "completed", pidGone, time.Hour, cfa("WITHDRAWN"), source("teaparty"), traits(model.Traits{PIDPerTurn: true, MergesItself: true})),
			wantState: model.StateFinished, wantFlags: fl(), wantAction: model.ActionSurface, wantReason: "CfA WITHDRAWN"},
		{name: "opencode-teams, completed over FAILURE: surface, not none", node: beating("s", "completed", 0, time.Hour, cfa("FAILURE"), source("opencode-teams"), traits(model.Traits{BeatNotRequired: true, MergesItself: true})),
			wantState: model.StateFinished, wantFlags: fl(), wantAction: model.ActionSurface},
		{name: "teaparty, completed over DONE: none (it merges by itself)", node: beating("s", "completed", pidGone, time.Hour, cfa("DONE"), source("teaparty"), traits(model.Traits{MergesItself: true})),
			wantState: model.StateFinished, wantFlags: fl(), wantAction: model.ActionNone},
	})
	runTraitCases(t, []traitCase{
		{name: "withdrawn over WITHDRAWN said its own word: none", node: beating("s", "withdrawn", pidGone, time.Hour, cfa("WITHDRAWN")),
			wantState: model.StateFinished, wantFlags: fl(), wantAction: model.ActionNone},
	})
	t.Run("registry says completed, heartbeat gone, over FAILURE: surface", func(t *testing.T) {
		c := registered("B/c/1", "completed")
		cfa("FAILURE")(c)
		ClassifyForest([]*model.Node{adopt(beating("B", "running", pidGone, time.Hour), c)}, newFakeProbe(), now, th)
		if c.Action != model.ActionSurface {
			t.Errorf("action = %s (%s), want surface", c.Action, c.Reason)
		}
	})
	t.Run("under a running lead: surface all the same", func(t *testing.T) {
		c := beating("A/c/1", "completed", pidGone, time.Hour, cfa("FAILURE"))
		ClassifyForest([]*model.Node{adopt(beating("A", "running", pidAlive, time.Second), c)}, newFakeProbe(), now, th)
		if c.Action != model.ActionSurface {
			t.Errorf("action = %s (%s), want surface", c.Action, c.Reason)
		}
	})
}

// TestNodeThresholds: a node's own thresholds judge it in every rule; the
// global NoPidCheck still holds; nil means the global ones.
func TestNodeThresholds(t *testing.T) {
	short := model.DefaultThresholds()
	short.Beat, short.Stale, short.KillAfter = 10*time.Second, 60*time.Second, 90*time.Second
	long := model.DefaultThresholds()
	long.Beat, long.Stale, long.KillAfter = 5*time.Minute, 30*time.Minute, 30*time.Minute
	runTraitCases(t, []traitCase{
		{name: "own stale: no pid, 90s: dead", node: beating("s", "running", 0, 90*time.Second, ownThresholds(short)),
			wantState: model.StateDead, wantFlags: fl()},
		{name: "global stale: no pid, 90s: running quiet", node: beating("s", "running", 0, 90*time.Second),
			wantState: model.StateRunning, wantFlags: fl(model.FlagQuiet)},
		{name: "own beat: 20s is quiet", node: beating("s", "running", pidAlive, 20*time.Second, ownThresholds(short)),
			wantState: model.StateRunning, wantFlags: fl(model.FlagQuiet)},
		{name: "own kill-after: 100s is a kill candidate", node: beating("s", "running", pidAlive, 100*time.Second, ownThresholds(short)),
			wantState: model.StateRunning, wantFlags: fl(model.FlagStalled, model.FlagKillCandidate), wantAction: model.ActionKill},
		{name: "own kill-after in the wait note", node: beating("s", "running", pidAlive, 70*time.Second, ownThresholds(short)),
			wantState: model.StateRunning, wantFlags: fl(model.FlagStalled), wantAction: model.ActionWait, wantReason: "kill candidate in 20s"},
		{name: "long thresholds: 10 minutes is quiet, not stalled", node: beating("s", "running", pidAlive, 10*time.Minute, ownThresholds(long)),
			wantState: model.StateRunning, wantFlags: fl(model.FlagQuiet), wantAction: model.ActionNone},
		{name: "the global --no-pid-check holds over a node's own", node: beating("s", "running", pidGone, 30*time.Second, ownThresholds(long)), th: noPidCheck(),
			wantState: model.StateRunning, wantFlags: fl()},
	})
	t.Run("own stale in the compact override", func(t *testing.T) {
		a := beating("A", "running", pidAlive, time.Second, registryAge(90*time.Second), ownThresholds(short))
		ClassifyForest([]*model.Node{adopt(a, registered("A/c/1", "active"))}, newFakeProbe(), now, th)
		if a.Action != model.ActionCompact {
			t.Errorf("action = %s (%s), want compact", a.Action, a.Reason)
		}
	})
	t.Run("edges: the node's own, and its launch timeout while starting", func(t *testing.T) {
		n := beating("s", "starting", 0, time.Second, ownThresholds(short), traits(model.Traits{LaunchTimeout: 45 * time.Second}))
		edges := NodeEdges(n, th)
		for _, want := range []time.Duration{-ClockSkew, short.ExitGrace, short.Beat, short.Stale, short.KillAfter, 45 * time.Second} {
			if !slices.Contains(edges[:], want) {
				t.Errorf("edges %v lack %v", edges, want)
			}
		}
		if plain := NodeEdges(beating("s", "running", 0, time.Second), th); plain != NodeEdges(beating("t", "running", 0, time.Second), th) ||
			!slices.Contains(plain[:], th.Stale) || slices.Contains(plain[:], short.Stale) {
			t.Errorf("edges of a node without its own thresholds %v, want the global ones", plain)
		}
	})
}

// TestIdleWithRealProcesses: a per-turn pid that exited while the process
// that owned it lives is idle, not dead; once the owner is gone too, dead
// within the exit grace. The owner is a real `sleep`, recorded with its
// create time as the live engine records it; the turn is another.
func TestIdleWithRealProcesses(t *testing.T) {
	ownerPid, stopOwner := startSleep(t)
	ownerStarted := SystemProbe{}.Lookup(ownerPid).CreateTime
	turnPid, stopTurn := startSleep(t)
	turnStarted := SystemProbe{}.Lookup(turnPid).CreateTime
	if ownerStarted.IsZero() || turnStarted.IsZero() {
		t.Fatalf("create times of live sleeps unreadable: %v, %v", ownerStarted, turnStarted)
	}
	now := time.Now()
	lead := func() *model.Node {
		return &model.Node{
			ID: "job/lead", HasHeartbeat: true, BeatMtime: now.Add(-20 * time.Second),
			Heartbeat: &model.Heartbeat{PID: turnPid, Status: model.StatusRunning, Started: float64(turnStarted.UnixNano()) / 1e9},
			Traits:    model.Traits{PIDPerTurn: true},
			Owner:     &model.Owner{PID: ownerPid, Started: ownerStarted},
		}
	}
	classify := func() *model.Node {
		n := lead()
		ClassifyForest([]*model.Node{n}, nil, now, model.DefaultThresholds())
		return n
	}

	if n := classify(); n.State != model.StateRunning || n.HasFlag(model.FlagIdle) {
		t.Fatalf("turn running: %s %v (%s), want running, not idle", n.State, n.Flags, n.Reason)
	}
	stopTurn()
	n := classify()
	if n.State != model.StateRunning || !n.HasFlag(model.FlagIdle) || n.Process != model.ProcessGone {
		t.Errorf("turn exited, owner alive: %s %v %s (%s), want running, idle, gone", n.State, n.Flags, n.Process, n.Reason)
	}
	stopOwner()
	n = classify()
	if n.State != model.StateDead || n.HasFlag(model.FlagIdle) {
		t.Errorf("turn and owner gone, beat 20s old: %s %v (%s), want dead", n.State, n.Flags, n.Reason)
	}
}

// TestNodeWithoutADirIsNeverResumedNorMerged: resume and merge work in a
// node's infra dir (SPEC §5.2, §5.4). A record of another source that has
// none (a worktree removed, a chat conversation, a daemon's agent) is dead
// or done all the same, but what the operator can do is look at it:
// `surface`, never an action the engine would refuse. With a dir, the
// table's action holds.
func TestNodeWithoutADirIsNeverResumedNorMerged(t *testing.T) {
	noDir := func(n *model.Node) { n.InfraDir, n.HeartbeatPath = "", "/store/bus.db#"+n.ID }
	teaparty := []func(*model.Node){source("teaparty"), traits(model.Traits{PIDPerTurn: true, MergesItself: true})}
	middle := []func(*model.Node){source("middle"), traits(model.Traits{MergesItself: true})}
	opencode := []func(*model.Node){source("opencode-teams")} // `inactive`: no pid, stale, no trait
	chatroom := []func(*model.Node){source("chatroom"), traits(model.Traits{BeatNotRequired: true, StartSlack: 2 * time.Minute})}
	rows := []func(*model.Node){source("rows")} // a source that does not merge by itself
	with := func(opts []func(*model.Node), more ...func(*model.Node)) []func(*model.Node) {
		return append(slices.Clone(opts), more...)
	}
	var cases []traitCase
	for _, src := range []struct {
		name, kind string
		pid        int
		opts       []func(*model.Node)
	}{
		{"teaparty worker", "teaparty", pidGone, teaparty},
		{"middle workflow", "middle", pidGone, middle},
		{"opencode-teams agent", "opencode-teams", 0, opencode},
		{"chatroom agent", "chatroom", pidGone, chatroom},
	} {
		cases = append(cases,
			traitCase{name: src.name + ", dead, with a dir: resume",
				node:      beating("s", "running", src.pid, time.Hour, src.opts...),
				wantState: model.StateDead, wantFlags: fl(), wantAction: model.ActionResume},
			traitCase{name: src.name + ", dead, no dir: surface",
				node:      beating("s", "running", src.pid, time.Hour, with(src.opts, noDir)...),
				wantState: model.StateDead, wantFlags: fl(), wantAction: model.ActionSurface,
				wantReason: "cannot be resumed here: its " + src.kind + " record has no dir"},
		)
	}
	cases = append(cases,
		traitCase{name: "rows, completed, with a dir: merge", node: beating("s", "completed", pidGone, time.Hour, rows...),
			wantState: model.StateFinished, wantFlags: fl(), wantAction: model.ActionMerge},
		traitCase{name: "rows, completed, no dir: surface", node: beating("s", "completed", pidGone, time.Hour, with(rows, noDir)...),
			wantState: model.StateFinished, wantFlags: fl(), wantAction: model.ActionSurface,
			wantReason: "cannot be merged here: its rows record has no dir"},
		traitCase{name: "rows, dead, CfA DONE, no dir: surface", node: beating("s", "running", pidGone, time.Hour, with(rows, cfa("DONE"), noDir)...),
			wantState: model.StateDead, wantFlags: fl(), wantAction: model.ActionSurface,
			wantReason: "cannot be merged here"},
		traitCase{name: "teaparty, completed, no dir: none, it merges by itself", node: beating("s", "completed", pidGone, time.Hour, with(teaparty, noDir)...),
			wantState: model.StateFinished, wantFlags: fl(), wantAction: model.ActionNone, wantReason: "its source merges by itself"},
		traitCase{name: "teaparty, dead, retry budget spent, no dir: surface for the budget", node: beating("s", "running", pidGone, time.Hour, with(teaparty, retries(9, nil), noDir)...),
			wantState: model.StateDead, wantFlags: fl(), wantAction: model.ActionSurface, wantReason: "retry budget spent"},
	)
	runTraitCases(t, cases)

	t.Run("a dead lead with no dir surfaces; its dead worker waits on it", func(t *testing.T) {
		lead := beating("L", "running", pidGone, time.Hour, with(teaparty, noDir)...)
		worker := beating("L/w", "running", pidGone, time.Hour, teaparty...)
		ClassifyForest([]*model.Node{adopt(lead, worker)}, newFakeProbe(), now, th)
		if lead.Action != model.ActionSurface || worker.Action != model.ActionWait || !strings.Contains(worker.Reason, "its lead L is dead too") {
			t.Errorf("lead %s (%s), worker %s (%s); want surface, and wait on its dead lead", lead.Action, lead.Reason, worker.Action, worker.Reason)
		}
	})
}

func ended(why string) func(*model.Node) {
	return func(n *model.Node) { n.SetEnded(why) }
}

// TestSourceSawTheProcessEnd: a source that saw the process its record
// stands for end (a tmux pane gone, a server dead, a pid file removed)
// makes the node dead at once, whatever its age or traits, the reason
// naming what ended; a record that says it stopped is still finished.
func TestSourceSawTheProcessEnd(t *testing.T) {
	noBeat := traits(model.Traits{BeatNotRequired: true})
	const why = "tmux pane %3 gone"
	runTraitCases(t, []traitCase{
		{name: "no pid, fresh beat, no beat required: dead at once", node: beating("s", "running", 0, time.Second, noBeat, ended(why)),
			wantState: model.StateDead, wantFlags: fl(), wantReason: why},
		{name: "no pid, beat an hour old, no beat required: dead, not quiet", node: beating("s", "running", 0, time.Hour, noBeat, ended(why)),
			wantState: model.StateDead, wantFlags: fl(), wantReason: why},
		{name: "a live pid does not outweigh it", node: beating("s", "running", pidAlive, time.Minute, ended(why)),
			wantState: model.StateDead, wantFlags: fl(), wantReason: why},
		{name: "starting: dead, no launch to wait for", node: beating("s", "starting", 0, time.Second, traits(model.Traits{BeatNotRequired: true, LaunchTimeout: time.Minute}), ended(why)),
			wantState: model.StateDead, wantFlags: fl(model.FlagStarting), wantReason: why},
		{name: "the record says it stopped: finished", node: beating("s", "completed", 0, time.Hour, noBeat, ended(why)),
			wantState: model.StateFinished, wantFlags: fl()},
		{name: "nothing seen to end: quiet as before", node: beating("s", "running", 0, time.Hour, noBeat),
			wantState: model.StateRunning, wantFlags: fl(model.FlagQuiet), avoidReason: why},
	})
}

// TestTraitProcessUnseen: a record whose source could not look its process
// up (middle's tmux server did not answer) has pid 0 for want of an
// answer. As middle's watchdog, which falls through to its idle rules when
// tmux errs, it is stalled from stale to kill-after (its own thresholds:
// 5 and 15 minutes), never a kill candidate (no pid), waiting; dead only
// past kill-after. A record whose source looked and found no process is
// dead past stale, as before; so is one under --no-pid-check.
func TestTraitProcessUnseen(t *testing.T) {
	middle := model.DefaultThresholds()
	middle.Stale, middle.KillAfter = 5*time.Minute, 15*time.Minute
	unseen := traits(model.Traits{ProcessUnseen: true, MergesItself: true, SignOfLife: model.SignActivity})
	noPidCheck := middle
	noPidCheck.NoPidCheck = true
	runTraitCases(t, []traitCase{
		{name: "below stale: quiet", node: beating("wf", "running", 0, 3*time.Minute, unseen, ownThresholds(middle)),
			wantState: model.StateRunning, wantFlags: fl(model.FlagQuiet), wantAction: model.ActionNone},
		{name: "8 minutes quiet: stalled, waiting for middle's kill time", node: beating("wf", "running", 0, 8*time.Minute, unseen, ownThresholds(middle)),
			wantState: model.StateRunning, wantFlags: fl(model.FlagStalled), wantAction: model.ActionWait,
			wantReason: "its process could not be looked up; no activity for 8m00s; no pid to kill; dead past kill-after, in 7m00s"},
		{name: "at kill-after: still stalled", node: beating("wf", "running", 0, 15*time.Minute, unseen, ownThresholds(middle)),
			wantState: model.StateRunning, wantFlags: fl(model.FlagStalled), wantAction: model.ActionWait},
		{name: "past kill-after: dead", node: beating("wf", "running", 0, 16*time.Minute, unseen, ownThresholds(middle)),
			wantState: model.StateDead, wantFlags: fl(), wantAction: model.ActionResume,
			wantReason: "its process could not be looked up; no activity for 16m00s, past kill-after (15m00s)"},
		{name: "blocked: waiting for a human, never stalled", node: beating("wf", "running", 0, 8*time.Minute, unseen, ownThresholds(middle), blocked("keep v1?")),
			wantState: model.StateRunning, wantFlags: fl(model.FlagBlocked), wantAction: model.ActionAnswer},
		{name: "looked up and no process: dead past stale", node: beating("wf", "running", 0, 8*time.Minute,
			traits(model.Traits{MergesItself: true, SignOfLife: model.SignActivity}), ownThresholds(middle)),
			wantState: model.StateDead, wantFlags: fl(), wantReason: "no pid; last activity 8m00s ago"},
		{name: "--no-pid-check: the mtime alone, dead past stale", node: beating("wf", "running", 0, 8*time.Minute, unseen, ownThresholds(middle)),
			th: noPidCheck, wantState: model.StateDead, wantFlags: fl()},
	})
}
