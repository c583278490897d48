package model

import "time"

// Update is one change of a live forest, as its producer publishes it: the
// live engine watching the roots (scanner.Watcher) or a fleet polling serve
// hosts (remote.Fleet). The ui and serve consume them.
//
// Delivery is the same for every stream of updates (Publish):
//   - The producer never waits for its consumer. The channel holds one
//     update; one still unread when the next is ready is merged into it
//     (Merge), so a slow consumer gets fewer, bigger updates.
//   - The newest snapshot always arrives; the ones in between may not.
//   - Every transition arrives, in order, unless more than
//     MaxPendingTransitions wait in one unread update: then the oldest are
//     dropped. A producer told what its consumer shows (TransitionView)
//     lists only those.
//   - Hosts: the newest list arrives; an update without one keeps the last.
//   - A snapshot is never mutated after it is sent: the consumer may read it
//     while the producer goes on, and must not write to it. Two snapshots
//     of a stream may share nodes (the sessions nothing touched); a shared
//     node is the same classification.
//   - The channel is closed when the producer stops.
type Update struct {
	// Snapshot is the classified forest; nil in an update that brings only
	// transitions or hosts.
	Snapshot *Snapshot
	// Transitions are state or flag changes, appearances and vanishings
	// (Diff), oldest first.
	Transitions []Transition
	// Hosts is a fleet's reachability, one per host in the fleet's order;
	// nil says nothing new about them.
	Hosts []Host
}

// MaxPendingTransitions bounds the transitions an unread update holds, so
// a consumer away for long (a paused screen, a stuck reader) costs at most
// this many, the newest: room for a whole 10,000-node fleet crossing a
// threshold at once.
const MaxPendingTransitions = 10000

// Merge folds newer into u, an update not yet consumed: newer's snapshot
// (u's when newer has none), u's transitions then newer's, the newest
// MaxPendingTransitions of them, and newer's hosts (u's when newer has
// none). Neither update is changed.
func (u Update) Merge(newer Update) Update {
	merged := newer
	if merged.Snapshot == nil {
		merged.Snapshot = u.Snapshot
	}
	if merged.Hosts == nil {
		merged.Hosts = u.Hosts
	}
	merged.Transitions = newestTransitions(u.Transitions, newer.Transitions)
	return merged
}

// newestTransitions is older then newer, the last MaxPendingTransitions of
// them. It never writes to either slice.
func newestTransitions(older, newer []Transition) []Transition {
	if over := len(older) + len(newer) - MaxPendingTransitions; over > 0 {
		if over >= len(older) {
			return newer[over-len(older):]
		}
		older = older[over:]
	}
	if len(older) == 0 {
		return newer
	}
	if len(newer) == 0 {
		return older
	}
	out := make([]Transition, 0, len(older)+len(newer))
	return append(append(out, older...), newer...)
}

// Publish hands u to out without waiting for the consumer: an update still
// unread in out is taken back and merged into u first (Merge). out must
// have a buffer of one and the caller must be its only sender; then the
// send finds room and never blocks.
func Publish(out chan Update, u Update) {
	select {
	case unread := <-out:
		u = unread.Merge(u)
	default:
	}
	out <- u
}

// Host is one serve host of a fleet view (dispatchtop --remote). The
// fleet's top-level node whose id is Name stands for it and holds its
// sessions, their ids prefixed "Name/".
type Host struct {
	Name, URL string
	Reachable bool
	// Since is when the current reachability began: the first failed poll
	// of an unreachable host, the first good one otherwise.
	Since time.Time
	// LastSeen is the last good poll (zero: never reached).
	LastSeen time.Time
	Err      string // why the last poll failed
	Nodes    int    // nodes in its last good snapshot
}
