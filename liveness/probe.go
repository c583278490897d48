package liveness

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/process"
)

// cacheBootTime turns on gopsutil's boot-time cache once: without it every
// create-time lookup re-reads /proc/stat, half the cost of probing a pid
// (a 10,000-node snapshot spent about 120 ms there), and boot time does not
// change while we run.
var cacheBootTime sync.Once

// bootSeconds is the boot time as gopsutil computes it (from /proc/stat, or
// from the uptime inside containers), read once: create times are read
// against the same instant the heartbeat writers' gopsutil used.
var bootSeconds = sync.OnceValues(host.BootTime)

// SystemProbe asks the operating system: on Linux it reads /proc/<pid>/stat
// itself, elsewhere (and where that read fails oddly) through gopsutil. The
// zero value is ready to use.
type SystemProbe struct{}

// Lookup reports whether pid exists and when it was created. A pid that is
// not positive (or does not fit a pid_t) never exists. When the pid exists
// but its create time cannot be read, CreateTimeErr says why: such a pid is
// treated as alive, because a process that cannot be proven gone is not
// declared dead.
func (SystemProbe) Lookup(pid int) ProcessInfo {
	if pid <= 0 || pid > math.MaxInt32 {
		return ProcessInfo{}
	}
	if runtime.GOOS == "linux" {
		if info, ok := procStatLookup(pid); ok {
			return info
		}
	}
	cacheBootTime.Do(func() { process.EnableBootTimeCache(true) })
	p, err := process.NewProcess(int32(pid))
	if errors.Is(err, process.ErrorProcessNotRunning) {
		return ProcessInfo{}
	}
	if err != nil {
		// Existence itself could not be checked: unverified, not gone.
		return ProcessInfo{Exists: true, CreateTimeErr: fmt.Errorf("look up pid %d: %w", pid, err)}
	}
	ms, err := p.CreateTime()
	if err != nil {
		// The process may have exited between the two questions.
		if exists, perr := process.PidExists(int32(pid)); perr == nil && !exists {
			return ProcessInfo{}
		}
		return ProcessInfo{Exists: true, CreateTimeErr: fmt.Errorf("create time of pid %d: %w", pid, err)}
	}
	return ProcessInfo{Exists: true, CreateTime: time.UnixMilli(ms)}
}

// userHZ is the unit of /proc/<pid>/stat's start time: USER_HZ, which the
// kernel fixes at 100 for user space on every architecture Go runs on.
const userHZ = 100

// procStatLookup answers Lookup from /proc/<pid>/stat: one open and one
// read, where gopsutil's lookup costs several (and parses every field): the
// live engine re-reads thousands of create times a minute. The create time
// is computed as gopsutil computes it (start ticks past the boot, in
// milliseconds), so both agree to the millisecond. ok is false when the
// file could not be used for another reason than the process being gone.
func procStatLookup(pid int) (ProcessInfo, bool) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	f, err := os.Open(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return ProcessInfo{}, false
		}
		// Gone, unless /proc hides it (hidepid): the kernel knows.
		if exists, kerr := (SystemProbe{}).PidExists(pid); kerr == nil && exists {
			return ProcessInfo{Exists: true, CreateTimeErr: fmt.Errorf("create time of pid %d: %s is not visible", pid, path)}, true
		}
		return ProcessInfo{}, true
	}
	defer f.Close()
	var buf [1024]byte
	n, err := f.Read(buf[:])
	if err != nil || n == 0 {
		// ESRCH, or empty: the process ended after the open.
		return ProcessInfo{}, true
	}
	if hasExited(buf[:n]) {
		return ProcessInfo{}, true
	}
	ticks, err := startTicks(buf[:n])
	if err != nil {
		return ProcessInfo{}, false
	}
	boot, err := bootSeconds()
	if err != nil || boot == 0 {
		return ProcessInfo{}, false
	}
	ms := ticks*1000/userHZ + boot*1000
	return ProcessInfo{Exists: true, CreateTime: time.UnixMilli(int64(ms))}, true
}

// hasExited reports whether a /proc/<pid>/stat line is of a process that has
// exited and waits to be reaped (state Z, zombie, or X, dead): it holds its
// pid, so the pid cannot be reused, but it will never beat again — an agent
// killed under a frozen wrapper is gone, not alive (SPEC §3 "dead").
func hasExited(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	state := stat[i+2]
	return state == 'Z' || state == 'X'
}

