package liveness

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/process"

	"github.com/dispatchtop/dispatchtop/model"
)

// cacheBootTime turns on gopsutil's boot-time cache once: without it every
// create-time lookup re-reads /proc/stat, half the cost of probing a pid
// (a 10,000-node snapshot spent about 120 ms there), and boot time does not
// change while we run.
var cacheBootTime sync.Once

// SystemProbe asks the operating system through gopsutil. The zero value is
// ready to use.
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

// BootTime is the host's last boot, or zero when it cannot be read.
func (SystemProbe) BootTime() time.Time {
	sec, err := host.BootTime()
	if err != nil || sec == 0 {
		return time.Time{}
	}
	return time.Unix(int64(sec), 0)
}

// Verify compares what the probe found with the `started` a heartbeat
// carries:
//
//   - ProcessGone: no such pid.
//   - ProcessAlive: the pid exists and its create time is within tolerance
//     of started (the same process).
//   - ProcessReused: the pid exists but was created at another time.
//   - ProcessUnverified: the pid exists but the comparison cannot be made,
//     either because the create time is unreadable or because started is
//     zero (a writer that left it out). Both are treated as alive: without a
//     create time to compare, a reused pid cannot be told from the original,
//     and dispatchtop never declares dead what it cannot prove gone.
func Verify(info ProcessInfo, started time.Time, tolerance time.Duration) model.ProcessStatus {
	switch {
	case !info.Exists:
		return model.ProcessGone
	case info.CreateTimeErr != nil, info.CreateTime.IsZero(), started.IsZero():
		return model.ProcessUnverified
	}
	d := info.CreateTime.Sub(started)
	if d < 0 {
		d = -d
	}
	if d <= tolerance {
		return model.ProcessAlive
	}
	return model.ProcessReused
}

// CachingProbe answers from a per-pid cache and asks the wrapped probe as
// little as the rules allow. The live engine re-classifies every second, and
// a full lookup (existence and create time) costs tens of microseconds: for
// 10,000 nodes every tick that alone would take a fifth of a core. So:
//
//   - within the TTL (a tick or two) the cached answer is returned as is;
//   - past the TTL, a pid whose create time is known, or that is known gone,
//     is only re-checked for existence, when the wrapped probe is an
//     ExistenceChecker (SystemProbe is: one signal-0 syscall). Death is
//     noticed within a TTL, which keeps SPEC's exit-grace fast path fast; a
//     gone pid that exists again is a new process and gets a full lookup;
//   - the create time is re-read (a full lookup) once per re-verify period,
//     15 to 30 s spread by pid so the lookups do not all fall on one tick. A
//     pid reused within that period is noticed that much later; pid
//     wraparound takes minutes even under heavy load.
//
// Actions never trust this cache: kill re-verifies the pid itself. It is
// safe for concurrent use.
type CachingProbe struct {
	probe    Probe
	checker  ExistenceChecker // nil when the wrapped probe is not one
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
	return &CachingProbe{probe: probe, checker: checker, ttl: ttl, reverify: max(reverify, ttl), now: now, entries: map[int]cachedLookup{}}
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
	if cached && c.checker != nil && c.checkable(e, pid, now) {
		exists, err := c.checker.PidExists(pid)
		switch {
		case err != nil:
			// The cheap question failed: ask the full one.
		case exists == e.info.Exists:
			e.at = now
			c.store(pid, e, now)
			return e.info
		case !exists:
			e = cachedLookup{at: now, verified: now}
			c.store(pid, e, now)
			return e.info
		}
		// A gone pid exists again: a new process, whose create time is read.
	}
	info := c.probe.Lookup(pid)
	c.store(pid, cachedLookup{info: info, at: now, verified: now}, now)
	return info
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
	// period, so pids of long-gone nodes do not accumulate.
	if now.Sub(c.lastSweep) >= c.reverify {
		for p, old := range c.entries {
			if now.Sub(old.at) >= c.reverify {
				delete(c.entries, p)
			}
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
