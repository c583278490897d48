package model

import (
	"path/filepath"
	"time"
)

// Node is one agent instance: the facts read from its infra dir, its place in
// the forest, and (once classified) its state, flags, reason and action.
//
// Its fields are shaped for its size, 384 bytes (a size class; a test holds
// it): a live engine or a fleet's viewer holds every node, and each change
// copies the nodes of its session, so a node's bytes are most of the heap a
// node and of what a change allocates (SPEC §8: 2 KiB of RSS a remote node
// under churn, 100,000 local nodes in 300 MiB). What few nodes have is behind
// a pointer, nil for the rest, shared by the node's copies and never written
// through one (a node is given a new one: EditRare, SetRegistry): the rare
// facts (Rare), a lead's registry (Registry), the owner the live engine
// recorded (Owner). What a node can make when asked takes no room
// (RegistryPath); the reason's moving age holds its moment as an Instant (12
// bytes, not a time.Time's 24); the flags share a word with Process.
type Node struct {
	// Identity.
	ID       string // infra dir relative to its root, '/'-separated (SPEC §2)
	Root     string // absolute root the node was found under
	InfraDir string // absolute infra dir
	// HeartbeatPath is where the heartbeat is or is expected ("" for a legacy
	// node known from `.running` only).
	HeartbeatPath string

	// Facts from disk.
	HasHeartbeat bool // the .heartbeat file exists
	Legacy       bool // known from `.running` only (its pid: LegacyPID)
	Merged       bool // `.merged` exists
	// HasRegistry: `.children` exists (at RegistryPath), read or not.
	HasRegistry bool
	// Process is what the process probe said, when it was asked (beside
	// the flags above: a byte of the word they share).
	Process   ProcessStatus
	Heartbeat *Heartbeat // nil when absent or unparseable
	BeatMtime time.Time  // mtime of .heartbeat (or .running for legacy)
	// Registry is the read `.children` (nil when none was read), read
	// through RegistryLines, RegistryMtime and RegistrySize. Copies of a
	// node share it, so it is never written: SetRegistry gives a node a new
	// one.
	Registry      *Registry
	Entry         *ChildEntry // this node's line in its parent's registry
	Cfa           *CfaState
	Retries       RetryCount
	Blocked       *Blocked
	ActivityMtime time.Time // newest *-stream.jsonl mtime
	ParentID      string    // "" for a session
	// Parent is nil for a session, and for a node that knows its parent
	// by ParentID alone (a watched host's): Snapshot.ParentOf finds both.
	Parent   *Node   `json:"-"`
	Children []*Node // sorted by id

	// Source is the kind of store the node was read from ("" or "native":
	// the file protocol of SPEC §1; see package sources).
	Source string
	// Traits say how the source's liveness differs from a heartbeat's.
	Traits Traits
	// Thresholds are the node's own timing parameters (SPEC §10), nil for
	// the global ones the classifier is given. The scanner sets a source's
	// Thresholds() here, with every value the operator gave by flag or
	// config put over it: an operator's value beats a source's default,
	// which beats the global default. NoPidCheck is the operator's alone:
	// the classifier honours the global one whatever a node carries.
	Thresholds *Thresholds
	// Owner is the process that owned the pid when the live engine first
	// saw it alive: its parent, and the parent's create time. Nil when not
	// recorded (`--once` has no memory; a pid never seen alive); read it
	// with RecordedOwner. For a pid that runs per turn (Traits.PIDPerTurn),
	// a gone pid whose owner lives is between turns (idle), not dead (SPEC
	// §3). Copies of a node share it, so it is never written: a node is
	// given another.
	Owner *Owner

	// Rare holds the facts few nodes have (nil when a node has none of
	// them), read through the accessors of the same names (Problems,
	// ScanFlags, ...). Copies of a node share it, so it is never written:
	// EditRare gives a node a new one.
	Rare *Rare

	// Classification (liveness fills these).
	State State
	Flags []Flag
	// Reason says why, in one line, as the classifier wrote it: an age it
	// quotes is as of the classification. Show it with ReasonAt, which
	// measures its moving age (ReasonAge) at the time it is shown.
	Reason    string
	ReasonAge ReasonAge
	Action    Action
}

// registryFile is protocol.RegistryFile, which this package cannot import
// (protocol imports it).
const registryFile = ".children"

// RegistryPath is the absolute path of the node's `.children`, "" when it
// has none. It is made when asked, not held: a node's path a second time,
// for the few that ask (the detail pane, actions).
func (n *Node) RegistryPath() string {
	if !n.HasRegistry {
		return ""
	}
	return filepath.Join(n.InfraDir, registryFile)
}

// ProcessStatus is the result of probing a pid against a heartbeat's started.
type ProcessStatus uint8

const (
	ProcessNotProbed  ProcessStatus = iota
	ProcessAlive                    // pid exists, create time matches started
	ProcessGone                     // no such pid
	ProcessReused                   // pid exists but belongs to another process
	ProcessUnverified               // pid exists, create time unreadable: treated as alive
)

func (p ProcessStatus) String() string {
	switch p {
	case ProcessAlive:
		return "alive"
	case ProcessGone:
		return "gone"
	case ProcessReused:
		return "reused"
	case ProcessUnverified:
		return "unverified"
	}
	return "not probed"
}

// PID is the pid the node names: the heartbeat's, else the legacy sentinel's.
func (n *Node) PID() int {
	if n.Heartbeat != nil {
		return n.Heartbeat.PID
	}
	return n.LegacyPID()
}

// Status is the raw heartbeat status, or "" when there is none.
func (n *Node) Status() string {
	if n.Heartbeat != nil {
		return n.Heartbeat.Status
	}
	return ""
}