// startTicks takes field 22 (starttime, in clock ticks after the boot) from
// a /proc/<pid>/stat line. The command name (field 2) is in parentheses and
// may hold spaces and parentheses itself: fields are counted after the last
// ')'.
func startTicks(stat []byte) (uint64, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("parse %q: no command name", stat)
	}
	rest := stat[i+1:]
	const field = 22 - 3 // fields after the name start at 3 (state)
	for k := 0; k < field; k++ {
		rest = bytes.TrimLeft(rest, " ")
		j := bytes.IndexByte(rest, ' ')
		if j < 0 {
			return 0, fmt.Errorf("parse stat: %d fields after the name, want at least %d", k, field+1)
		}
		rest = rest[j:]
	}
	rest = bytes.TrimLeft(rest, " ")
	if j := bytes.IndexAny(rest, " \n"); j >= 0 {
		rest = rest[:j]
	}
	v, err := strconv.ParseUint(string(rest), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse stat start time: %w", err)
	}
	return v, nil
}

// BootTime is the host's last boot, or zero when it cannot be read (a
// build for tests may simulate it: simulatedBoot, boot.go).
func (SystemProbe) BootTime() time.Time {
	if at, ok := simulated(); ok {
		return at
	}
	sec, err := host.BootTime()
	if err != nil || sec == 0 {
		return time.Time{}
	}
	return time.Unix(int64(sec), 0)
}

// CachingProbe answers from a per-pid cache and asks the wrapped probe as
// little as the rules allow. The live engine re-classifies every second, and
// a full lookup (existence and create time) costs microseconds: for 10,000
// distinct pids every tick that alone would take several percent of a core.
// An entry holds the pid's process as last seen, create time included (the
// verdict, same process or reused, is Verify's, per heartbeat). So:
//
//   - within the TTL (a tick or two) the cached answer is returned as is;
//   - past the TTL, when the wrapped probe is a ProcessPinner that pinned
//     the process at its lookup, the pin answers: while that very process
//     runs, nothing is asked and nothing re-read, and a pid reused by
//     another process cannot pass for it;
//   - otherwise a pid whose create time is known, or that is known gone,
//     is only re-checked for existence, when the wrapped probe is an
//     ExistenceChecker (SystemProbe is: one signal-0 syscall). Death is
//     noticed within a TTL, which keeps SPEC's exit-grace fast path fast; a
//     gone pid that exists again is a new process and gets a full lookup;
//   - and the create time is re-read (a full lookup) once per re-verify
//     period, 15 to 30 s spread by pid so the lookups do not all fall on one
//     tick: a pid that died and was reused between two existence checks
//     (the kernel would have to cycle through every pid within a TTL) is
//     noticed that much later.
//
// Actions never trust this cache: kill re-verifies the pid itself. It is
// safe for concurrent use.
type CachingProbe struct {
	probe    Probe
	checker  ExistenceChecker // nil when the wrapped probe is not one
	pinner   ProcessPinner    // nil when the wrapped probe is not one
	ttl      time.Duration
	reverify time.Duration
	now      func() time.Time

	mu        sync.Mutex
	entries   map[int]cachedLookup
	lastSweep time.Time
	boot      time.Time
	bootRead  bool
}

// ExistenceChecker is implemented by a probe that can tell whether a pid
// exists much more cheaply than a full Lookup.
type ExistenceChecker interface {
	PidExists(pid int) (bool, error)
}

// ProcessPinner is implemented by a probe that holds on to the process each
// Lookup found alive (a Linux pidfd) and can tell, without asking the
// system, whether that very process still runs: a pid taken over by
// another process can never read as the pinned one.
type ProcessPinner interface {
	// StillRunning reports whether the process pinned for pid at its last
	// Lookup still runs; pinned is false when none is. An exit is reported
	// once, then the pin is gone.
	StillRunning(pid int) (running, pinned bool)
}

// ProcessPins is what the watcher's tick needs of the processes the probe
// pinned (pins_linux.go): which pids it follows, and which pinned
// processes exited.
type ProcessPins interface {
	// Follow says the engine follows pid; false when it has no pin.
	Follow(pid int) bool
	// Forget lets go of a pid no longer followed.
	Forget(pid int)
	// Exits lists the pids whose pinned process exited since the last call.
	Exits() []int
}

