package ui

// What comes in from outside: the engine's updates (coalesced, held while
// paused), the clock, and the events they add to the event pane.

import (
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/dispatchtop/dispatchtop/model"
)

// waitFeed blocks on the feed in a command and coalesces a burst: whatever
// is already queued behind the first update joins it, so a thousand
// heartbeat touches make one redraw.
func waitFeed(ch <-chan model.Update) tea.Cmd {
	return func() tea.Msg {
		u, ok := <-ch
		if !ok {
			return feedClosedMsg{}
		}
		for {
			select {
			case next, ok := <-ch:
				if !ok {
					return updateMsg{update: u}
				}
				u = u.Merge(next)
			default:
				return updateMsg{update: u}
			}
		}
	}
}

// tick comes at the clock's next whole multiple of d (the next second of
// a 1 s tick): the clock's label changes then, so it is never a second
// late nor skips one, and the wake falls on the instant the watcher's own
// whole-second tick wakes the process too.
func tick(d time.Duration, now time.Time) tea.Cmd {
	wait := d - now.Sub(now.Truncate(d))
	return tea.Tick(wait, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// apply takes in a new snapshot: rows are rebuilt, the selection stays on
// the same node id, and transitions go to the event pane. The command it
// returns tells Options.Released that the previous snapshot, let go of, was
// mostly renewed (nil otherwise).
func (m *Model) apply(u model.Update) tea.Cmd {
	// Only the newest maxEvents can stay in the pane: a fleet crossing a
	// threshold together (10,000 nodes going stalled) must not build and
	// shift out thousands of events one by one.
	first, kept := len(u.Transitions), 0
	for ; first > 0 && kept < maxEvents; first-- {
		if !quietOnly(u.Transitions[first-1]) {
			kept++
		}
	}
	m.makeRoom(kept)
	for _, t := range u.Transitions[first:] {
		if quietOnly(t) {
			continue
		}
		m.addEvent(transitionEvent(t))
	}
	if u.Hosts != nil {
		m.setHosts(u.Hosts)
	}
	var released tea.Cmd
	if u.Snapshot != nil {
		if m.opts.Released != nil && m.snap != nil && 2*renewedSessions(m.snap.Sessions, u.Snapshot.Sessions) > len(u.Snapshot.Sessions) {
			released = releasedCmd(m.opts.Released)
		}
		m.snap = u.Snapshot
		m.sum = m.summarize()
		m.now = screenClock(m.now, m.opts.Now())
		m.noteProblems()
		m.noteAgents()
	}
	// A node marked for a batch that is gone is no target any more.
	for id := range m.marked {
		if m.snap == nil || m.snap.Node(id) == nil {
			delete(m.marked, id)
		}
	}
	m.reflowUpdate()
	return released
}

// screenClock is the screen's clock after an update at now: the clock
// moves with the clock's seconds (the tick's), not with every update. An
// update within the second the screen shows keeps its clock, so that the
// frame changes only where the update changed what is on screen: taken to
// each update's instant, every age on screen whose second turned over
// meanwhile was drawn again, and with a store written at 50 rows a second
// almost every update redrew the whole frame (SPEC §6, §8). An age is
// shown in whole seconds and the header's clock too: a fraction of one
// never showed.
func screenClock(shown, now time.Time) time.Time {
	if now.Truncate(time.Second).Equal(shown.Truncate(time.Second)) {
		return shown
	}
	return now
}

// releasedCmd calls release, after the update that let a forest go.
func releasedCmd(release func()) tea.Cmd {
	return func() tea.Msg {
		release()
		return nil
	}
}

// EventTransitions is what the event pane shows of an update's
// transitions: all but the quietOnly ones, the newest maxEvents of them. A
// producer told so (scanner.WatchOptions.Transitions) lists no others, and
// a fleet crossing a threshold together costs the events the pane holds,
// not a transition per node.
func EventTransitions() model.TransitionView {
	return model.TransitionView{Shows: func(t model.Transition) bool { return !quietOnly(t) }, Newest: maxEvents}
}

// quietOnly is a transition that only sets or clears `quiet`: a beat a
// little late, which flaps with every beat and would drown the event pane.
func quietOnly(t model.Transition) bool {
	if t.From != t.To || t.From == "" {
		return false
	}
	strip := func(fs []model.Flag) []model.Flag {
		out := make([]model.Flag, 0, len(fs))
		for _, f := range fs {
			if f != model.FlagQuiet {
				out = append(out, f)
			}
		}
		return out
	}
	a, b := strip(t.FromFlags), strip(t.ToFlags)
	return slices.Equal(a, b)
}

// noteProblems puts each problem of the scan in the event pane once, so a
// read error that belongs to no row is still seen.
func (m *Model) noteProblems() {
	if m.seenProblems == nil || len(m.seenProblems) > maxSeenProblems {
		m.seenProblems = map[model.Problem]bool{}
	}
	for _, p := range m.snap.Problems {
		if m.seenProblems[p] {
			continue
		}
		m.seenProblems[p] = true
		m.addEvent(event{time: m.snap.GeneratedAt, id: p.Path, text: "problem", reason: p.Error, bad: true})
	}
}

func transitionEvent(t model.Transition) event {
	from, to := describe(t.From, t.FromFlags), describe(t.To, t.ToFlags)
	return event{time: t.Time, id: t.ID, text: from + " → " + to, reason: t.Reason,
		bad: t.To == model.StateDead || t.To == ""}
}

func describe(s model.State, flags []model.Flag) string {
	if s == "" {
		return "(none)"
	}
	parts := []string{string(s)}
	for _, f := range flags {
		parts = append(parts, string(f))
	}
	return strings.Join(parts, " ")
}

func (m *Model) addEvent(e event) {
	m.events = append(m.events, e)
	m.eventSeq++
	if len(m.events) > maxEvents {
		// Keep the newest, shifted in place: the dropped head is overwritten
		// (so it can be collected) and a burst allocates nothing.
		drop := len(m.events) - maxEvents
		copy(m.events, m.events[drop:])
		clear(m.events[maxEvents:])
		m.events = m.events[:maxEvents]
	}
	m.frame.dirty = true
}

// togglePause pauses or resumes; resuming starts the tick again, which a
// pause stops (nothing on a frozen frame moves).
func (m *Model) togglePause() tea.Cmd {
	m.paused = !m.paused
	if m.paused {
		m.setStatus("updates paused (p resumes)", false)
		return nil
	}
	m.setStatus("updates resumed", false)
	m.now = m.opts.Now()
	var released tea.Cmd
	if m.pending != nil {
		u := *m.pending
		m.pending = nil
		released = m.apply(u)
	}
	return tea.Batch(released, m.armTick())
}

// armTick starts the tick unless one is on its way (or ticks are off).
func (m *Model) armTick() tea.Cmd {
	if m.ticking || m.opts.Tick <= 0 {
		return nil
	}
	m.ticking = true
	return tick(m.opts.Tick, m.opts.Now())
}
