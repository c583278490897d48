//go:build linux

package liveness

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func newTestPins(t *testing.T) *pidPins {
	t.Helper()
	pins, err := newPidPins(SystemProbe{})
	if err != nil {
		t.Skipf("no pidfds here: %v", err)
	}
	t.Cleanup(pins.close)
	return pins
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// awaitExit polls StillRunning (as ticks do) until the pin reports the exit.
func awaitExit(t *testing.T, pins *pidPins, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		running, pinned := pins.StillRunning(pid)
		if !running && pinned {
			break
		}
		if !pinned {
			t.Fatalf("pid %d lost its pin without an exit reported", pid)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exit of pid %d was never reported", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, pinned := pins.StillRunning(pid); pinned {
		t.Errorf("pid %d still pinned after its exit was reported", pid)
	}
}

// A process looked up is pinned; its exit is reported once, whether it is
// reaped or left a zombie; what is not running when looked up is not pinned.
func TestPidPins(t *testing.T) {
	pins := newTestPins(t)
	fds := openFDs(t)

	pid, stop := startSleep(t)
	if info := pins.Lookup(pid); !info.Exists || info.CreateTime.IsZero() {
		t.Fatalf("Lookup(%d) = %+v", pid, info)
	}
	if running, pinned := pins.StillRunning(pid); !running || !pinned {
		t.Fatalf("live sleep: running %v, pinned %v", running, pinned)
	}
	if exists, err := pins.PidExists(pid); !exists || err != nil {
		t.Errorf("PidExists(%d) = %v, %v", pid, exists, err)
	}
	stop()
	awaitExit(t, pins, pid)

	// Exited, not reaped: the pin fires though the pid still exists.
	zombie := exec.Command("sleep", "60")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = zombie.Wait() })
	pins.Lookup(zombie.Process.Pid)
	_ = zombie.Process.Kill()
	awaitExit(t, pins, zombie.Process.Pid)
	if info := pins.Lookup(zombie.Process.Pid); info.Exists {
		t.Errorf("zombie: %+v, want gone: it exited and will never beat again", info)
	}
	if _, pinned := pins.StillRunning(zombie.Process.Pid); pinned {
		t.Error("a zombie was pinned")
	}
	_ = zombie.Wait()

	if info := pins.Lookup(pid); info.Exists {
		t.Errorf("reaped pid %d: %+v", pid, info)
	}
	if _, pinned := pins.StillRunning(pid); pinned {
		t.Error("a gone pid was pinned")
	}
	if got := openFDs(t); got != fds {
		t.Errorf("%d descriptors open, %d before: pins of ended processes leak", got, fds)
	}
}

// Pins stop at the limit (half the descriptors a process may open), and
// closing them all gives every descriptor back.
func TestPidPinsLimitAndClose(t *testing.T) {
	var pids []int
	for range 3 {
		pid, _ := startSleep(t)
		pids = append(pids, pid)
	}
	fds := openFDs(t) // os/exec holds a descriptor per child too
	pins, err := newPidPins(SystemProbe{})
	if err != nil {
		t.Skipf("no pidfds here: %v", err)
	}
	pins.limit = 2
	for _, pid := range pids {
		pins.Lookup(pid)
	}
	for i, pid := range pids {
		if _, pinned := pins.StillRunning(pid); pinned != (i < 2) {
			t.Errorf("process %d of 3 pinned %v; the limit is 2", i+1, pinned)
		}
	}
	pins.close()
	if got := openFDs(t); got != fds {
		t.Errorf("%d descriptors open after close, %d before", got, fds)
	}
}