// DefaultReverify is how long a create time read by CachingProbe is trusted
// while its pid keeps existing (at most; each pid gets 50-100 % of it).
const DefaultReverify = 30 * time.Second

type cachedLookup struct {
	info     ProcessInfo
	at       time.Time // when the answer was last confirmed (either way)
	verified time.Time // when the create time was last read
}

// NewCachingProbe wraps probe (nil means SystemProbe) with a cache of ttl
// and create times re-read within DefaultReverify.
func NewCachingProbe(probe Probe, ttl time.Duration) *CachingProbe {
	return newCachingProbe(probe, ttl, DefaultReverify, time.Now)
}

func newCachingProbe(probe Probe, ttl, reverify time.Duration, now func() time.Time) *CachingProbe {
	if probe == nil {
		probe = SystemProbe{}
	}
	checker, _ := probe.(ExistenceChecker)
	pinner, _ := probe.(ProcessPinner)
	return &CachingProbe{probe: probe, checker: checker, pinner: pinner, ttl: ttl, reverify: max(reverify, ttl), now: now,
		entries: map[int]cachedLookup{}}
}

// Lookup answers from the cache, an existence check or a full lookup, as
// the type's doc says. The wrapped probe is asked outside the lock, so one
// slow lookup does not hold up the others; two concurrent misses on one pid
// may both ask.
func (c *CachingProbe) Lookup(pid int) ProcessInfo {
	now := c.now()
	c.mu.Lock()
	e, cached := c.entries[pid]
	c.mu.Unlock()
	if cached && now.Sub(e.at) < c.ttl {
		return e.info
	}
	if cached {
		if info, ok := c.fromPin(pid, e, now); ok {
			return info
		}
		if info, ok := c.fromCheck(pid, e, now); ok {
			return info
		}
	}
	info := c.probe.Lookup(pid)
	c.store(pid, cachedLookup{info: info, at: now, verified: now}, now)
	return info
}

// fromPin answers for a cached pid whose process is pinned: the very
// process whose create time is held, or, when it exited, a full lookup.
// ok is false when the pid is not pinned (or its entry not verified).
func (c *CachingProbe) fromPin(pid int, e cachedLookup, now time.Time) (ProcessInfo, bool) {
	if c.pinner == nil || !e.info.Exists || e.info.CreateTimeErr != nil {
		return ProcessInfo{}, false
	}
	running, pinned := c.pinner.StillRunning(pid)
	switch {
	case pinned && running:
		// The very process whose create time is held: nothing to re-read.
		e.at, e.verified = now, now
		c.store(pid, e, now)
		return e.info, true
	case pinned:
		// The pinned process exited. Only a full lookup tells a zombie
		// (exited, not reaped: gone) from a live process; signal 0 still
		// finds it.
		info := c.probe.Lookup(pid)
		c.store(pid, cachedLookup{info: info, at: now, verified: now}, now)
		return info, true
	}
	return ProcessInfo{}, false // not pinned: ask as usual
}

// fromCheck answers for a cached pid by the cheap question (does the pid
// exist?) where that settles it; ok is false when it does not: the check
// failed, or a gone pid exists again (a new process, whose create time is
// read).
func (c *CachingProbe) fromCheck(pid int, e cachedLookup, now time.Time) (ProcessInfo, bool) {
	if c.checker == nil || !c.checkable(e, pid, now) {
		return ProcessInfo{}, false
	}
	exists, err := c.checker.PidExists(pid)
	switch {
	case err != nil:
		return ProcessInfo{}, false
	case exists == e.info.Exists:
		e.at = now
		c.store(pid, e, now)
		return e.info, true
	case !exists:
		e = cachedLookup{at: now, verified: now}
		c.store(pid, e, now)
		return e.info, true
	}
	return ProcessInfo{}, false
}

// checkable reports whether an expired entry may be renewed by an existence
// check: a pid known gone, or one whose create time was read within its
// re-verify period.
func (c *CachingProbe) checkable(e cachedLookup, pid int, now time.Time) bool {
	if !e.info.Exists {
		return true
	}
	return e.info.CreateTimeErr == nil && !e.info.CreateTime.IsZero() && now.Sub(e.verified) < c.reverifyFor(pid)
}

