package liveness

// API agreed between packages while they are being built (owner: liveness).
// Implementations live in classify.go and probe.go.

import (
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// ProcessInfo is what the operating system says about a pid.
type ProcessInfo struct {
	Exists bool
	// CreateTime is the process's create time; zero when unreadable.
	CreateTime time.Time
	// CreateTimeErr is set when the process exists but its create time could
	// not be read (EPERM): the pid is then treated as alive (pid_unverified).
	CreateTimeErr error
}

// Probe looks up processes. SystemProbe is the real one; tests inject fakes.
type Probe interface {
	Lookup(pid int) ProcessInfo
}
