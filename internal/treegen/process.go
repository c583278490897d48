package treegen

import (
	"fmt"
	"os/exec"
	"sync"
	"testing"

	"github.com/dispatchtop/dispatchtop/protocol"
)

// StartProcesses starts n `sleep` processes for generated heartbeats to
// name (a fleet's many distinct live pids, which a probe pays for one by
// one) and stops them when tb ends. It starts them a few at a time in
// parallel; a couple of thousand take seconds, not minutes.
func StartProcesses(tb testing.TB, n int) []Process {
	tb.Helper()
	procs := make([]Process, n)
	cmds := make([]*exec.Cmd, n)
	tb.Cleanup(func() {
		for _, c := range cmds {
			if c != nil && c.Process != nil {
				_ = c.Process.Kill()
				_ = c.Wait()
			}
		}
	})
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				cmd := exec.Command("sleep", "86400")
				if err := cmd.Start(); err != nil {
					errs <- fmt.Errorf("start sleep %d of %d: %w", i+1, n, err)
					continue
				}
				cmds[i] = cmd
				started, err := protocol.ProcessStarted(cmd.Process.Pid)
				if err != nil {
					errs <- err
					continue
				}
				procs[i] = Process{PID: cmd.Process.Pid, Started: started}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		tb.Fatal(err)
	}
	return procs
}
