//go:build linux

package liveness

// Pinning the processes the live engine follows (ProcessPinner):
// a pidfd refers to one process, never to whatever later takes its pid,
// and becomes readable when that process exits. One epoll set over all of
// them tells every tick which exited, with a single syscall however many
// processes are followed: the tick asks nothing about the others (no
// signal 0 per pid), and their create times need no re-reading against
// pid reuse.

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// pinIdle is how long a pin the engine does not follow (a process looked up
// for a node that turned out dead) is kept, at least (at most twice that).
const pinIdle = time.Minute

// takeExitsEvery spaces the epoll checks: a tick asks about every pid
// within milliseconds, and one check serves them all.
const takeExitsEvery = 50 * time.Millisecond

// pidPins wraps the system probe: each Lookup that finds a process running
// keeps a pidfd on it, up to a limit of half the descriptors the process
// may open, so that files can still be read.
type pidPins struct {
	base    Probe
	checker ExistenceChecker
	now     func() time.Time

	mu        sync.Mutex
	epfd      int
	byPid     map[int]*pidPin
	pidOf     map[int32]int // pidfd -> pid
	limit     int
	events    []unix.EpollEvent
	exitLog   []int // pids whose pinned process exited, for Exits
	lastTaken time.Time
	lastSweep time.Time
}

type pidPin struct {
	fd       int
	exited   bool
	followed bool      // the engine follows it: kept until Forget
	made     time.Time // when it was pinned
}

// newPidPins wraps base (the system probe), or fails where pidfds are not
// available (kernels before 5.3).
func newPidPins(base Probe) (*pidPins, error) {
	fd, err := unix.PidfdOpen(unix.Getpid(), 0)
	if err != nil {
		return nil, err
	}
	_ = unix.Close(fd)
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	limit := 1024
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil {
		limit = int(min(rl.Cur/2, 1<<20))
	}
	checker, _ := base.(ExistenceChecker)
	return &pidPins{base: base, checker: checker, now: time.Now, epfd: epfd, byPid: map[int]*pidPin{},
		pidOf: map[int32]int{}, limit: limit, events: make([]unix.EpollEvent, 256)}, nil
}

// Lookup asks the wrapped probe and pins the process it found running. The
// pidfd is opened first: if the process it refers to is still running
// after the lookup, the create time read is that process's own (a pid is
// not reused before its process ends).
func (p *pidPins) Lookup(pid int) ProcessInfo {
	fd, err := unix.PidfdOpen(pid, 0)
	info := p.base.Lookup(pid)
	if err != nil {
		return info // gone, not a process leader, or out of descriptors
	}
	if !info.Exists || info.CreateTimeErr != nil || exited(fd) {
		_ = unix.Close(fd)
		return info
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	followed := p.byPid[pid] != nil && p.byPid[pid].followed // a pid reused under a node
	p.unpin(pid)
	if len(p.byPid) >= p.limit {
		_ = unix.Close(fd)
		return info
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		_ = unix.Close(fd)
		return info
	}
	p.byPid[pid] = &pidPin{fd: fd, followed: followed, made: p.now()}
	p.pidOf[int32(fd)] = pid
	return info
}

// StillRunning is ProcessPinner's: it first takes the exits the
// epoll set has seen since it was last asked.
func (p *pidPins) StillRunning(pid int) (running, pinned bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.takeExits()
	pin := p.byPid[pid]
	if pin == nil {
		return false, false
	}
	if pin.exited {
		delete(p.byPid, pid)
		return false, true
	}
	return true, true
}

// Follow marks pid's pin as followed by the engine, which from then on
// learns of its exit from Exits instead of asking each tick; false when
// pid has no pin (the limit, a zombie, an unreadable create time): the
// engine asks about it as before.
func (p *pidPins) Follow(pid int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	pin := p.byPid[pid]
	if pin == nil || pin.exited {
		return false
	}
	pin.followed = true
	return true
}

// Forget releases the pin of a pid the engine no longer follows.
func (p *pidPins) Forget(pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.unpin(pid)
}

// Exits lists the pids whose pinned process exited since the last call.
func (p *pidPins) Exits() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.takeExits()
	out := p.exitLog
	p.exitLog = nil
	return out
}

// PidExists is the wrapped probe's (a zombie exists, as without pins).
func (p *pidPins) PidExists(pid int) (bool, error) {
	if p.checker == nil {
		return p.base.Lookup(pid).Exists, nil
	}
	return p.checker.PidExists(pid)
}

// BootTime is the wrapped probe's, for the legacy rule.
func (p *pidPins) BootTime() time.Time {
	if bt, ok := p.base.(BootTimer); ok {
		return bt.BootTime()
	}
	return time.Time{}
}

// takeExits marks the pins whose process exited (their pidfds are closed
// at once) and, now and then, releases the pins the engine did not follow.
func (p *pidPins) takeExits() {
	now := p.now()
	if now.Sub(p.lastTaken) < takeExitsEvery && !now.Before(p.lastTaken) {
		return
	}
	p.lastTaken = now
	for {
		n, err := unix.EpollWait(p.epfd, p.events, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		for _, ev := range p.events[:max(n, 0)] {
			pid, ok := p.pidOf[ev.Fd]
			if !ok {
				continue
			}
			delete(p.pidOf, ev.Fd)
			_ = unix.Close(int(ev.Fd)) // also leaves the epoll set
			if pin := p.byPid[pid]; pin != nil && pin.fd == int(ev.Fd) {
				pin.exited, pin.fd = true, -1
				p.exitLog = append(p.exitLog, pid)
			}
		}
		if n < len(p.events) {
			break
		}
	}
	if now.Sub(p.lastSweep) >= pinIdle {
		for pid, pin := range p.byPid {
			if !pin.followed && now.Sub(pin.made) >= pinIdle {
				p.unpin(pid)
			}
		}
		p.lastSweep = now
	}
}

// unpin releases pid's pin, if any.
func (p *pidPins) unpin(pid int) {
	pin := p.byPid[pid]
	if pin == nil {
		return
	}
	if pin.fd >= 0 {
		delete(p.pidOf, int32(pin.fd))
		_ = unix.Close(pin.fd)
	}
	delete(p.byPid, pid)
}

// close releases every pin and the epoll set.
func (p *pidPins) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for pid := range p.byPid {
		p.unpin(pid)
	}
	if p.epfd >= 0 {
		_ = unix.Close(p.epfd)
		p.epfd = -1
	}
}

// exited reports whether the process a pidfd refers to has exited.
func exited(fd int) bool {
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(pfd, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err != nil || n > 0
	}
}

// PinProcesses is the probe the live engine uses for the system's
// processes, its pins and how to release them: pidfd pins where there are
// pidfds.
func PinProcesses(base Probe) (Probe, ProcessPins, func()) {
	pins, err := newPidPins(base)
	if err != nil {
		return base, nil, func() {}
	}
	return pins, pins, pins.close
}

// NeverSignalled is the wrapped probe's.
func (p *pidPins) NeverSignalled(pid int) bool { return neverSignalledBy(p.base, pid) }

// Parent is the wrapped probe's.
func (p *pidPins) Parent(pid int) (int, error) {
	if pr, ok := p.base.(ParentReader); ok {
		return pr.Parent(pid)
	}
	return 0, fmt.Errorf("parent of pid %d: the probe cannot read parents", pid)
}
