//go:build !linux

package actions

// Without pidfds a process is held by its pid alone: kill re-verifies its
// create time before each signal, and a pid reused in the instant between
// that check and kill(2) is the one risk left (SPEC §5.1).

import "syscall"

// held is a process known by its pid only.
type held struct{}

// hold pins nothing here; gone is never known in advance.
func hold(int) (h held, gone bool) { return held{}, false }

// pinned is false: only the pid is held.
func (held) pinned() bool { return false }

// exited is never known without a pin.
func (held) exited() bool { return false }

// signal sends sig to pid.
func (held) signal(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// release has nothing to let go.
func (held) release() {}
