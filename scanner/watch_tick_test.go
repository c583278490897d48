package scanner

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

// startSleep starts a real process for a heartbeat to name; it is killed and
// reaped at cleanup at the latest. It returns the command and its `started`.
func startSleep(t *testing.T) (*exec.Cmd, float64) {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) }
	t.Cleanup(stop)
	info := liveness.SystemProbe{}.Lookup(cmd.Process.Pid)
	if !info.Exists || info.CreateTime.IsZero() {
		t.Fatalf("cannot read the create time of sleep %d: %+v", cmd.Process.Pid, info)
	}
	return cmd, model.EpochSeconds(info.CreateTime)
}

// touchUntilDone bumps hb's mtime every interval until the test ends.
func touchUntilDone(t *testing.T, hb string, every time.Duration) {
	t.Helper()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(every):
			}
			now := time.Now()
			_ = os.Chtimes(hb, now, now)
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

// SPEC §3: time-based states change without any file event, and a steady
// stream of events elsewhere must not starve the tick. One session beats
// every millisecond, so a flush is nearly always pending; another session's
// process is killed: it must turn dead within a tick and a debounce, not
// whenever a tick happens to land in a gap between flushes. The debounce is
// long and the tick not a divisor of it, so such gaps are rare and the tick
// seldom lands in one by chance.
func TestWatchTickNotStarvedByEvents(t *testing.T) {
	modes := []struct {
		name string
		wo   WatchOptions
	}{
		{"fsnotify", WatchOptions{Tick: 130 * time.Millisecond, Debounce: 2500 * time.Millisecond}},
		{"polling", WatchOptions{Poll: 2 * time.Millisecond, Tick: 130 * time.Millisecond, Debounce: 2500 * time.Millisecond}},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			pid, started := self(t)
			busy := writeHeartbeat(t, filepath.Join(root, "busy"), pid, started, "running", "")
			cmd, sleepStarted := startSleep(t)
			writeHeartbeat(t, filepath.Join(root, "victim"), cmd.Process.Pid, sleepStarted, "running", "")
			th := model.Thresholds{Beat: time.Minute, Stale: 2 * time.Minute, KillAfter: 5 * time.Minute,
				ExitGrace: 200 * time.Millisecond, StartTolerance: 2 * time.Second}
			w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: th}, m.wo)
			if err != nil {
				t.Fatal(err)
			}
			runWatcher(t, w)
			await(t, w, "victim running", nodeIs("victim", model.StateRunning, "", false))
			touchUntilDone(t, busy, time.Millisecond)
			time.Sleep(300 * time.Millisecond) // past the exit grace, in the event stream
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			// A tick and a debounce (2.6 s) at most; 8 s leaves a loaded
			// machine room.
			awaitWithin(t, w, 8*time.Second, "victim dead", nodeIs("victim", model.StateDead, "", false))
		})
	}
}

// SPEC §3 and its appendix (a beat 360 s old with kill-after 300 s is a kill
// candidate): kill-after is measured from the beat, like stale, so the tick
// must re-classify a stalled node when its beat reaches kill-after, not
// stale + kill-after later. The periodic refresh of the ages reasons quote
// as text (30 ticks, 6 s here) must not be what brings it.
func TestWatchKillCandidateDueAtKillAfter(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			// Not this test process: a record of it is never a kill
			// candidate (kill never signals it).
			cmd, started := startSleep(t)
			hb := writeHeartbeat(t, filepath.Join(root, "s"), cmd.Process.Pid, started, "running", "")
			th := model.Thresholds{Beat: time.Second, Stale: 4 * time.Second, KillAfter: 6 * time.Second,
				ExitGrace: time.Second, StartTolerance: 2 * time.Second}
			setMtime(t, hb, time.Now().Add(-5500*time.Millisecond)) // stalled; kill candidate in 0.5 s
			wo := m.wo
			wo.Tick = 200 * time.Millisecond
			w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: th}, wo)
			if err != nil {
				t.Fatal(err)
			}
			runWatcher(t, w)
			// Due 0.5 s from now; stale + kill-after would be 4.5 s, the
			// refresh 6 s.
			awaitWithin(t, w, 4*time.Second, "kill candidate", nodeIs("s", model.StateRunning, model.FlagKillCandidate, true))
		})
	}
}

// fixedProbe gives every pid the same answer.
type fixedProbe liveness.ProcessInfo

func (p fixedProbe) Lookup(int) liveness.ProcessInfo { return liveness.ProcessInfo(p) }

