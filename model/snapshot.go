package model

import "time"

// Snapshot is a classified forest at one instant. Consumers treat it as
// read-only: the engine hands out a fresh one for every change.
type Snapshot struct {
	GeneratedAt time.Time
	Roots       []string // absolute
	// RootSources names the source each root is read by, in the order of
	// Roots ("native" for the file protocol; see package sources).
	RootSources []string
	Thresholds  Thresholds
	Sessions    []*Node // sorted by id
	// ByID holds every node by id, or is nil once the snapshot is indexed
	// by its sessions (see IndexSessions, as a watcher's snapshots are):
	// read a snapshot through Node, NodeCount and Nodes, which answer for
	// both.
	ByID map[string]*Node
	// Problems holds every problem of the scan, the nodes' own included.
	Problems []Problem
	// Watch describes how the snapshot is kept current (empty for --once).
	Watch WatchInfo
	// index replaces ByID in a snapshot indexed by its sessions.
	index *nodeIndex
}

// WatchInfo tells the header how changes are followed and why.
type WatchInfo struct {
	Mode     string        // "fsnotify", "polling", "mixed" or "" for a one-off scan
	Interval time.Duration // polling interval when polling
	Reason   string        // why polling, when it is
	Warnings []string      // e.g. a root on NFS
	// Overflows counts fsnotify queue overflows answered by a re-stat.
	Overflows int
}

// Summary holds the counts of SPEC §4.1.
type Summary struct {
	Nodes         int `json:"nodes"`
	Sessions      int `json:"sessions"`
	Running       int `json:"running"`
	Dead          int `json:"dead"`
	Finished      int `json:"finished"`
	Missing       int `json:"missing"`
	Stalled       int `json:"stalled"`
	KillCandidate int `json:"kill_candidate"`
	Blocked       int `json:"blocked"`
	Orphaned      int `json:"orphaned"`
	Problems      int `json:"problems"`
	// ByFlag counts every flag, for the header.
	ByFlag map[Flag]int `json:"-"`
}

// Summarize counts nodes per state and flag.
func (s *Snapshot) Summarize() Summary {
	var t Tally
	for _, root := range s.Sessions {
		t.AddTree(root)
	}
	return t.Summary(len(s.Sessions), len(s.Problems))
}

// Tally counts nodes per state and flag in fixed arrays, so that counting
// a 10,000-node forest hashes nothing, and the tallies of parts of a
// forest (its sessions) add up to the forest's (Merge, Sub): a consumer of
// a stream recounts only the sessions an update renewed.
type Tally struct {
	Nodes  int
	states [stateCount]int
	flags  [flagCount]int
	// other counts flags outside Flags (none today); nil while there are none.
	other map[Flag]int
}

// stateCount and flagCount are len(States) and len(Flags), as constants
// for Tally's arrays.
const stateCount, flagCount = 4, 16

// stateIndex is s's place in States, or -1.
func stateIndex(s State) int {
	switch s {
	case StateRunning:
		return 0
	case StateDead:
		return 1
	case StateFinished:
		return 2
	case StateMissing:
		return 3
	}
	return -1
}

// flagIndex is f's place in Flags, or -1.
func flagIndex(f Flag) int {
	switch f {
	case FlagStarting:
		return 0
	case FlagQuiet:
		return 1
	case FlagStalled:
		return 2
	case FlagKillCandidate:
		return 3
	case FlagBlocked:
		return 4
	case FlagPaused:
		return 5
	case FlagOrphaned:
		return 6
	case FlagLegacy:
		return 7
	case FlagIdle:
		return 8
	case FlagUnreadable:
		return 9
	case FlagPidUnverified:
		return 10
	case FlagConflict:
		return 11
	case FlagCycle:
		return 12
	case FlagOutsideRoot:
		return 13
	case FlagUnknownStatus:
		return 14
	case FlagClockSkew:
		return 15
	}
	return -1
}

// Add counts n alone.
func (t *Tally) Add(n *Node) {
	t.Nodes++
	if i := stateIndex(n.State); i >= 0 {
		t.states[i]++
	}
	for _, f := range n.Flags {
		if i := flagIndex(f); i >= 0 {
			t.flags[i]++
			continue
		}
		if t.other == nil {
			t.other = map[Flag]int{}
		}
		t.other[f]++
	}
}

// AddTree counts n and everything beneath it.
func (t *Tally) AddTree(n *Node) {
	t.Add(n)
	for _, c := range n.Children {
		t.AddTree(c)
	}
}

// Merge adds the counts of o.
func (t *Tally) Merge(o Tally) {
	t.Nodes += o.Nodes
	for i, c := range o.states {
		t.states[i] += c
	}
	for i, c := range o.flags {
		t.flags[i] += c
	}
	for f, c := range o.other {
		if t.other == nil {
			t.other = map[Flag]int{}
		}
		t.other[f] += c
	}
}

// Sub takes away the counts of o, a part of what t counted.
func (t *Tally) Sub(o Tally) {
	t.Nodes -= o.Nodes
	for i, c := range o.states {
		t.states[i] -= c
	}
	for i, c := range o.flags {
		t.flags[i] -= c
	}
	for f, c := range o.other {
		if t.other[f] -= c; t.other[f] == 0 {
			delete(t.other, f)
		}
	}
}

// Summary is the counts as SPEC §4.1 gives them, for a forest of sessions
// sessions and problems problems.
func (t *Tally) Summary(sessions, problems int) Summary {
	sum := Summary{
		Nodes: t.Nodes, Sessions: sessions, Problems: problems,
		Running: t.states[0], Dead: t.states[1], Finished: t.states[2], Missing: t.states[3],
		ByFlag: make(map[Flag]int, len(t.other)+4),
	}
	for i, c := range t.flags {
		if c > 0 {
			sum.ByFlag[Flags[i]] = c
		}
	}
	for f, c := range t.other {
		sum.ByFlag[f] = c
	}
	sum.Stalled = sum.ByFlag[FlagStalled]
	sum.KillCandidate = sum.ByFlag[FlagKillCandidate]
	sum.Blocked = sum.ByFlag[FlagBlocked]
	sum.Orphaned = sum.ByFlag[FlagOrphaned]
	return sum
}

// ParentOf is n's parent: its Parent, or, when that is nil, the node its
// ParentID names. A watched host's nodes know their parent by id alone
// (remote builds them so: a change copies a node and its ancestors, while
// a parent pointer in each child would have it copy the whole session).
// Nil for a session, and for a parent not in s.
func (s *Snapshot) ParentOf(n *Node) *Node {
	if n.Parent != nil {
		return n.Parent
	}
	if n.ParentID == "" {
		return nil
	}
	return s.Node(n.ParentID)
}

// Node returns the node with id, or nil.
func (s *Snapshot) Node(id string) *Node {
	switch {
	case s == nil:
		return nil
	case s.index != nil && s.index.parts != nil:
		return s.index.parts.node(s, id)
	case s.index != nil:
		i, ok := s.index.session[id]
		if !ok {
			return nil
		}
		if m := s.index.large[i]; m != nil {
			return m[id]
		}
		return nodeInSession(s.Sessions[i], id)
	}
	return s.ByID[id]
}