// The engine follows some pins and learns of their processes' exits from
// Exits, once each; a pin it does not follow (a process looked up for a
// node that turned out dead) is let go after a while, one it forgets at
// once.
func TestPidPinsFollowForgetExits(t *testing.T) {
	pins := newTestPins(t)
	followed, stopFollowed := startSleep(t)
	forgotten, _ := startSleep(t)
	unfollowed, _ := startSleep(t)
	for _, pid := range []int{followed, forgotten, unfollowed} {
		pins.Lookup(pid)
	}
	if !pins.Follow(followed) || !pins.Follow(forgotten) {
		t.Fatal("follow of a pinned pid failed")
	}
	if pins.Follow(4 << 20) {
		t.Error("follow of a pid never looked up succeeded")
	}
	pins.Forget(forgotten)
	if _, pinned := pins.StillRunning(forgotten); pinned {
		t.Error("a forgotten pid is still pinned")
	}

	stopFollowed()
	var got []int
	for deadline := time.Now().Add(10 * time.Second); len(got) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the followed process's exit was never listed")
		}
		time.Sleep(20 * time.Millisecond)
		got = pins.Exits()
	}
	if len(got) != 1 || got[0] != followed {
		t.Errorf("exits %v, want [%d]", got, followed)
	}
	time.Sleep(2 * takeExitsEvery)
	if again := pins.Exits(); len(again) != 0 {
		t.Errorf("exits listed again: %v", again)
	}

	clock := time.Now()
	pins.mu.Lock()
	pins.now = func() time.Time { return clock }
	pins.mu.Unlock()
	clock = clock.Add(2 * pinIdle)
	pins.Exits() // a tick: takes exits, and sweeps
	if _, pinned := pins.StillRunning(unfollowed); pinned {
		t.Error("a pin never followed was kept past its idle period")
	}
}

// BenchmarkProbeTick: what asking about a pid past the cache's TTL costs
// (SPEC §8 idle CPU), over 500 real processes: the system probe's signal 0,
// or a pin's answer (one epoll check for all of them). One op asks about
// each pid once; µs/pid/tick is per pid. A classification pays this; the
// watcher's tick itself skips pinned pids altogether (scanner's
// BenchmarkWatchIdle), and the create times' periodic re-reading, which
// pins make unneeded, is not in this figure (BenchmarkCachingProbeTick).
func BenchmarkProbeTick(b *testing.B) {
	pids := startSleeps(b, 500)
	pinned, _, release := PinProcesses(SystemProbe{})
	defer release()
	for _, bc := range []struct {
		name  string
		probe Probe
	}{{"probe=system", SystemProbe{}}, {"probe=pinned", pinned}} {
		b.Run(bc.name, func(b *testing.B) {
			probe := NewCachingProbe(bc.probe, 0) // every answer expired, as a tick later
			for _, pid := range pids {
				probe.Lookup(pid)
			}
			b.ResetTimer()
			for b.Loop() {
				for _, pid := range pids {
					if !probe.Lookup(pid).Exists {
						b.Fatalf("live sleep %d reads as gone", pid)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(pids))/1000, "µs/pid/tick")
		})
	}
}

// An agent killed under a frozen wrapper stays a zombie until the wrapper
// reaps it. The live engine's probe (a cache over pins) must call it gone
// once its pin reports the exit, not keep the answer signal 0 gives for a
// zombie until the next re-verify, half a minute later.
func TestCachingProbeOverPinsCallsAZombieGone(t *testing.T) {
	probe, _, release := PinProcesses(SystemProbe{})
	t.Cleanup(release)
	c := NewCachingProbe(probe, time.Millisecond)
	zombie := exec.Command("sleep", "60")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = zombie.Wait() })
	pid := zombie.Process.Pid
	if info := c.Lookup(pid); !info.Exists {
		t.Fatalf("live sleep %d: %+v", pid, info)
	}
	_ = zombie.Process.Kill() // not reaped: a zombie until the cleanup
	for deadline := time.Now().Add(5 * time.Second); c.Lookup(pid).Exists; {
		if time.Now().After(deadline) {
			t.Fatalf("zombie %d still alive to the caching probe after 5 s", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
