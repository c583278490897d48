package actions

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/model"
)

// lastPidFile is where Linux takes the pid it gave last; writing it (root,
// or CAP_SYS_ADMIN) makes the next fork get the one after.
const lastPidFile = "/proc/sys/kernel/ns_last_pid"

// sleepAtPid starts a `sleep` that gets pid, now free, or returns nil when
// this host will not hand that pid out on demand (not Linux, not root, or
// other forks kept taking it first).
func sleepAtPid(t *testing.T, pid int) *exec.Cmd {
	t.Helper()
	if runtime.GOOS != "linux" {
		return nil
	}
	for range 200 {
		if err := os.WriteFile(lastPidFile, []byte(strconv.Itoa(pid-1)), 0); err != nil {
			return nil
		}
		c := exec.Command("sleep", "300")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		if c.Process.Pid == pid {
			done := make(chan struct{})
			go func() { _ = c.Wait(); close(done) }()
			t.Cleanup(func() { _ = c.Process.Kill(); <-done })
			return c
		}
		_ = c.Process.Kill()
		_ = c.Wait()
	}
	return nil
}

// SPEC §5.1: kill signals the process whose identity it checked, never a
// pid. Between the last re-check and the signal, the process exits — and,
// where this host lets a test choose a pid, an innocent `sleep` takes its
// pid. The signal reaches the exited process (nothing) and never the
// innocent one; the kill is done, the agent being gone.
func TestKillSignalsTheProcessItVerifiedNotItsPid(t *testing.T) {
	for _, handOver := range []bool{false, true} {
		name := "the process exits before the signal"
		if handOver {
			name = "its pid changes hands before the signal"
		}
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			agent := exec.Command("sleep", "300")
			if err := agent.Start(); err != nil {
				t.Fatal(err)
			}
			reaped := make(chan struct{})
			go func() { _ = agent.Wait(); close(reaped) }()
			t.Cleanup(func() { _ = agent.Process.Kill(); <-reaped })
			pid := agent.Process.Pid
			writeNode(t, root, nodeSpec{dir: "s", pid: pid, started: testproc.Started(t, pid), status: "running"})

			e := testEngine(root, model.Thresholds{}, Config{})
			var innocent *exec.Cmd
			reached := false
			e.hook = func(step string) error {
				if step != fmt.Sprintf("kill:signal TERM %d", pid) {
					return nil
				}
				reached = true
				_ = agent.Process.Signal(syscall.SIGKILL)
				<-reaped // the pid is free
				if handOver {
					if innocent = sleepAtPid(t, pid); innocent == nil {
						return nil
					}
				}
				return nil
			}
			res, err := e.Run(context.Background(), Request{Action: model.ActionKill, Node: "s", Grace: time.Second})
			if !reached {
				t.Fatalf("no step between the last re-check and the signal (%s: %s)", res.Outcome, res.Message)
			}
			if handOver && innocent == nil {
				t.Skip("this host will not hand out a chosen pid (needs root on Linux): the exit case stands for it")
			}
			if err != nil || res.Outcome != OutcomeDone {
				t.Errorf("kill: %s: %s (%v), want done: the agent is gone", res.Outcome, res.Message, err)
			}
			if innocent != nil && !processAlive(innocent.Process.Pid) {
				t.Errorf("pid %d, now an innocent sleep, was signalled", pid)
			}
		})
	}
}