// reverifyFor spreads the re-verify period over 50-100 % of its length by
// pid, so that create times read on the same tick are not all re-read on
// the same later tick.
func (c *CachingProbe) reverifyFor(pid int) time.Duration {
	const buckets = 997
	b := pid % buckets
	if b < 0 {
		b = -b
	}
	return c.reverify/2 + c.reverify/2*time.Duration(b)/buckets
}

func (c *CachingProbe) store(pid int, e cachedLookup, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[pid] = e
	// Drop pids nobody asked about for a whole re-verify period, once per
	// period, so pids of long-gone nodes do not accumulate; but not one whose
	// pinned process runs: its answer holds without asking, and a caller
	// may rely on that (the pinner lets go of what is not followed).
	if now.Sub(c.lastSweep) >= c.reverify {
		for p, old := range c.entries {
			if now.Sub(old.at) < c.reverify {
				continue
			}
			if c.pinner != nil && old.info.Exists {
				if running, pinned := c.pinner.StillRunning(p); pinned && running {
					old.at, old.verified = now, now
					c.entries[p] = old
					continue
				}
			}
			delete(c.entries, p)
		}
		c.lastSweep = now
	}
}

// BootTime is the wrapped probe's boot time, read once (the host does not
// reboot under a running process); zero when the wrapped probe has none.
func (c *CachingProbe) BootTime() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.bootRead {
		if bt, ok := c.probe.(BootTimer); ok {
			c.boot = bt.BootTime()
		}
		c.bootRead = true
	}
	return c.boot
}

// Len is the number of pids cached, expired ones included until the next
// sweep.
func (c *CachingProbe) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// ParentReader is implemented by a probe that can tell a process's parent:
// the live engine records it as the owner of a per-turn pid (SPEC §3 idle).
type ParentReader interface {
	// Parent is the pid of pid's parent; an error when pid is gone or its
	// parent cannot be read.
	Parent(pid int) (int, error)
}

// Parent reads field 4 (ppid) of /proc/<pid>/stat on Linux, else asks
// gopsutil.
func (SystemProbe) Parent(pid int) (int, error) {
	if pid <= 0 || pid > math.MaxInt32 {
		return 0, fmt.Errorf("parent of pid %d: no such process", pid)
	}
	if runtime.GOOS == "linux" {
		path := "/proc/" + strconv.Itoa(pid) + "/stat"
		b, err := os.ReadFile(path)
		if err != nil {
			return 0, fmt.Errorf("parent of pid %d: %w", pid, err)
		}
		return parentField(b)
	}
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return 0, fmt.Errorf("parent of pid %d: %w", pid, err)
	}
	ppid, err := p.Ppid()
	if err != nil {
		return 0, fmt.Errorf("parent of pid %d: %w", pid, err)
	}
	return int(ppid), nil
}

// parentField takes field 4 (ppid) from a /proc/<pid>/stat line, counted
// after the command name's last ')' as startTicks counts.
func parentField(stat []byte) (int, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("parse %q: no command name", stat)
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 2 {
		return 0, fmt.Errorf("parse stat: %d fields after the name, want the ppid", len(f))
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return 0, fmt.Errorf("parse stat ppid: %w", err)
	}
	return ppid, nil
}

// NeverSignalled is SignalGuard's: pid 1 and below, this process and its
// ancestors.
func (SystemProbe) NeverSignalled(pid int) bool {
	return pid <= 1 || selfAndAncestors()[pid]
}

// selfAndAncestors is this process and every ancestor, read once: a later
// re-parenting only moves it under pid 1 or a subreaper that was already an
// ancestor.
var selfAndAncestors = sync.OnceValue(func() map[int]bool {
	pid := os.Getpid()
	out := map[int]bool{pid: true}
	for i := 0; i < 1024 && pid > 1; i++ {
		ppid, err := SystemProbe{}.Parent(pid)
		if err != nil {
			break
		}
		pid = ppid
		out[pid] = true
	}
	return out
})

// NeverSignalled is the wrapped probe's (pid 1 and below without one).
func (c *CachingProbe) NeverSignalled(pid int) bool {
	return neverSignalledBy(c.probe, pid)
}

// Parent is the wrapped probe's, never cached: it is read once a pid.
func (c *CachingProbe) Parent(pid int) (int, error) {
	if pr, ok := c.probe.(ParentReader); ok {
		return pr.Parent(pid)
	}
	return 0, fmt.Errorf("parent of pid %d: the probe cannot read parents", pid)
}
