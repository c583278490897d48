package liveness

// The reasons' words for what a node's record is (SPEC §3, §10): a pid
// that a live process holds now is said to be another process's, never
// "gone"; and "beating" is said only of a node whose sign of life is a
// beat. Real processes where the pid decides.

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// realTurn is a TeaParty worker's record (a per-turn pid) classified at
// the real clock: pid with started, beaten age ago, an owner when
// ownerPid > 0 (its create time read back, as the live engine records it).
func realTurn(pid int, started float64, age time.Duration, ownerPid int) *model.Node {
	now := time.Now()
	n := &model.Node{
		ID: "job/dispatch:ab12", HasHeartbeat: true, BeatMtime: now.Add(-age), InfraDir: "/r/job/tasks/ab12",
		Heartbeat: &model.Heartbeat{PID: pid, Status: model.StatusRunning, Started: started},
		Traits:    model.Traits{PIDPerTurn: true, MergesItself: true, SignOfLife: model.SignActivity},
		Source:    "teaparty",
	}
	if ownerPid > 0 {
		n.Owner = &model.Owner{PID: ownerPid, Started: SystemProbe{}.Lookup(ownerPid).CreateTime}
	}
	ClassifyForest([]*model.Node{n}, nil, now, model.DefaultThresholds())
	return n
}

// A per-turn pid that a live process holds, created an hour after the
// record's started: reused. `ps` shows that process, so the reason says
// the pid belongs to another process, in every rule that speaks of it —
// never that it is gone, never that it exited.
func TestReusedTurnPidBelongsToAnotherProcess(t *testing.T) {
	reused, _ := startSleep(t)
	created := SystemProbe{}.Lookup(reused).CreateTime
	if created.IsZero() {
		t.Fatal("the create time of a live sleep is unreadable")
	}
	// Its record's started is an older process's, plausible for this boot:
	// halfway between the boot and the sleep (at most an hour before it),
	// more than the start tolerance before, on a host booted a minute ago
	// as on one up for weeks.
	boot := SystemProbe{}.BootTime()
	gap := min(created.Sub(boot), time.Hour)
	if gap < 6*time.Second {
		time.Sleep(6*time.Second - gap)
		reused, _ = startSleep(t)
		created = SystemProbe{}.Lookup(reused).CreateTime
		gap = min(created.Sub(boot), time.Hour)
	}
	started := unixSeconds(created.Add(-gap / 2))
	ownerAlive, _ := startSleep(t)
	ownerGone := goneProcess(t)
	p := strconv.Itoa(reused)
	tests := []struct {
		name      string
		age       time.Duration
		owner     int
		wantState model.State
		wantFlag  model.Flag // "" none wanted
		want      string
	}{
		{"once, the beat fresh: between turns", 40 * time.Second, 0, model.StateRunning, model.FlagQuiet,
			"pid " + p + " now belongs to another process between turns: dead once the last activity is stale; last activity 40s ago"},
		{"once, the beat stale: dead", 3 * time.Minute, 0, model.StateDead, "",
			"pid " + p + " now belongs to another process; last activity 3m00s ago"},
		{"live engine, its owner alive: idle", 20 * time.Second, ownerAlive, model.StateRunning, model.FlagIdle,
			"between turns: pid " + p + " now belongs to another process; owner pid " + strconv.Itoa(ownerAlive) + " alive"},
		{"live engine, its owner gone too: dead", 20 * time.Second, ownerGone, model.StateDead, "",
			"pid " + p + " now belongs to another process and its owner pid " + strconv.Itoa(ownerGone) + " gone"},
		{"live engine, its owner alive, the beat stale: dead", 3 * time.Minute, ownerAlive, model.StateDead, "",
			"pid " + p + " now belongs to another process; last activity 3m00s ago"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := realTurn(reused, started, tt.age, tt.owner)
			if n.State != tt.wantState || (tt.wantFlag != "" && !n.HasFlag(tt.wantFlag)) || n.Process != model.ProcessReused {
				t.Errorf("%s %v %s, want %s with %q, the pid reused (%s)", n.State, n.Flags, n.Process, tt.wantState, tt.wantFlag, n.Reason)
			}
			if !strings.Contains(n.Reason, tt.want) {
				t.Errorf("reason %q, want it to hold %q", n.Reason, tt.want)
			}
			for _, wrong := range []string{"pid " + p + " gone", "pid " + p + " exited"} {
				if strings.Contains(n.Reason, wrong) {
					t.Errorf("reason %q says %q of a pid a live process holds", n.Reason, wrong)
				}
			}
		})
	}
}

