//go:build unix

package liveness

import (
	"errors"
	"fmt"
	"math"
	"syscall"
)

// PidExists asks the kernel with signal 0, which delivers nothing: no error
// or EPERM (another user's process) means the pid exists, ESRCH that it
// does not. A zombie still exists for signal 0; Lookup, which reads its
// state, calls it gone.
func (SystemProbe) PidExists(pid int) (bool, error) {
	if pid <= 0 || pid > math.MaxInt32 {
		// 0 and negative pids name process groups for kill(2): never ask.
		return false, nil
	}
	err := syscall.Kill(pid, 0)
	switch {
	case err == nil, errors.Is(err, syscall.EPERM):
		return true, nil
	case errors.Is(err, syscall.ESRCH):
		return false, nil
	}
	return false, fmt.Errorf("signal 0 to pid %d: %w", pid, err)
}
