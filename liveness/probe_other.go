//go:build !unix

package liveness

import (
	"math"

	"github.com/shirou/gopsutil/v4/process"
)

// PidExists asks gopsutil where there is no kill(2).
func (SystemProbe) PidExists(pid int) (bool, error) {
	if pid <= 0 || pid > math.MaxInt32 {
		return false, nil
	}
	return process.PidExists(int32(pid))
}
