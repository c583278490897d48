package protocol

import (
	"fmt"

	"github.com/shirou/gopsutil/v4/process"
)

// ErrProcessGone is ProcessStarted's error for a pid that names no
// process (errors.Is tells it from a create time that cannot be read).
var ErrProcessGone = process.ErrorProcessNotRunning

// ProcessStarted is a process's create time in float seconds since the
// epoch: the `started` a heartbeat carries for it (SPEC §1), read as the
// classifier's process probe reads create times, so both agree on the same
// process. Writers (wrap, the demo) stamp it; readers of stores that keep
// no start time (a tmux pane's agent) derive it the same way.
func ProcessStarted(pid int) (float64, error) {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, err)
	}
	ms, err := p.CreateTime()
	if err != nil {
		return 0, fmt.Errorf("process %d create time: %w", pid, err)
	}
	return float64(ms) / 1000, nil
}
