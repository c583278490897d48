package model

import (
	"encoding/json"
	"time"
)

// Heartbeat is the parsed `.heartbeat` file (SPEC §1).
type Heartbeat struct {
	PID             int     `json:"pid"`
	ParentHeartbeat string  `json:"parent_heartbeat"`
	Role            string  `json:"role"`
	Started         float64 `json:"started"`
	Status          string  `json:"status"`
	// HeartbeatOptional holds what some writers add (nil when a heartbeat
	// has none of it): encoding/json writes its fields as this object's
	// own. Read them through Optional: a promoted field of a nil one panics.
	*HeartbeatOptional
	// HasParentField: parent_heartbeat was written as a string, "" included;
	// false when it is absent or null (old writers leave it out).
	HasParentField bool `json:"-"`
	// HasStatusField: status was written as a string, "" included; false
	// when it is absent, null or of another type (SPEC §4.1 reports the
	// status as written, or null).
	HasStatusField bool `json:"-"`
}

// HeartbeatOptional is what some writers add to a heartbeat beyond the five
// fields every one has (SPEC §1). Most heartbeats have none of it (TeaParty's
// lead writes the five alone), so a Heartbeat holds it behind a pointer: 80
// bytes a heartbeat, not 128.
type HeartbeatOptional struct {
	Team     string `json:"team,omitempty"`
	TaskID   string `json:"task_id,omitempty"`
	Worktree string `json:"worktree,omitempty"`
	// Extra keeps every field not named, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// noOptional is what a heartbeat without optional fields reads. Never written.
var noOptional HeartbeatOptional

// Optional is h's optional fields, a zero HeartbeatOptional when it has
// none. Never write through it: use SetOptional.
func (h *Heartbeat) Optional() *HeartbeatOptional {
	if h.HeartbeatOptional == nil {
		return &noOptional
	}
	return h.HeartbeatOptional
}

// SetOptional gives h the optional fields o (none when o is zero).
func (h *Heartbeat) SetOptional(o HeartbeatOptional) {
	h.HeartbeatOptional = OptionalOf(o)
}

// OptionalOf is o as a Heartbeat holds it: nil when o is zero.
func OptionalOf(o HeartbeatOptional) *HeartbeatOptional {
	if o.Team == "" && o.TaskID == "" && o.Worktree == "" && o.Extra == nil {
		return nil
	}
	p := new(HeartbeatOptional) // not &o: o would be moved to the heap, zero or not
	*p = o
	return p
}

// SessionLead reports whether the heartbeat declares its agent a session
// lead: `parent_heartbeat: ""`, written explicitly (SPEC §1).
func (h Heartbeat) SessionLead() bool {
	return h.HasParentField && h.ParentHeartbeat == ""
}

// StartedTime converts Started (float seconds since the epoch) to a time;
// zero when it is not positive (TimeOfEpochSeconds: never wrapped).
func (h Heartbeat) StartedTime() time.Time {
	if !(h.Started > 0) {
		return time.Time{}
	}
	return TimeOfEpochSeconds(h.Started)
}

// ChildEntry is one line of a parent's `.children` registry (SPEC §1).
type ChildEntry struct {
	Heartbeat string  `json:"heartbeat"`
	Team      string  `json:"team"`
	TaskID    *string `json:"task_id"`
	Status    string  `json:"status"`
	Worktree  string  `json:"worktree,omitempty"`
}

// RegistryLine is one line of a `.children` file as it is on disk. Every
// registered node has one, its fields ordered so that it is 56 bytes, not 64.
type RegistryLine struct {
	Number int32 // 1-based line number
	// Torn marks a last line without its newline: an append in flight.
	Torn bool
	Raw  []byte // the line verbatim, without its newline (CR kept)
	// Entry is the parsed line; nil when the line does not parse.
	Entry *ChildEntry
	Err   string // why the line did not parse; "" when it did
}

// TaskIDString is the entry's task id, or "" when null.
func (e ChildEntry) TaskIDString() string {
	if e.TaskID == nil {
		return ""
	}
	return *e.TaskID
}

// CfA work-state outcomes.
const (
	OutcomeWorking = "working"
	OutcomeSuccess = "success"
	OutcomeFailure = "failure"
)

// CfaState is the parsed `.cfa-state.json` (SPEC §1). Nearly every node has
// one, and the classifier reads its state, backtracks and task id: the rest
// is behind a pointer (CfaDetail), which encoding/json reads and writes as
// this object's own fields, in the file's order, and makes when the file
// names one of them.
type CfaState struct {
	State string `json:"state"`
	*CfaDetail
	BacktrackCount int    `json:"backtrack_count"`
	TaskID         string `json:"task_id"`
}

// CfaDetail is what of a CfA state the classifier does not read: the
// history, which only a scan that keeps the files' bytes keeps (the detail
// pane's), and what older writers also wrote (SPEC §1). Read its fields
// through a non-nil CfaState.CfaDetail: a promoted field of a nil one
// panics.
type CfaDetail struct {
	History  []json.RawMessage `json:"history"`
	Phase    string            `json:"phase,omitempty"`
	Actor    string            `json:"actor,omitempty"`
	ParentID string            `json:"parent_id,omitempty"`
	TeamID   string            `json:"team_id,omitempty"`
	Depth    int               `json:"depth,omitempty"`
}

// Outcome classifies the CfA state: working, success or failure.
func (c CfaState) Outcome() string {
	switch c.State {
	case "DONE", "COMPLETED_WORK":
		return OutcomeSuccess
	case "WITHDRAWN", "FAILURE":
		return OutcomeFailure
	}
	return OutcomeWorking
}

// RetryCount is the parsed `.retry-count` (SPEC §1).
type RetryCount struct {
	Total   int            `json:"total"`
	ByPhase map[string]int `json:"by_phase,omitempty"`
}

// Blocked is a present blocked sentinel; Question is empty when unparseable.
type Blocked struct {
	Path     string `json:"path"`
	Question string `json:"question"`
	Context  string `json:"context,omitempty"`
	Kind     string `json:"kind,omitempty"`
	// Since is the sentinel's mtime, when the agent began to wait; zero
	// when unknown (a sentinel not read).
	Since time.Time `json:"-"`
}

// ResumePending is the parsed `.resume-pending` marker (SPEC §5.2).
type ResumePending struct {
	PID  int       `json:"pid"`
	Time time.Time `json:"time"`
	User string    `json:"user"`
}

// Problem is a read or parse error with the path it concerns.
type Problem struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}
