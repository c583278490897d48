package liveness

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §3, §5.1: kill never signals pid 1 (or below), dispatchtop itself or
// one of its ancestors, so a record naming one of them is never a kill
// candidate, however long it is stalled: its action is wait, and its reason
// says why — the default --fail-on (which fails on kill_candidate and
// action:kill) passes it. The pids are real, each with its real create
// time as `started`, so the identity verifies.
func TestARecordOfAPidKillNeverSignalsIsNoKillCandidate(t *testing.T) {
	now := time.Now()
	th := model.DefaultThresholds()
	parent, err := (SystemProbe{}).Parent(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		pid    int
		reason string
	}{
		{name: "pid 1", pid: 1, reason: "never a kill candidate: pid 1 is never signalled"},
		{name: "dispatchtop itself", pid: os.Getpid(), reason: "is dispatchtop itself or one of its ancestors"},
		{name: "its parent", pid: parent, reason: "is dispatchtop itself or one of its ancestors"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info := SystemProbe{}.Lookup(tc.pid)
			if !info.Exists || info.CreateTimeErr != nil {
				t.Skipf("pid %d cannot be read here: %+v", tc.pid, info)
			}
			if boot := (SystemProbe{}).BootTime(); info.CreateTime.Before(boot) {
				// Only a simulated boot (simulatedBoot) comes after init.
				t.Skipf("pid %d was created before the boot (%v): no host is like this one", tc.pid, boot)
			}
			n := &model.Node{ID: "s", InfraDir: "/r/s", HeartbeatPath: "/r/s/.heartbeat", HasHeartbeat: true,
				Heartbeat: &model.Heartbeat{PID: tc.pid, Status: model.StatusRunning, Role: "agent", Started: model.EpochSeconds(info.CreateTime)},
				BeatMtime: now.Add(-3 * th.KillAfter)}
			pinned, _, release := PinProcesses(SystemProbe{})
			defer release()
			for _, probe := range []Probe{SystemProbe{}, NewCachingProbe(nil, time.Second), NewCachingProbe(pinned, time.Second)} {
				ClassifyForest([]*model.Node{n}, probe, now, th)
				if n.Process != model.ProcessAlive || !n.HasFlag(model.FlagStalled) {
					t.Fatalf("pid %d: %s, flags %v (%s): want alive and stalled", tc.pid, n.Process, n.Flags, n.Reason)
				}
				if n.HasFlag(model.FlagKillCandidate) || n.Action != model.ActionWait || !strings.Contains(n.Reason, tc.reason) {
					t.Errorf("pid %d through %T: flags %v, action %s, reason %q: want no kill_candidate, wait, saying %q",
						tc.pid, probe, n.Flags, n.Action, n.Reason, tc.reason)
				}
			}
		})
	}
}
