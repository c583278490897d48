package model

import "time"

// State is one of the four liveness states of SPEC §3.
type State string

const (
	StateMissing  State = "missing"
	StateRunning  State = "running"
	StateDead     State = "dead"
	StateFinished State = "finished"
)

// States lists every state in display order.
var States = []State{StateRunning, StateDead, StateFinished, StateMissing}

// Flag qualifies a state (SPEC §3 flag table).
type Flag string

const (
	FlagStarting      Flag = "starting"
	FlagQuiet         Flag = "quiet"
	FlagStalled       Flag = "stalled"
	FlagKillCandidate Flag = "kill_candidate"
	FlagBlocked       Flag = "blocked"
	FlagPaused        Flag = "paused"
	FlagOrphaned      Flag = "orphaned"
	FlagLegacy        Flag = "legacy"
	// FlagIdle marks a node between turns: its per-turn pid is gone while
	// the process that owned it lives (SPEC §3).
	FlagIdle          Flag = "idle"
	FlagUnreadable    Flag = "unreadable"
	FlagPidUnverified Flag = "pid_unverified"
	FlagConflict      Flag = "conflict"
	FlagCycle         Flag = "cycle"
	FlagOutsideRoot   Flag = "outside_root"
	// FlagUnknownStatus marks a heartbeat status outside the vocabulary; such
	// a node is treated as non-terminal (SPEC §1).
	FlagUnknownStatus Flag = "unknown_status"
	// FlagClockSkew marks a sentinel whose mtime is in the future (beyond a
	// small skew): its age says nothing, so the pid decides.
	FlagClockSkew Flag = "clock_skew"
)

// Flags lists every flag in the order they are shown.
var Flags = []Flag{
	FlagStarting, FlagQuiet, FlagStalled, FlagKillCandidate, FlagBlocked, FlagPaused,
	FlagOrphaned, FlagLegacy, FlagIdle, FlagUnreadable, FlagPidUnverified, FlagConflict, FlagCycle,
	FlagOutsideRoot, FlagUnknownStatus, FlagClockSkew,
}

// Action is the recommended next step for a node (SPEC §3).
type Action string

const (
	ActionNone    Action = "none"
	ActionWait    Action = "wait"
	ActionAnswer  Action = "answer"
	ActionKill    Action = "kill"
	ActionResume  Action = "resume"
	ActionMerge   Action = "merge"
	ActionSurface Action = "surface"
	ActionCompact Action = "compact"
)

// Actions lists every recommended action, in the order of SPEC §3's table.
var Actions = []Action{
	ActionAnswer, ActionKill, ActionWait, ActionNone, ActionMerge, ActionSurface, ActionResume, ActionCompact,
}

// Heartbeat statuses (SPEC §1).
const (
	StatusStarting  = "starting"
	StatusRunning   = "running"
	StatusPaused    = "paused"
	StatusCompleted = "completed"
	StatusWithdrawn = "withdrawn"
)

// TerminalStatus reports whether a heartbeat or registry status ends the node.
func TerminalStatus(s string) bool {
	return s == StatusCompleted || s == StatusWithdrawn
}

// Thresholds are the timing parameters of classification (SPEC §3).
type Thresholds struct {
	Beat           time.Duration // one beat: older than this is quiet
	Stale          time.Duration // older than this the pid decides
	KillAfter      time.Duration // a stalled node whose beat is older than this is a kill candidate
	ExitGrace      time.Duration // a verified-gone pid is dead once the beat is this old
	StartTolerance time.Duration // create time vs started: same process within this
	// NoPidCheck classifies from mtimes alone (trees from another host).
	NoPidCheck bool
}

// DefaultThresholds are the SPEC defaults.
func DefaultThresholds() Thresholds {
	return Thresholds{
		Beat:           30 * time.Second,
		Stale:          120 * time.Second,
		KillAfter:      300 * time.Second,
		ExitGrace:      5 * time.Second,
		StartTolerance: 2 * time.Second,
	}
}

// Retry budgets (SPEC §3, §5.2).
const (
	RetriesPerState = 3
	RetriesPerNode  = 9
)
