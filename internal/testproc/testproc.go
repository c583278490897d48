// Package testproc gives tests real processes and `started` values that
// are relative to a process's real start, never fixed offsets from the
// clock: a fixture written "an hour before now" predates the boot of a host
// that booted a minute ago (a fresh CI runner), and then means another rule.
//
// The boot a test sees is liveness.SystemProbe's, which a test build may
// simulate (`-ldflags=-X=github.com/dispatchtop/dispatchtop/liveness.simulatedBoot=1m`);
// BuildFlags hands the same boot to a binary the test builds and runs.
package testproc

import (
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// Live starts a process that lives until the test ends (`sleep 300`,
// killed and reaped at cleanup): its pid and its started, as a heartbeat
// writer records it.
func Live(t testing.TB) (pid int, started float64) {
	t.Helper()
	p := exec.Command("sleep", "300")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Process.Kill(); _ = p.Wait() })
	return p.Process.Pid, Started(t, p.Process.Pid)
}

// Gone is the pid of a process that has exited and been reaped.
func Gone(t testing.TB) int {
	t.Helper()
	p := exec.Command("true")
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	return p.Process.Pid
}

// Started is pid's create time in Unix seconds, as a heartbeat writer
// records it (protocol.ProcessStarted).
func Started(t testing.TB, pid int) float64 {
	t.Helper()
	s, err := protocol.ProcessStarted(pid)
	if err != nil {
		t.Fatalf("create time of pid %d: %v", pid, err)
	}
	return s
}

// Boot is the host's last boot as the probe sees it (simulated or real).
func Boot(t testing.TB) time.Time {
	t.Helper()
	b := liveness.SystemProbe{}.BootTime()
	if b.IsZero() {
		t.Fatal("the host's boot time cannot be read")
	}
	return b
}

// Before is a started that is d before started (a process's real start),
// for a record that names an earlier process than the one that has the pid
// now. It fails the test when that instant predates the boot: such a
// record means "another boot's process", a different rule; ask
// BeforeTheBoot for that.
func Before(t testing.TB, started float64, d time.Duration) float64 {
	t.Helper()
	at := started - d.Seconds()
	if boot := model.EpochSeconds(Boot(t)); at < boot {
		t.Fatalf("a started %v before %.3f predates the boot (%.3f): the host booted too recently for this fixture", d, started, boot)
	}
	return at
}

// Earlier is a started between the boot and started (a process's real
// start), as far from both as it can be but never more than an hour before
// started: a record of an earlier process of this boot, on a host booted an
// hour ago or a minute ago. It fails the test when the two are closer than
// need, the gap the fixture needs to mean "not this process".
func Earlier(t testing.TB, started float64, need time.Duration) float64 {
	t.Helper()
	boot := model.EpochSeconds(Boot(t))
	gap := min(started-boot, time.Hour.Seconds())
	if gap < 2*need.Seconds() {
		t.Fatalf("the process started %.1fs after the boot: too soon for a record %v before it", started-boot, need)
	}
	return started - gap/2
}

// BeforeTheBoot is a started d before the host's last boot: a record of
// another boot's process.
func BeforeTheBoot(t testing.TB, d time.Duration) float64 {
	t.Helper()
	return model.EpochSeconds(Boot(t)) - d.Seconds()
}

// BuildFlags are the `go build` flags that give a binary a test builds the
// boot this test sees, so that both judge a started against one instant
// (none when the boot cannot be read). For a TestMain: it takes no T.
func BuildFlags() []string {
	b := liveness.SystemProbe{}.BootTime()
	if b.IsZero() {
		return nil
	}
	return []string{"-ldflags=-X=github.com/dispatchtop/dispatchtop/liveness.simulatedBoot=" + strconv.FormatInt(b.Unix(), 10)}
}

// BootedAt is the system probe on a host that booted at boot: for a fixture
// that needs a beat older than a host booted a minute ago can have (a beat
// past kill_after, whose pid cannot be verified), the boot is part of the
// fixture. Every other question goes to the system.
func BootedAt(boot time.Time) liveness.Probe { return bootedAt{boot: boot} }

type bootedAt struct {
	liveness.SystemProbe
	boot time.Time
}

func (b bootedAt) BootTime() time.Time { return b.boot }
