package liveness

import (
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// The fixed instant of the tests and of SPEC's appendix: 12:00:00.
var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// started is when every fake process was created.
var started = now.Add(-time.Hour)

// Fake pids, one per answer a probe can give.
const (
	pidAlive      = 4121 // exists, created at started
	pidGone       = 4122 // no such process
	pidReused     = 4123 // exists, created a minute after started
	pidUnverified = 4124 // exists, create time unreadable
	pidNear       = 4125 // exists, created 1.5 s after started (within tolerance)
	pidFar        = 4126 // exists, created 2.5 s after started (outside tolerance)
)

// fakeProbe answers from a table and records every pid it was asked about.
type fakeProbe struct {
	mu    sync.Mutex
	boot  time.Time
	asked []int
}

func newFakeProbe() *fakeProbe { return &fakeProbe{boot: now.Add(-24 * time.Hour)} }

func (f *fakeProbe) Lookup(pid int) ProcessInfo {
	f.mu.Lock()
	f.asked = append(f.asked, pid)
	f.mu.Unlock()
	switch pid {
	case pidAlive:
		return ProcessInfo{Exists: true, CreateTime: started}
	case pidReused:
		return ProcessInfo{Exists: true, CreateTime: started.Add(time.Minute)}
	case pidUnverified:
		return ProcessInfo{Exists: true, CreateTimeErr: errors.New("open /proc/4124/stat: permission denied")}
	case pidNear:
		return ProcessInfo{Exists: true, CreateTime: started.Add(1500 * time.Millisecond)}
	case pidFar:
		return ProcessInfo{Exists: true, CreateTime: started.Add(2500 * time.Millisecond)}
	}
	return ProcessInfo{}
}

func (f *fakeProbe) BootTime() time.Time { return f.boot }

func (f *fakeProbe) askedAbout() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.asked)
}

// beating is a node whose heartbeat has status and pid and was last touched
// age ago; opts add the other facts.
func beating(id, status string, pid int, age time.Duration, opts ...func(*model.Node)) *model.Node {
	n := &model.Node{
		ID:            id,
		InfraDir:      "/r/" + id,
		HeartbeatPath: "/r/" + id + "/.heartbeat",
		HasHeartbeat:  true,
		Heartbeat: &model.Heartbeat{
			PID: pid, Status: status, Role: "agent",
			Started: float64(started.UnixNano()) / 1e9,
		},
		BeatMtime: now.Add(-age),
	}
	for _, o := range opts {
		o(n)
	}
	return n
}

// registered is a node known only from its parent's registry line.
func registered(id, lineStatus string) *model.Node {
	return &model.Node{
		ID:            id,
		InfraDir:      "/r/" + id,
		HeartbeatPath: "/r/" + id + "/.heartbeat",
		Entry:         &model.ChildEntry{Heartbeat: "/r/" + id + "/.heartbeat", Team: "t", Status: lineStatus},
	}
}

// outside is a registered node whose path leads outside every root: the
// scanner flags it and reads none of its files.
func outside(id, lineStatus string) *model.Node {
	n := registered(id, lineStatus)
	n.Rare = &model.Rare{ScanFlags: []model.Flag{model.FlagOutsideRoot}}
	return n
}

// legacy is a node known from `.running` only, written age ago (age 0: the
// scanner could not open it, so it has no mtime).
func legacy(id string, pid int, age time.Duration) *model.Node {
	return &model.Node{ID: id, InfraDir: "/r/" + id, Legacy: true, Rare: &model.Rare{LegacyPID: pid}, BeatMtime: mtimeAgo(age)}
}

// unreadable is a node whose heartbeat does not parse, last touched age ago
// (age 0: it could not be opened, so it has no mtime).
func unreadable(id string, age time.Duration) *model.Node {
	return &model.Node{
		ID: id, InfraDir: "/r/" + id, HeartbeatPath: "/r/" + id + "/.heartbeat",
		HasHeartbeat: true, BeatMtime: mtimeAgo(age),
		Rare: &model.Rare{
			ScanFlags: []model.Flag{model.FlagUnreadable},
			Problems:  []model.Problem{{Path: "/r/" + id + "/.heartbeat", Error: "unexpected end of JSON input"}},
		},
	}
}

func mtimeAgo(age time.Duration) time.Time {
	if age == 0 {
		return time.Time{}
	}
	return now.Add(-age)
}

func blocked(q string) func(*model.Node) {
	return func(n *model.Node) { n.Blocked = &model.Blocked{Path: n.InfraDir + "/blocked.json", Question: q} }
}

func cfa(state string) func(*model.Node) {
	return func(n *model.Node) { n.Cfa = &model.CfaState{State: state} }
}

func retries(total int, byPhase map[string]int) func(*model.Node) {
	return func(n *model.Node) { n.Retries = model.RetryCount{Total: total, ByPhase: byPhase} }
}

func merged(n *model.Node) { n.Merged = true }

func noStarted(n *model.Node) { n.Heartbeat.Started = 0 }

func scanFlags(fs ...model.Flag) func(*model.Node) {
	return func(n *model.Node) { n.EditRare(func(r *model.Rare) { r.ScanFlags = fs }) }
}

// registryAge gives the node a `.children` last written age ago.
func registryAge(age time.Duration) func(*model.Node) {
	return func(n *model.Node) {
		n.HasRegistry = true
		n.SetRegistry(n.RegistryLines(), now.Add(-age), n.RegistrySize())
	}
}

// adopt links children under parent (in id order, as the scanner does) and
// returns parent. A registered child also gets a line in parent's registry.
func adopt(parent *model.Node, children ...*model.Node) *model.Node {
	for _, c := range children {
		c.Parent, c.ParentID = parent, parent.ID
		parent.Children = append(parent.Children, c)
		if c.Entry != nil {
			lines := parent.RegistryLines()
			lines = append(lines, model.RegistryLine{Number: int32(len(lines) + 1), Entry: c.Entry})
			parent.SetRegistry(lines, parent.RegistryMtime(), parent.RegistrySize())
		}
	}
	slices.SortFunc(parent.Children, func(a, b *model.Node) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return parent
}

// entry gives a node with a heartbeat its parent's registry line.
func entry(status string) func(*model.Node) {
	return func(n *model.Node) {
		n.Entry = &model.ChildEntry{Heartbeat: n.HeartbeatPath, Team: "t", Status: status}
	}
}

func flagsOf(n *model.Node) []model.Flag {
	if n.Flags == nil {
		return []model.Flag{}
	}
	return n.Flags
}

func fl(fs ...model.Flag) []model.Flag {
	if fs == nil {
		return []model.Flag{}
	}
	return fs
}

// bootedAt is the system probe on a host that booted at boot: for a test
// whose fixture needs a beat older than a freshly booted host can have (a
// beat past kill_after), the boot is part of the fixture, not the host's.
type bootedAt struct {
	SystemProbe
	boot time.Time
}

func (b bootedAt) BootTime() time.Time { return b.boot }
