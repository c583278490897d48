package liveness

// The identity rules of SPEC §3 ("same process") against the values a
// heartbeat can carry, and the clock_skew rule for an mtime in the future.
// The fake probe's host booted 24 h before now; its processes were created
// an hour before now.

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// unixSeconds is t as a heartbeat's `started`.
func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func withStarted(s float64) func(*model.Node) {
	return func(n *model.Node) { n.Heartbeat.Started = s }
}

// SPEC §3: a `started` that is not a plausible Unix time in seconds for a
// process of this host (after the boot minus the start tolerance, not in the
// future) proves nothing about the pid: it is unverified, treated as alive
// (never dead on that ground alone), never a kill candidate, and the reason
// names the value. A gone pid is dead whatever started says.
func TestStartedThatIsNotPlausibleUnixSecondsLeavesThePidUnverified(t *testing.T) {
	boot := newFakeProbe().boot
	tol := th.StartTolerance
	stalled := fl(model.FlagStalled, model.FlagPidUnverified)
	tests := []struct {
		name       string
		started    float64
		pid        int
		wantState  model.State
		wantFlags  []model.Flag
		wantReason string // a substring of the reason
	}{
		{name: "milliseconds (1.7e12): unverified, not a kill candidate", started: 1.7e12, pid: pidAlive,
			wantState: model.StateRunning, wantFlags: stalled, wantReason: "pid 4121 unverified: started 1.7e+12 is in the future"},
		{name: "1e10 (the year 2286): unverified", started: 1e10, pid: pidAlive,
			wantState: model.StateRunning, wantFlags: stalled, wantReason: "started 10000000000 is in the future"},
		{name: "1e18 (nanoseconds): unverified", started: 1e18, pid: pidAlive,
			wantState: model.StateRunning, wantFlags: stalled, wantReason: "started 1e+18"},
		{name: "1e300 (beyond int64 seconds): unverified", started: 1e300, pid: pidAlive,
			wantState: model.StateRunning, wantFlags: stalled, wantReason: "started 1e+300 is in the future"},
		{name: "-1e300: unverified", started: -1e300, pid: pidAlive,
			wantState: model.StateRunning, wantFlags: stalled, wantReason: "started -1e+300 predates"},
		{name: "an hour in the future: unverified", started: unixSeconds(now.Add(time.Hour)), pid: pidAlive,
			wantState: model.StateRunning, wantFlags: stalled, wantReason: "is in the future"},
		{name: "an hour before the boot: unverified", started: unixSeconds(boot.Add(-time.Hour)), pid: pidAlive,
			wantState: model.StateRunning, wantFlags: stalled, wantReason: "predates the last boot"},
		{name: "negative: unverified", started: -5, pid: pidAlive,
			wantState: model.StateRunning, wantFlags: stalled, wantReason: "started -5 predates the last boot"},
		{name: "NaN (not JSON, but a source may carry it): unverified", started: math.NaN(), pid: pidAlive,
			wantState: model.StateRunning, wantFlags: stalled, wantReason: "started NaN is not a number of seconds"},
		{name: "+Inf: unverified", started: math.Inf(1), pid: pidAlive,
			wantState: model.StateRunning, wantFlags: stalled, wantReason: "started +Inf"},
		{name: "-Inf: unverified", started: math.Inf(-1), pid: pidAlive,
			wantState: model.StateRunning, wantFlags: stalled, wantReason: "started -Inf"},
		{name: "0 (left out): unverified, not a kill candidate either", started: 0, pid: pidAlive,
			wantState: model.StateRunning, wantFlags: stalled, wantReason: "(pid 4121 unverified)"},
		{name: "milliseconds, pid gone: dead all the same", started: 1.7e12, pid: pidGone,
			wantState: model.StateDead, wantFlags: fl(), wantReason: "pid 4122 gone"},

		// The edges of the plausible window are plausible: compared, and here
		// another process's create time, so the pid is reused.
		{name: "exactly the tolerance before the boot: compared (reused)", started: unixSeconds(boot.Add(-tol)), pid: pidAlive,
			wantState: model.StateDead, wantFlags: fl(), wantReason: "now belongs to another process"},
		{name: "a millisecond further before the boot: unverified", started: unixSeconds(boot.Add(-tol - time.Millisecond)), pid: pidAlive,
			wantState: model.StateRunning, wantFlags: stalled, wantReason: "predates the last boot"},
		{name: "exactly the tolerance after now: compared (reused)", started: unixSeconds(now.Add(tol)), pid: pidAlive,
			wantState: model.StateDead, wantFlags: fl(), wantReason: "now belongs to another process"},
		{name: "a millisecond further after now: unverified", started: unixSeconds(now.Add(tol + time.Millisecond)), pid: pidAlive,
			wantState: model.StateRunning, wantFlags: stalled, wantReason: "is in the future"},
		{name: "plausible and the process's own create time: a kill candidate", started: unixSeconds(started), pid: pidAlive,
			wantState: model.StateRunning, wantFlags: fl(model.FlagStalled, model.FlagKillCandidate), wantReason: "alive but not beating"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := beating("s", "running", tt.pid, 6*time.Minute, withStarted(tt.started))
			ClassifyForest([]*model.Node{n}, newFakeProbe(), now, th)
			if n.State != tt.wantState || !slices.Equal(flagsOf(n), tt.wantFlags) {
				t.Errorf("got %s %v, want %s %v (reason %q)", n.State, n.Flags, tt.wantState, tt.wantFlags, n.Reason)
			}
			if !strings.Contains(n.Reason, tt.wantReason) {
				t.Errorf("reason %q, want it to contain %q", n.Reason, tt.wantReason)
			}
			if slices.Contains(tt.wantFlags, model.FlagPidUnverified) && n.Action == model.ActionKill {
				t.Errorf("action kill for a pid that cannot be verified (reason %q)", n.Reason)
			}
		})
	}
}

