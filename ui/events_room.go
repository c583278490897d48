package ui

// makeRoom lets n more events into a full event pane at the cost of one
// shift: the oldest that n more would push out go at once, before they are
// added, so that addEvent, which shifts the whole pane for each event past
// its bound, never has to. A fleet's update brings hundreds of transitions
// a second into a pane full since the first hour (SPEC §8: the fleet view's
// CPU under churn); one shift each was 10,000 events moved per transition.
func (m *Model) makeRoom(n int) {
	drop := len(m.events) + min(n, maxEvents) - maxEvents
	if drop <= 0 {
		return
	}
	drop = min(drop, len(m.events))
	kept := copy(m.events, m.events[drop:])
	clear(m.events[kept:])
	m.events = m.events[:kept]
}
