package scanner

// The due-time tracker: for each session of the forest, when a threshold
// of SPEC §3 is crossed next and which live pids can change its verdicts,
// so that a tick re-classifies only the sessions that may change.

import (
	"slices"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

// dueTracker knows, per session of the forest (by its index in Sessions,
// which holds until the forest is rebuilt), when it may change next and
// which live pids its verdicts hang on.
type dueTracker struct {
	next []time.Time // when a threshold is crossed next
	// pids lists, per session, the distinct pids its last classification
	// found alive (or unverified), and classifiedAt at which tick that was:
	// only a pid whose probe answer changed since can change its verdicts.
	pids         [][]int
	classifiedAt []int
	// quotesClock: the session's last classification wrote an age into a
	// reason as plain text (model.ReasonAge.QuotesClock), which the refresh
	// every reasonRefreshTicks renews.
	quotesClock []bool
	seen        map[int]*pidSeen // every pid in pids: the answer last seen
	ticks       int

	probe *liveness.CachingProbe
	// pins are the processes probe pinned (nil without pidfds): the tick
	// learns of their exits instead of asking about each of them.
	pins liveness.ProcessPins
	th   model.Thresholds
}

func newDueTracker() dueTracker {
	return dueTracker{seen: map[int]*pidSeen{}}
}

// pidSeen is the probe's answer for one pid as the tick last saw it, and
// the tick at which that answer last changed. Ticks, not times: the order
// must hold under an injected clock that stands still.
type pidSeen struct {
	info      liveness.ProcessInfo
	changedAt int
	pinned    bool // its process is pinned: its answer holds until it exits
}

// sameProcessInfo reports whether two probe answers give every node the same
// verdict (Verify depends on nothing else).
func sameProcessInfo(a, b liveness.ProcessInfo) bool {
	return a.Exists == b.Exists && a.CreateTime.Equal(b.CreateTime) && (a.CreateTimeErr == nil) == (b.CreateTimeErr == nil)
}

// noteClassified records what the tick needs of session i, just classified
// at now: when a threshold is crossed next, and which pids can change it.
func (t *dueTracker) noteClassified(i int, classified *model.Node, now time.Time) {
	t.next[i] = nextDue(classified, now, t.th)
	t.classifiedAt[i] = t.ticks
	t.quotesClock[i] = quotesClock(classified)
	t.pids[i] = nil
	if t.th.NoPidCheck {
		return
	}
	var pids []int
	classified.Walk(func(n *model.Node) {
		// An idle node's verdict hangs on its owner: its end makes the
		// node dead at once (SPEC §3 idle).
		if owner := n.RecordedOwner().PID; n.HasFlag(model.FlagIdle) && owner > 0 && !slices.Contains(pids, owner) {
			pids = append(pids, owner)
		}
		// Only a live pid can change the verdict: a gone or reused one
		// never comes back as the same process.
		if n.Process != model.ProcessAlive && n.Process != model.ProcessUnverified {
			return
		}
		if pid := n.PID(); !slices.Contains(pids, pid) {
			pids = append(pids, pid)
		}
	})
	if len(pids) == 0 {
		return
	}
	t.pids[i] = pids
	for _, pid := range pids {
		if _, ok := t.seen[pid]; !ok {
			// The answer the classification just used (cached).
			seen := &pidSeen{info: t.probe.Lookup(pid)}
			if t.pins != nil && seen.info.Exists {
				seen.pinned = t.pins.Follow(pid)
			}
			t.seen[pid] = seen
		}
	}
}

// reset forgets every session, before a classification of all the
// sessions of a forest.
func (t *dueTracker) reset(sessions int) {
	t.next = slices.Grow(t.next[:0], sessions)[:sessions]
	t.classifiedAt = slices.Grow(t.classifiedAt[:0], sessions)[:sessions]
	t.pids = slices.Grow(t.pids[:0], sessions)[:sessions]
	clear(t.pids)
	t.quotesClock = slices.Grow(t.quotesClock[:0], sessions)[:sessions]
}

// quotingClock adds to due every session whose reasons quote an age as
// plain text: the refresh of those ages every reasonRefreshTicks.
func (t *dueTracker) quotingClock(due map[int]bool) {
	for i, q := range t.quotesClock {
		if q {
			due[i] = true
		}
	}
}

// quotesClock reports whether a reason in session s quotes an age as plain
// text (model.ReasonAge.QuotesClock).
func quotesClock(s *model.Node) bool {
	found := false
	s.Walk(func(n *model.Node) {
		found = found || n.ReasonAge.QuotesClock
	})
	return found
}

// prunePids forgets the pids no session names any more.
func (t *dueTracker) prunePids() {
	keep := make(map[int]bool, len(t.seen))
	for _, pids := range t.pids {
		for _, pid := range pids {
			keep[pid] = true
		}
	}
	for pid := range t.seen {
		if !keep[pid] {
			delete(t.seen, pid)
			if t.pins != nil {
				t.pins.Forget(pid)
			}
		}
	}
}

// dueSessions adds to due every session whose classification may change at
// now: a threshold crossed (nextDue), or a pid that now answers differently
// from when the session was classified. It reads no file; each distinct
// live pid is asked once, through the caching probe — except a pinned one,
// whose answer holds until the pins report its exit — and sessions are only
// searched for it when an answer moved.
func (t *dueTracker) dueSessions(sessions []*model.Node, now time.Time, due map[int]bool) {
	moved := false
	if !t.th.NoPidCheck {
		if t.pins != nil {
			for _, pid := range t.pins.Exits() {
				if seen := t.seen[pid]; seen != nil {
					seen.pinned = false // asked below, as any unpinned pid
				}
			}
		}
		for pid, seen := range t.seen {
			if seen.pinned {
				continue
			}
			info := t.probe.Lookup(pid)
			if !sameProcessInfo(info, seen.info) {
				seen.info, seen.changedAt, moved = info, t.ticks, true
			}
			if t.pins != nil && info.Exists {
				seen.pinned = t.pins.Follow(pid) // pinned again by a full lookup (a new process)
			}
		}
	}
	for i := range sessions {
		if due[i] {
			continue
		}
		if !now.Before(t.next[i]) {
			due[i] = true
			continue
		}
		if !moved {
			continue
		}
		at := t.classifiedAt[i]
		for _, pid := range t.pids[i] {
			if seen := t.seen[pid]; seen != nil && seen.changedAt > at {
				due[i] = true
				break
			}
		}
	}
}

// nextDue is the first instant after now at which a threshold of SPEC §3
// is crossed by a node of session s (its beat edges, registry and
// resume-marker age); zero-cost sessions get a far future. The classifier
// compares `age > threshold`, so a threshold is crossed one nanosecond past
// it: due any earlier, the session would be classified the same and the
// crossing then missed until the next edge.
func nextDue(s *model.Node, now time.Time, th model.Thresholds) time.Time {
	next := now.Add(24 * time.Hour)
	consider := func(from time.Time, d time.Duration) {
		if t := from.Add(d + time.Nanosecond); t.After(now) && t.Before(next) {
			next = t
		}
	}
	s.Walk(func(n *model.Node) {
		// Each node by its own thresholds (a source's, SPEC §10), its
		// launch timeout among its edges.
		own := liveness.ThresholdsFor(n, th)
		if !n.BeatMtime.IsZero() {
			for _, d := range liveness.NodeEdges(n, th) {
				consider(n.BeatMtime, d)
			}
		}
		if !n.RegistryMtime().IsZero() {
			consider(n.RegistryMtime(), own.Stale)
		}
		if !n.ResumeMtime().IsZero() {
			consider(n.ResumeMtime(), own.Stale)
		}
		if !n.OrphanedSince().IsZero() {
			consider(n.OrphanedSince(), own.Stale)
		}
	})
	return next
}