// The case, on a real process: a `sleep` whose pid a heartbeat
// names with started in milliseconds. Comparing 1.7e12 s with the create
// time once overflowed into "the same process", and the innocent sleep
// became a kill candidate. Its real create time is the control: the same
// node with it is one.
func TestStartedInMillisecondsNeverMakesAnInnocentProcessAKillCandidate(t *testing.T) {
	pid, _ := startSleep(t)
	created := SystemProbe{}.Lookup(pid).CreateTime
	at := time.Now()
	for _, tt := range []struct {
		started float64
		want    []model.Flag
		action  model.Action
	}{
		{1.7e12, fl(model.FlagStalled, model.FlagPidUnverified), model.ActionWait},
		{1e10, fl(model.FlagStalled, model.FlagPidUnverified), model.ActionWait},
		{unixSeconds(created), fl(model.FlagStalled, model.FlagKillCandidate), model.ActionKill},
	} {
		n := &model.Node{ID: "s", HasHeartbeat: true, BeatMtime: at.Add(-6 * time.Minute),
			Heartbeat: &model.Heartbeat{PID: pid, Status: model.StatusRunning, Started: tt.started}}
		// A beat past kill_after, after the boot (an hour before): the
		// boot of a host up a minute would make the record dead.
		ClassifyForest([]*model.Node{n}, bootedAt{boot: at.Add(-time.Hour)}, at, model.DefaultThresholds())
		if n.State != model.StateRunning || !slices.Equal(flagsOf(n), tt.want) || n.Action != tt.action {
			t.Errorf("started %g: %s %v %s (%s), want running %v %s", tt.started, n.State, n.Flags, n.Action, n.Reason, tt.want, tt.action)
		}
	}
}

// SPEC §3: a stalled node whose pid cannot be verified is never a kill
// candidate, whatever the cause (create time unreadable, started left out
// or implausible): kill would refuse it, so it is not recommended, and the
// advice says why instead of counting down to a kill that never comes.
func TestUnverifiedPidIsNeverAKillCandidate(t *testing.T) {
	for _, n := range []*model.Node{
		beating("s", "running", pidUnverified, 6*time.Minute),
		beating("s", "running", pidAlive, 6*time.Minute, noStarted),
		beating("s", "running", pidAlive, 6*time.Minute, withStarted(1.7e12)),
		beating("s", "running", pidAlive, 3*time.Minute, withStarted(1.7e12)),
	} {
		ClassifyForest([]*model.Node{n}, newFakeProbe(), now, th)
		if n.HasFlag(model.FlagKillCandidate) || n.Action != model.ActionWait {
			t.Errorf("started %g, pid %d, beat %s: %v %s, want stalled pid_unverified and wait (%s)",
				n.Heartbeat.Started, n.PID(), model.FormatAge(now.Sub(n.BeatMtime)), n.Flags, n.Action, n.Reason)
		}
		if !strings.Contains(n.Reason, "never a kill candidate") || strings.Contains(n.Reason, "kill candidate in") {
			t.Errorf("reason %q, want it to say the node is never a kill candidate", n.Reason)
		}
	}
}

