package testproc

import (
	"math"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// A live process's started is its real create time: after the boot, not
// after now; Before and Earlier stay after the boot.
func TestStartedIsRelativeToTheProcessAndTheBoot(t *testing.T) {
	pid, started := Live(t)
	if pid <= 0 {
		t.Fatalf("pid %d", pid)
	}
	now := float64(time.Now().UnixNano()) / 1e9
	boot := model.EpochSeconds(Boot(t))
	if started > now+1 || started < boot-1 {
		t.Fatalf("started %.3f: want between the boot %.3f and now %.3f", started, boot, now)
	}
	if got := Before(t, started, 5*time.Second); math.Abs(started-got-5) > 1e-6 {
		t.Errorf("Before 5s = %.3f, started %.3f", got, started)
	}
	e := Earlier(t, started, 2*time.Second)
	if e < boot || e > started-2 {
		t.Errorf("Earlier = %.3f: want between the boot %.3f and %.3f", e, boot, started-2)
	}
	if b := BeforeTheBoot(t, time.Hour); math.Abs(b-(boot-3600)) > 1e-6 {
		t.Errorf("BeforeTheBoot 1h = %.3f, boot %.3f", b, boot)
	}
	if len(BuildFlags()) != 1 {
		t.Errorf("BuildFlags() = %q", BuildFlags())
	}
}
