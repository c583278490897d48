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
	ByID        map[string]*Node
	// Problems holds every problem of the scan, the nodes' own included.
	Problems []Problem
	// Watch describes how the snapshot is kept current (empty for --once).
	Watch WatchInfo
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
	sum := Summary{Sessions: len(s.Sessions), ByFlag: map[Flag]int{}, Problems: len(s.Problems)}
	for _, root := range s.Sessions {
		root.Walk(func(n *Node) {
			sum.Nodes++
			switch n.State {
			case StateRunning:
				sum.Running++
			case StateDead:
				sum.Dead++
			case StateFinished:
				sum.Finished++
			case StateMissing:
				sum.Missing++
			}
			for _, f := range n.Flags {
				sum.ByFlag[f]++
			}
		})
	}
	sum.Stalled = sum.ByFlag[FlagStalled]
	sum.KillCandidate = sum.ByFlag[FlagKillCandidate]
	sum.Blocked = sum.ByFlag[FlagBlocked]
	sum.Orphaned = sum.ByFlag[FlagOrphaned]
	return sum
}

// Node returns the node with id, or nil.
func (s *Snapshot) Node(id string) *Node {
	if s == nil || s.ByID == nil {
		return nil
	}
	return s.ByID[id]
}
