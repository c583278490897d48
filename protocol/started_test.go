package protocol

import (
	"os/exec"
	"testing"
	"time"
)

func TestProcessStartedIsTheCreateTime(t *testing.T) {
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	launched := time.Now()
	started, err := ProcessStarted(sleep.Process.Pid)
	sleep.Process.Kill()
	sleep.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if d := float64(launched.UnixNano())/1e9 - started; d > 2 || d < -2 {
		t.Errorf("started %.3f is %.3fs away from the launch", started, d)
	}
	if _, err := ProcessStarted(sleep.Process.Pid); err == nil {
		t.Errorf("a reaped pid %d should have no create time", sleep.Process.Pid)
	}
}