// SPEC §3, like the legacy rule: a heartbeat last touched before the last
// boot was written by a process of an earlier boot, so a pid that cannot be
// verified now (whatever started says) is not its process: dead. A pid
// verified as the same process still decides.
func TestHeartbeatPredatingTheBootIsDeadUnlessItsPidIsVerified(t *testing.T) {
	boot := newFakeProbe().boot
	beforeBoot := now.Sub(boot) + 10*time.Minute
	tests := []struct {
		name       string
		node       *model.Node
		th         model.Thresholds
		wantState  model.State
		wantReason string
	}{
		{name: "started before the boot too, pid exists", node: beating("s", "running", pidAlive, beforeBoot, withStarted(unixSeconds(boot.Add(-time.Hour)))),
			wantState: model.StateDead, wantReason: "heartbeat predates the last boot"},
		{name: "create time unreadable", node: beating("s", "running", pidUnverified, beforeBoot),
			wantState: model.StateDead, wantReason: "pid 4124 is not its process"},
		{name: "no started", node: beating("s", "running", pidAlive, beforeBoot, noStarted),
			wantState: model.StateDead, wantReason: "heartbeat predates the last boot"},
		{name: "pid alive as the same process: stalled, not dead", node: beating("s", "running", pidAlive, beforeBoot),
			wantState: model.StateRunning, wantReason: "alive but not beating"},
		{name: "no-pid-check (another host's boot): the stale rule", node: beating("s", "running", pidUnverified, beforeBoot), th: noPidCheck(),
			wantState: model.StateDead, wantReason: "(pid not checked)"},
		{name: "written after the boot: unverified, treated as alive", node: beating("s", "running", pidUnverified, now.Sub(boot)-10*time.Minute),
			wantState: model.StateRunning, wantReason: "(pid 4124 unverified)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			thr := tt.th
			if thr == (model.Thresholds{}) {
				thr = th
			}
			ClassifyForest([]*model.Node{tt.node}, newFakeProbe(), now, thr)
			if tt.node.State != tt.wantState || !strings.Contains(tt.node.Reason, tt.wantReason) {
				t.Errorf("got %s %q, want %s with %q", tt.node.State, tt.node.Reason, tt.wantState, tt.wantReason)
			}
		})
	}
}