// Each sign of life (Traits.SignOfLife) in every rule whose reason names
// it: "beating", "last beat", "not beating", "no beat" and "heartbeat
// mtime" are said of a beat alone; a record whose sign is its activity, its
// last update or its start is named so. The stalled case is a real process.
func TestBeatingIsSaidOnlyOfABeat(t *testing.T) {
	alive, _ := startSleep(t)
	aliveStarted := float64(SystemProbe{}.Lookup(alive).CreateTime.UnixNano()) / 1e9
	gone := goneProcess(t)
	beatWords := []string{"beating", "beat ", "heartbeat"}
	type rule struct {
		name       string
		pid        int
		age        time.Duration
		traits     model.Traits
		noPidCheck bool
		beforeBoot bool // its mtime an hour before the last boot, its started unknown
		wantState  model.State
		want       map[model.SignOfLife]string
	}
	rules := []rule{
		{name: "running, fresh", pid: alive, age: 10 * time.Second, wantState: model.StateRunning,
			want: map[model.SignOfLife]string{model.SignBeat: "beating; last beat 10s ago", model.SignActivity: "running; last activity 10s ago",
				model.SignUpdate: "running; last update 10s ago", model.SignStart: "running; started 10s ago"}},
		{name: "quiet", pid: alive, age: time.Minute, wantState: model.StateRunning,
			want: map[model.SignOfLife]string{model.SignBeat: "beating, quiet: last beat 1m00s ago", model.SignActivity: "running, quiet: last activity 1m00s ago",
				model.SignUpdate: "running, quiet: last update 1m00s ago", model.SignStart: "running, quiet: started 1m00s ago"}},
		{name: "quiet past stale, no beat required", pid: alive, age: time.Hour, traits: model.Traits{BeatNotRequired: true}, wantState: model.StateRunning,
			want: map[model.SignOfLife]string{model.SignBeat: "beating, quiet: last beat 1h00m ago; no beat required", model.SignActivity: "running, quiet: last activity 1h00m ago; its age says nothing",
				model.SignUpdate: "running, quiet: last update 1h00m ago; its age says nothing", model.SignStart: "running, quiet: started 1h00m ago; its age says nothing"}},
		{name: "stalled, a real live pid", pid: alive, age: 3 * time.Minute, wantState: model.StateRunning,
			want: map[model.SignOfLife]string{model.SignBeat: "alive but not beating for 3m00s", model.SignActivity: "alive but no activity for 3m00s",
				model.SignUpdate: "alive but no update for 3m00s", model.SignStart: "alive, started 3m00s ago"}},
		{name: "no pid, stale: dead", pid: 0, age: 3 * time.Minute, wantState: model.StateDead,
			want: map[model.SignOfLife]string{model.SignBeat: "no pid; last beat 3m00s ago", model.SignActivity: "no pid; last activity 3m00s ago",
				model.SignUpdate: "no pid; last update 3m00s ago", model.SignStart: "no pid; started 3m00s ago"}},
		{name: "pid not checked, stale: dead", pid: alive, age: 3 * time.Minute, noPidCheck: true, wantState: model.StateDead,
			want: map[model.SignOfLife]string{model.SignBeat: "no beat for 3m00s (pid not checked)", model.SignActivity: "no activity for 3m00s (pid not checked)",
				model.SignUpdate: "no update for 3m00s (pid not checked)", model.SignStart: "started 3m00s ago (pid not checked)"}},
		{name: "pid gone: dead", pid: gone, age: 30 * time.Second, wantState: model.StateDead,
			want: map[model.SignOfLife]string{model.SignBeat: "last beat 30s ago", model.SignActivity: "last activity 30s ago",
				model.SignUpdate: "last update 30s ago", model.SignStart: "started 30s ago"}},
		{name: "before the last boot, the pid unverified: dead", pid: alive, beforeBoot: true, wantState: model.StateDead,
			want: map[model.SignOfLife]string{model.SignBeat: "heartbeat predates the last boot", model.SignActivity: "its last activity predates the last boot",
				model.SignUpdate: "its last update predates the last boot", model.SignStart: "its start predates the last boot"}},
		{name: "in the future: clock_skew", pid: alive, age: -time.Minute, wantState: model.StateRunning,
			want: map[model.SignOfLife]string{model.SignBeat: "heartbeat mtime 1m00s in the future", model.SignActivity: "last activity 1m00s in the future",
				model.SignUpdate: "last update 1m00s in the future", model.SignStart: "start 1m00s in the future"}},
	}
	for _, r := range rules {
		for _, sign := range []model.SignOfLife{model.SignBeat, model.SignActivity, model.SignUpdate, model.SignStart} {
			t.Run(r.name+"/"+r.want[sign], func(t *testing.T) {
				now := time.Now()
				tr := r.traits
				tr.SignOfLife = sign
				n := &model.Node{ID: "n", HasHeartbeat: true, BeatMtime: now.Add(-r.age), InfraDir: "/r/n", Traits: tr,
					Heartbeat: &model.Heartbeat{PID: r.pid, Status: model.StatusRunning, Started: aliveStarted}}
				if r.beforeBoot {
					n.BeatMtime, n.Heartbeat.Started = SystemProbe{}.BootTime().Add(-time.Hour), 0
				}
				thr := model.DefaultThresholds()
				thr.NoPidCheck = r.noPidCheck
				ClassifyForest([]*model.Node{n}, nil, now, thr)
				if n.State != r.wantState {
					t.Errorf("state %s, want %s (%s)", n.State, r.wantState, n.Reason)
				}
				if !strings.Contains(n.Reason, r.want[sign]) {
					t.Errorf("reason %q, want it to hold %q", n.Reason, r.want[sign])
				}
				if sign == model.SignBeat {
					return
				}
				for _, w := range beatWords {
					if strings.Contains(n.Reason, w) {
						t.Errorf("reason %q says %q of a record that has no beat", n.Reason, strings.TrimSpace(w))
					}
				}
			})
		}
	}
}

// A finished record whose system says more of how it ended than its
// status (Rare.Ending: middle's "failed: idle-timeout" under withdrawn)
// reads in those words; without them, its status.
func TestFinishedReasonIsTheSystemsOwnWords(t *testing.T) {
	tests := []struct {
		name, status, ending, want string
	}{
		{"withdrawn, the system's words", model.StatusWithdrawn, "failed: idle-timeout", "failed: idle-timeout"},
		{"withdrawn, no words: the status", model.StatusWithdrawn, "", "withdrawn"},
		{"completed, the system's words", model.StatusCompleted, "merged upstream", "merged upstream"},
		{"words on several lines: one line", model.StatusWithdrawn, "failed:\nidle-timeout", "failed: idle-timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := beating("wf", tt.status, 0, time.Hour, func(n *model.Node) {
				n.EditRare(func(r *model.Rare) { r.Ending = tt.ending })
			})
			ClassifyForest([]*model.Node{n}, newFakeProbe(), now, th)
			if n.State != model.StateFinished || !strings.HasPrefix(n.Reason, tt.want) || strings.Contains(n.Reason, "\n") {
				t.Errorf("%s %q, want finished, its reason led by %q", n.State, n.Reason, tt.want)
			}
		})
	}
}