// The tick re-classifies a session only when nextDue says so: it must never
// say a time later than the classifier's next change of state, flags or
// action, whatever the thresholds, the probe's answer and the node. Checked
// against the classifier itself at every threshold edge (and a nanosecond
// either side) and on a grid between, so that the two cannot drift apart.
func TestNextDueNeverAfterTheClassifierChanges(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	created := base.Add(-time.Hour)
	thresholds := []model.Thresholds{
		model.DefaultThresholds(),
		testThresholds, // kill-after below stale
		{Beat: 10 * time.Second, Stale: 20 * time.Second, KillAfter: 25 * time.Second, ExitGrace: 15 * time.Second, StartTolerance: time.Second},
		func() model.Thresholds { th := model.DefaultThresholds(); th.NoPidCheck = true; return th }(),
	}
	probes := map[string]fixedProbe{
		"alive":      {Exists: true, CreateTime: created},
		"gone":       {},
		"reused":     {Exists: true, CreateTime: created.Add(time.Minute)},
		"unverified": {Exists: true, CreateTimeErr: fs.ErrPermission},
	}
	type variant struct {
		name    string
		pid     int
		status  string
		blocked bool
	}
	variants := []variant{
		{"running", 4242, model.StatusRunning, false},
		{"running, blocked", 4242, model.StatusRunning, true},
		{"starting", 4242, model.StatusStarting, false},
		{"paused", 4242, model.StatusPaused, false},
		{"no pid", 0, model.StatusRunning, false},
		{"completed", 4242, model.StatusCompleted, false},
	}
	key := func(n *model.Node) string { return fmt.Sprint(n.State, n.Flags, n.Action) }
	for ti, th := range thresholds {
		longest := max(th.ExitGrace, th.Beat, th.Stale, th.KillAfter, th.Stale+th.KillAfter)
		var ages []time.Duration
		// -1h and -ClockSkew: a beat mtime in the future (clock_skew).
		for _, e := range []time.Duration{-time.Hour, -liveness.ClockSkew, 0, th.ExitGrace, th.Beat, th.Stale, th.KillAfter, th.Stale + th.KillAfter} {
			ages = append(ages, e-time.Nanosecond, e, e+time.Nanosecond, e+2*time.Nanosecond)
		}
		for k := range 400 {
			ages = append(ages, longest*2*time.Duration(k)/400)
		}
		slices.Sort(ages)
		ages = slices.Compact(ages)
		for pname, probe := range probes {
			for _, v := range variants {
				t.Run(fmt.Sprintf("thresholds %d/%s/%s", ti, pname, v.name), func(t *testing.T) {
					classify := func(age time.Duration) *model.Node {
						n := &model.Node{ID: "s", InfraDir: "/r/s", HasHeartbeat: true, BeatMtime: base,
							Heartbeat: &model.Heartbeat{PID: v.pid, Status: v.status, Started: float64(created.Unix())}}
						if v.blocked {
							n.Blocked = &model.Blocked{Question: "?"}
						}
						liveness.ClassifyForest([]*model.Node{n}, probe, base.Add(age), th)
						return n
					}
					keys := make([]string, len(ages))
					for i, a := range ages {
						keys[i] = key(classify(a))
					}
					// changeAt[i]: the first sampled age after ages[i] with
					// another classification, or -1.
					changeAt := make([]int, len(ages))
					next := -1
					for i := len(ages) - 1; i >= 0; i-- {
						changeAt[i] = next
						if i > 0 && keys[i-1] != keys[i] {
							next = i
						}
					}
					for i, a := range ages {
						if changeAt[i] < 0 {
							continue
						}
						now := base.Add(a)
						due := nextDue(classify(a), now, th)
						if change := base.Add(ages[changeAt[i]]); due.After(change) {
							t.Errorf("at beat age %v (%s): due at age %v, but at age %v it is %s",
								a, keys[i], due.Sub(base), ages[changeAt[i]], keys[changeAt[i]])
						}
					}
				})
			}
		}
	}
}

// SPEC §3 dead (b), for a process two sessions name (a lead and the
// session it spawned, say): its exit reaches both, also when one of them
// is re-classified by a file event at the moment the exit is noticed.
func TestWatchSharedPidGoneReachesEverySession(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			cmd, started := startSleep(t)
			hbA := writeHeartbeat(t, filepath.Join(root, "a"), cmd.Process.Pid, started, "running", "")
			writeHeartbeat(t, filepath.Join(root, "b"), cmd.Process.Pid, started, "running", "")
			th := model.Thresholds{Beat: time.Minute, Stale: 2 * time.Minute, KillAfter: 5 * time.Minute,
				ExitGrace: 300 * time.Millisecond, StartTolerance: 2 * time.Second}
			w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: th}, m.wo)
			if err != nil {
				t.Fatal(err)
			}
			runWatcher(t, w)
			await(t, w, "both running", func(s *model.Snapshot) bool {
				return nodeIs("a", model.StateRunning, "", false)(s) && nodeIs("b", model.StateRunning, "", false)(s)
			})
			time.Sleep(400 * time.Millisecond) // past the exit grace: the pid decides
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			setMtime(t, hbA, time.Now().Add(-time.Second)) // an event for a, past its grace
			awaitWithin(t, w, 8*time.Second, "both dead", func(s *model.Snapshot) bool {
				return nodeIs("a", model.StateDead, "", false)(s) && nodeIs("b", model.StateDead, "", false)(s)
			})
		})
	}
}