// SPEC §3 clock_skew: an mtime ClockSkew or more in the future says nothing about when the node last beat, so the pid decides — verified gone
// or reused is dead at once (the exit grace cannot be measured from a
// future mtime), alive is running — and the node is flagged clock_skew with
// a reason that says how far ahead the mtime is, never "0s ago". Less than
// ClockSkew ahead, the mtime counts as just now.
func TestMtimeInTheFutureIsClockSkewAndThePidDecides(t *testing.T) {
	skew := fl(model.FlagClockSkew)
	tests := []struct {
		name       string
		node       *model.Node
		th         model.Thresholds
		wantState  model.State
		wantFlags  []model.Flag
		wantReason string // a substring of the reason
	}{
		{name: "pid gone, mtime 1h ahead: dead", node: beating("s", "running", pidGone, -time.Hour),
			wantState: model.StateDead, wantFlags: skew, wantReason: "pid 4122 gone; heartbeat mtime 1h00m in the future"},
		{name: "pid reused, mtime 1h ahead: dead", node: beating("s", "running", pidReused, -time.Hour),
			wantState: model.StateDead, wantFlags: skew, wantReason: "pid 4123 now belongs to another process; heartbeat mtime 1h00m in the future"},
		{name: "pid alive as the same process, mtime 1h ahead: running", node: beating("s", "running", pidAlive, -time.Hour),
			wantState: model.StateRunning, wantFlags: skew, wantReason: "beating; heartbeat mtime 1h00m in the future"},
		{name: "pid unverified, mtime 1h ahead: running, treated as alive", node: beating("s", "running", pidUnverified, -time.Hour),
			wantState: model.StateRunning, wantFlags: fl(model.FlagPidUnverified, model.FlagClockSkew), wantReason: "in the future (pid 4124 unverified)"},
		{name: "no pid, mtime 1h ahead: running (nothing says it stopped)", node: beating("s", "running", 0, -time.Hour),
			wantState: model.StateRunning, wantFlags: skew, wantReason: "beating; heartbeat mtime 1h00m in the future (no pid to check)"},
		{name: "no-pid-check, mtime 1h ahead: running", node: beating("s", "running", pidGone, -time.Hour), th: noPidCheck(),
			wantState: model.StateRunning, wantFlags: skew, wantReason: "heartbeat mtime 1h00m in the future (pid not checked)"},
		{name: "blocked, pid alive, mtime 1h ahead: running", node: beating("s", "running", pidAlive, -time.Hour, blocked("ship?")),
			wantState: model.StateRunning, wantFlags: fl(model.FlagBlocked, model.FlagClockSkew), wantReason: "waiting for a human: ship?; heartbeat mtime 1h00m in the future"},
		{name: "unreadable heartbeat, mtime 1h ahead: running", node: func() *model.Node {
			n := unreadable("s", time.Second)
			n.BeatMtime = now.Add(time.Hour)
			return n
		}(), wantState: model.StateRunning, wantFlags: fl(model.FlagUnreadable, model.FlagClockSkew), wantReason: "heartbeat unreadable; heartbeat mtime 1h00m in the future"},
		{name: "legacy, pid gone, mtime 1h ahead: dead", node: func() *model.Node {
			n := legacy("c", pidGone, time.Second)
			n.BeatMtime = now.Add(time.Hour)
			return n
		}(), wantState: model.StateDead, wantFlags: fl(model.FlagLegacy, model.FlagClockSkew), wantReason: "pid 4122 gone; .running mtime 1h00m in the future"},
		{name: "pid gone, mtime a thousand years ahead (beyond a Duration): dead", node: beating("s", "running", pidGone, 0, func(n *model.Node) {
			n.BeatMtime = now.AddDate(1000, 0, 0)
		}), wantState: model.StateDead, wantFlags: skew, wantReason: "in the future"},

		// Within ClockSkew: a beat just now, whatever the pid.
		{name: "pid gone, mtime 1s ahead: running, no flag", node: beating("s", "running", pidGone, -time.Second),
			wantState: model.StateRunning, wantFlags: fl(), wantReason: "last beat 0s ago"},
		{name: "pid gone, mtime just under ClockSkew ahead: running, no flag", node: beating("s", "running", pidGone, -ClockSkew+time.Millisecond),
			wantState: model.StateRunning, wantFlags: fl(), wantReason: "last beat 0s ago"},
		{name: "pid gone, mtime ClockSkew ahead: dead", node: beating("s", "running", pidGone, -ClockSkew),
			wantState: model.StateDead, wantFlags: skew, wantReason: "pid 4122 gone; heartbeat mtime 5s in the future"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			thr := tt.th
			if thr == (model.Thresholds{}) {
				thr = th
			}
			ClassifyForest([]*model.Node{tt.node}, newFakeProbe(), now, thr)
			if tt.node.State != tt.wantState || !slices.Equal(flagsOf(tt.node), tt.wantFlags) {
				t.Errorf("got %s %v, want %s %v (reason %q)", tt.node.State, tt.node.Flags, tt.wantState, tt.wantFlags, tt.node.Reason)
			}
			if !strings.Contains(tt.node.Reason, tt.wantReason) {
				t.Errorf("reason %q, want it to contain %q", tt.node.Reason, tt.wantReason)
			}
			if tt.node.HasFlag(model.FlagClockSkew) && strings.Contains(tt.node.Reason, "0s ago") {
				t.Errorf("reason %q quotes a future mtime as 0s ago", tt.node.Reason)
			}
		})
	}
}

// The live engine re-classifies a node just past each of BeatEdges (the
// comparison is `age > edge`): the clock_skew flag, and the pid's say with
// it, end once the mtime is less than ClockSkew ahead, so that instant must
// be an edge.
func TestClockSkewEndsAtABeatEdge(t *testing.T) {
	mtime := now.Add(time.Hour)
	at := func(age time.Duration) *model.Node {
		n := beating("s", "running", pidGone, 0, func(n *model.Node) { n.BeatMtime = mtime })
		ClassifyForest([]*model.Node{n}, newFakeProbe(), mtime.Add(age), th)
		return n
	}
	before, after := at(-ClockSkew), at(-ClockSkew+time.Nanosecond)
	if !before.HasFlag(model.FlagClockSkew) || before.State != model.StateDead {
		t.Errorf("at age -ClockSkew: %s %v, want dead clock_skew", before.State, before.Flags)
	}
	if after.HasFlag(model.FlagClockSkew) || after.State != model.StateRunning {
		t.Errorf("just past age -ClockSkew: %s %v, want running without clock_skew", after.State, after.Flags)
	}
	if edges := BeatEdges(th); !slices.Contains(edges[:], -ClockSkew) {
		t.Errorf("BeatEdges %v lacks -ClockSkew, where the classification changes", edges)
	}
}
