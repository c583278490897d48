package liveness

// The process probe: the one question classification asks the operating
// system. SystemProbe (probe.go) answers it with gopsutil; tests inject fakes.

import (
	"time"
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

// SignalGuard is implemented by a probe of this host's processes: besides
// pid 1 and below, which no record may have killed, it names the pids
// dispatchtop never signals — itself and its ancestors (SPEC §5.1) — so
// that such a record is never a kill candidate. A fake probe needs none.
type SignalGuard interface {
	NeverSignalled(pid int) bool
}

// BootTimer is implemented by a Probe that knows when the host last booted.
// Only the legacy `.running` rule needs it (a sentinel older than the boot
// is dead whatever its pid says); a probe without it skips that check. It is
// a separate interface so that a fake Probe needs only Lookup.
type BootTimer interface {
	// BootTime is the last boot; zero when unknown.
	BootTime() time.Time
}
