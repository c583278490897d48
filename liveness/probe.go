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

// CachingProbe answers from a per-pid cache younger than its TTL and asks
// the wrapped probe otherwise. The live engine re-classifies every second;
// a TTL of a second or two keeps that from reading /proc for every stale
// node on every tick. It is safe for concurrent use.
type CachingProbe struct {
	probe Probe
	ttl   time.Duration
	now   func() time.Time

	mu        sync.Mutex
	entries   map[int]cachedLookup
	lastSweep time.Time
	boot      time.Time
	bootRead  bool
}

type cachedLookup struct {
	info ProcessInfo
	at   time.Time
}

// NewCachingProbe wraps probe (nil means SystemProbe) with a cache of ttl.
func NewCachingProbe(probe Probe, ttl time.Duration) *CachingProbe {
	return newCachingProbe(probe, ttl, time.Now)
}

func newCachingProbe(probe Probe, ttl time.Duration, now func() time.Time) *CachingProbe {
	if probe == nil {
		probe = SystemProbe{}
	}
	return &CachingProbe{probe: probe, ttl: ttl, now: now, entries: map[int]cachedLookup{}}
}

// Lookup answers from the cache when the pid was looked up less than the
// TTL ago. The wrapped probe is asked outside the lock, so one slow lookup
// does not hold up the others; two concurrent misses on one pid may both ask.
func (c *CachingProbe) Lookup(pid int) ProcessInfo {
	now := c.now()
	c.mu.Lock()
	if e, ok := c.entries[pid]; ok && now.Sub(e.at) < c.ttl {
		c.mu.Unlock()
		return e.info
	}
	c.mu.Unlock()

	info := c.probe.Lookup(pid)

	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[pid] = cachedLookup{info: info, at: now}
	// Drop expired entries once per TTL so pids of long-gone nodes do not
	// accumulate.
	if now.Sub(c.lastSweep) >= c.ttl {
		for p, e := range c.entries {
			if now.Sub(e.at) >= c.ttl {
				delete(c.entries, p)
			}
		}
		c.lastSweep = now
	}
	return info
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