// Role is the heartbeat's role, or "" when there is none.
func (n *Node) Role() string {
	if n.Heartbeat != nil && n.Heartbeat.Role != "" {
		return n.Heartbeat.Role
	}
	return ""
}

// Team is the registry entry's team, else the heartbeat's.
func (n *Node) Team() string {
	if n.Entry != nil && n.Entry.Team != "" {
		return n.Entry.Team
	}
	if n.Heartbeat != nil {
		return n.Heartbeat.Optional().Team
	}
	return ""
}

// TaskID is the registry entry's task id, else the heartbeat's, else the CfA's.
func (n *Node) TaskID() string {
	if n.Entry != nil && n.Entry.TaskID != nil {
		return *n.Entry.TaskID
	}
	if n.Heartbeat != nil && n.Heartbeat.Optional().TaskID != "" {
		return n.Heartbeat.Optional().TaskID
	}
	if n.Cfa != nil {
		return n.Cfa.TaskID
	}
	return ""
}

// HasFlag reports whether the classified flags hold f.
func (n *Node) HasFlag(f Flag) bool {
	for _, g := range n.Flags {
		if g == f {
			return true
		}
	}
	return false
}

// HasScanFlag reports whether the scan flags hold f.
func (n *Node) HasScanFlag(f Flag) bool {
	for _, g := range n.ScanFlags() {
		if g == f {
			return true
		}
	}
	return false
}

// Walk calls fn for n and every descendant, depth first, in id order.
func (n *Node) Walk(fn func(*Node)) {
	fn(n)
	for _, c := range n.Children {
		c.Walk(fn)
	}
}

// Transition is a change of a node's state or flags, or its appearance or
// disappearance (From or To is "" then).
type Transition struct {
	Time      time.Time
	ID        string
	From, To  State
	FromFlags []Flag
	ToFlags   []Flag
	Reason    string
}

// Owner is a process recorded as the owner of a node's pid.
type Owner struct {
	PID     int
	Started time.Time // its create time; zero when it could not be read
}

// RecordedOwner is the owner recorded for n's pid, zero when none is.
func (n *Node) RecordedOwner() Owner {
	if n.Owner == nil {
		return Owner{}
	}
	return *n.Owner
}

// Field is one named fact a source shows as it is.
type Field struct {
	Name, Value string
}

// AppendField appends the field named name when it has a value: a source
// shows what its record says, and a NULL column or an absent key says
// nothing.
func AppendField(f []Field, name, value string) []Field {
	if value == "" {
		return f
	}
	return append(f, Field{Name: name, Value: value})
}

// SignOfLife is what a record's BeatMtime is (Traits.SignOfLife): the
// reasons name it so, and say "beating" only of a beat.
type SignOfLife uint8

// The signs of life a source's records give.
const (
	// SignBeat: a heartbeat's mtime, or a column the system bumps to say
	// it lives: "last beat".
	SignBeat SignOfLife = iota
	// SignActivity: the newest output the system writes as the agent
	// works (a stream, a transcript, a message, a hook event): "last
	// activity".
	SignActivity
	// SignUpdate: the record's own last write (a state file, a config, a
	// status record): "last update".
	SignUpdate
	// SignStart: when the process started, and nothing since: "started".
	SignStart
)

// Traits are the ways a source's records differ from a native heartbeat,
// which the classifier honours (SPEC §10). The zero value is a heartbeat.
// Its flags come first, together: every node holds a Traits, and a flag
// between the durations would pad it by a word.
type Traits struct {
	// PIDPerTurn: the pid is the current turn's subprocess, gone between
	// turns while the engine that owns the work lives (TeaParty's leads and
	// workers): a gone pid alone is not dead until the beat is stale.
	// With Node.Owner recorded, a living owner makes it idle until then,
	// and an owner gone too makes it dead at once (SPEC §3, §10).
	PIDPerTurn bool
	// NoProcessExpected: the record says no process runs now (a paused
	// row), so a gone pid never makes it dead.
	NoProcessExpected bool
	// NeverKill: a human controls it; never a kill candidate.
	NeverKill bool
	// RecordIdle: the record itself says the agent is between turns
	// (Claude Code's session status idle): while it runs, it is idle.
	RecordIdle bool
	// MergesItself: the system merges finished work by itself, so a
	// completed node recommends none, never merge.
	MergesItself bool
	// BeatNotRequired: the record's age is no sign of death. The system
	// does not require a beat (opencode-teams' agents beat only when they
	// call its heartbeat tool; chatroom's records never beat), so past
	// stale the node is quiet, never stalled, dead or a kill candidate by
	// age; only a gone or reused pid (where the record names one) or the
	// record's own status says it stopped.
	BeatNotRequired bool
	// ProcessUnseen: the record has a process that the source could not
	// look up this read (middle's tmux server did not answer), so its pid
	// is 0 for want of an answer, not for want of a process. As the
	// system's own watchdog does when it cannot ask, the beat alone
	// judges it, with the system's own kill time: past stale it is
	// stalled (never a kill candidate: there is no pid to kill), dead only
	// past kill-after.
	ProcessUnseen bool
	// SignOfLife says what BeatMtime is, for the reason to name it in the
	// system's own words: a beat (the zero value), or another write the
	// system makes that dispatchtop reads as its sign of life.
	SignOfLife SignOfLife
	// LaunchTimeout: a starting record older than this is dead (0: none).
	LaunchTimeout time.Duration
	// StartSlack: the record's started is stamped up to this long after
	// the process was created (chatroom writes startedAt once its spawn
	// call returns, up to ~110 s after the fork). The same process is one
	// created within [started − StartSlack − tolerance, started +
	// tolerance]; created later, or earlier than that, the pid was reused.
	// 0: created within tolerance of started, as a heartbeat's.
	StartSlack time.Duration
}
