package model

import (
	"slices"
	"time"
)

// Rare holds the facts few nodes have: a problem, a scan flag, a conflict,
// a source's own fields. A node holds them behind one pointer (Node.Rare),
// nil for most, so that the common node is small: the live engine copies
// every node of a session it classifies again, and a whole forest when a
// fleet crosses a threshold together, while the consumer still shows the
// previous one (SPEC §8: 100,000 nodes in ≤ 300 MiB).
//
// A Rare, once a node holds it, is never written: copies of the node share
// it. EditRare gives a node an edited copy.
type Rare struct {
	// LegacyPID is the pid in `.running` (Node.Legacy).
	LegacyPID int
	// HeartbeatRaw is the heartbeat file as read (capped), for the detail
	// pane: only a scan that keeps the files' bytes has it (not the live
	// engine's, not `--once`'s: Options.OmitRaw), and a source whose
	// record is the heartbeat.
	HeartbeatRaw  []byte
	ResumePending *ResumePending
	// ResumeMtime is the mtime of `.resume-pending`.
	ResumeMtime time.Time
	// OrphanedSince is when the parent stopped running, for an orphaned
	// node (a classification's, as Node.State).
	OrphanedSince time.Time
	Problems      []Problem
	// ScanFlags are the flags found while scanning: conflict, cycle,
	// outside_root, unreadable.
	ScanFlags []Flag
	// OtherParents are the ids of the parents that lost a conflict (SPEC §2).
	OtherParents []string
	// RefusedChildren are the ids its `.children` names that belong to
	// another session by their own word: a conflict, not an edge (SPEC §2).
	RefusedChildren []string
	// SourceFields are what a source's record says beyond the node's facts
	// (a row id, a tmux session), in the source's order, shown as they are.
	SourceFields []Field
	// Ending is the record's own words on how it ended, where its status
	// says less (middle's "failed: idle-timeout" under the status
	// withdrawn): a finished node's reason says them. "" for a heartbeat.
	Ending string
	// RegistryCompacting is the path of `.children.compacting` while a
	// compaction's replaced registry is not carried over whole ("" when
	// none); Registry then ends with its lines not carried yet.
	RegistryCompacting string
	// Ended is what a source saw end of the process its record stands for,
	// though the record does not say it stopped ("" when nothing): an
	// opencode-teams agent's tmux pane gone or its server dead, a chatroom
	// daemon's pid file removed. Such a node is dead at once (SPEC §10).
	Ended string
}

// EditRare gives n its rare facts as edit leaves them, edited on a copy
// (of none: a zero Rare), since the one n holds may be shared by a
// published copy of n. The copy's lists have no room to grow, so an append
// in edit copies them too. A Rare left with nothing is dropped.
func (n *Node) EditRare(edit func(r *Rare)) {
	var r Rare
	if n.Rare != nil {
		r = *n.Rare
		r.Problems = slices.Clip(r.Problems)
		r.ScanFlags = slices.Clip(r.ScanFlags)
		r.OtherParents = slices.Clip(r.OtherParents)
		r.RefusedChildren = slices.Clip(r.RefusedChildren)
		r.SourceFields = slices.Clip(r.SourceFields)
	}
	edit(&r)
	if r.empty() {
		n.Rare = nil
		return
	}
	n.Rare = &r
}

// AddProblem appends p to n's problems.
func (n *Node) AddProblem(p Problem) {
	n.EditRare(func(r *Rare) { r.Problems = append(r.Problems, p) })
}

// empty reports whether r holds no fact.
func (r *Rare) empty() bool {
	return r.LegacyPID == 0 && r.HeartbeatRaw == nil && r.ResumePending == nil && r.ResumeMtime.IsZero() && r.OrphanedSince.IsZero() &&
		len(r.Problems) == 0 &&
		len(r.ScanFlags) == 0 && len(r.OtherParents) == 0 && len(r.RefusedChildren) == 0 &&
		len(r.SourceFields) == 0 && r.Ending == "" && r.RegistryCompacting == "" && r.Ended == ""
}

// noRare is what a node without a Rare reads: no rare fact. Never written.
var noRare Rare

// rare is what the accessors read: n's Rare, or noRare.
func (n *Node) rare() *Rare {
	if n.Rare == nil {
		return &noRare
	}
	return n.Rare
}

// LegacyPID is the pid in `.running`, 0 when none.
func (n *Node) LegacyPID() int {
	return n.rare().LegacyPID
}

// HeartbeatRaw is the heartbeat file as read, nil when not kept (see Rare).
func (n *Node) HeartbeatRaw() []byte {
	return n.rare().HeartbeatRaw
}

// ResumeMtime is the mtime of `.resume-pending`, zero when absent.
func (n *Node) ResumeMtime() time.Time {
	return n.rare().ResumeMtime
}

// Ended is what the node's source saw end of its process, "" when
// nothing (see Rare.Ended).
func (n *Node) Ended() string {
	return n.rare().Ended
}

// SetEnded records what the node's source saw end of its process.
func (n *Node) SetEnded(why string) {
	n.EditRare(func(r *Rare) { r.Ended = why })
}

// OrphanedSince is when the parent stopped running, for an orphaned node;
// zero otherwise.
func (n *Node) OrphanedSince() time.Time {
	return n.rare().OrphanedSince
}

// SetOrphanedSince records when the parent stopped running (zero: the node
// is not orphaned). A node that holds that very value (==, not Equal: its
// location too) is left as it is, so that a classification that finds
// nothing new makes no Rare.
func (n *Node) SetOrphanedSince(since time.Time) {
	if n.rare().OrphanedSince == since {
		return
	}
	n.EditRare(func(r *Rare) { r.OrphanedSince = since })
}

// ResumePending is the `.resume-pending` marker, nil when absent.
func (n *Node) ResumePending() *ResumePending {
	return n.rare().ResumePending
}

// Problems are the node's read and parse errors.
func (n *Node) Problems() []Problem {
	return n.rare().Problems
}

// ScanFlags are the flags found while scanning (see Rare).
func (n *Node) ScanFlags() []Flag {
	return n.rare().ScanFlags
}

// OtherParents are the ids of the parents that lost a conflict.
func (n *Node) OtherParents() []string {
	return n.rare().OtherParents
}

// RefusedChildren are the ids of another session's nodes that its
// `.children` names (see Rare).
func (n *Node) RefusedChildren() []string {
	return n.rare().RefusedChildren
}

// SourceFields are a source's own fields for the node.
func (n *Node) SourceFields() []Field {
	return n.rare().SourceFields
}

// Ending is the record's own words on how it ended, "" when its status
// says it all (see Rare).
func (n *Node) Ending() string {
	return n.rare().Ending
}

// RegistryCompacting is the path of `.children.compacting` while a
// compaction is not finished, "" otherwise (see Rare).
func (n *Node) RegistryCompacting() string {
	return n.rare().RegistryCompacting
}

// DeclaredParent is parent_heartbeat as written, for the detail pane; ""
// without a heartbeat.
func (n *Node) DeclaredParent() string {
	if n.Heartbeat == nil {
		return ""
	}
	return n.Heartbeat.ParentHeartbeat
}
