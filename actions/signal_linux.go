//go:build linux

package actions

// A process held by a pidfd: it refers to one process, never to whatever
// later takes its pid, so a signal sent through it reaches the process
// whose identity was checked, or none (SPEC §5.1).

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// held is a process pinned by a pidfd (ok), or by its pid alone where the
// kernel has no pidfds (before 5.3); the zero value holds nothing.
type held struct {
	fd int
	ok bool
}

// hold pins pid's process; gone is true when there is none.
func hold(pid int) (h held, gone bool) {
	fd, err := unix.PidfdOpen(pid, 0)
	switch {
	case err == nil:
		return held{fd: fd, ok: true}, false
	case errors.Is(err, unix.ESRCH):
		return held{}, true
	}
	return held{}, false // no pidfds here: by pid, re-verified before each signal
}

// pinned reports whether h holds the process itself, not only its pid.
func (h held) pinned() bool { return h.ok }

// exited reports whether the held process has exited (a zombie included).
func (h held) exited() bool {
	if !h.ok {
		return false
	}
	pfd := []unix.PollFd{{Fd: int32(h.fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(pfd, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err != nil || n > 0
	}
}

// signal sends sig to the held process (ESRCH once it has exited).
func (h held) signal(pid int, sig syscall.Signal) error {
	if !h.ok {
		return syscall.Kill(pid, sig)
	}
	return unix.PidfdSendSignal(h.fd, sig, nil, 0)
}

// release lets the process go.
func (h held) release() {
	if h.ok {
		_ = unix.Close(h.fd)
	}
}
