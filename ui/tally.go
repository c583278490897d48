package ui

import "github.com/dispatchtop/dispatchtop/model"

// tallyCache keeps the counts of the last summary and the sessions they
// are of: a new snapshot shares the sessions nothing touched (the same
// node: nothing beneath it changed, see model.Update), so only the renewed
// ones are counted, and a touch at 10,000 nodes costs a session, not the
// forest.
type tallyCache struct {
	sessions []*model.Node // of the last summary, in their order
	whole    model.Tally
	counted  int // nodes counted, added or taken away, ever (for tests)
}

// summarize is the summary of sessions, with problems problems. Sessions
// are matched by place: a renewed one takes its old one's place, so the
// others are matched. Where the places shift (a session added or gone in
// the middle), the ones after it are counted again: more work, never a
// wrong count.
func (c *tallyCache) summarize(sessions []*model.Node, problems int) model.Summary {
	c.count(sessions)
	// A copy: the snapshot's array is the producer's.
	clear(c.sessions[min(len(sessions), len(c.sessions)):])
	c.sessions = append(c.sessions[:0], sessions...)
	return c.whole.Summary(len(sessions), problems)
}

// summarizeOwned is summarize of sessions the cache may keep (an array
// its caller made for it, not the snapshot's): it keeps them, and hands
// back the array it held, emptied, for the caller's next.
func (c *tallyCache) summarizeOwned(sessions []*model.Node, problems int) (model.Summary, []*model.Node) {
	c.count(sessions)
	held := c.sessions
	c.sessions = sessions
	clear(held)
	return c.whole.Summary(len(sessions), problems), held[:0]
}

// count brings the tally from c.sessions' to sessions'.
func (c *tallyCache) count(sessions []*model.Node) {
	if 2*movedSessions(c.sessions, sessions) > len(sessions) {
		// Most moved: counting them all costs less than taking each away.
		c.whole = model.Tally{}
		for _, s := range sessions {
			c.whole.AddTree(s)
		}
		c.counted += c.whole.Nodes
		return
	}
	for i := range max(len(sessions), len(c.sessions)) {
		var was, is *model.Node
		if i < len(c.sessions) {
			was = c.sessions[i]
		}
		if i < len(sessions) {
			is = sessions[i]
		}
		if was == is {
			continue
		}
		c.renew(was, is)
	}
}

// movedSessions is renewedSessions less those renewed over most of their
// old children, in their places (a host row of a fleet over the sessions
// it shares): renew counts those by the children renewed.
func movedSessions(prev, next []*model.Node) int {
	return countRenewed(prev, next, sharesMost)
}

// renewedSessions counts the sessions of next that are not prev's in the
// same place: renewed, added, or moved by one added or gone before them
// (and those of prev left beyond next's end). A snapshot shares the
// sessions nothing touched with the one before (see model.Update).
func renewedSessions(prev, next []*model.Node) int {
	return countRenewed(prev, next, nil)
}

// countRenewed is renewedSessions, less the renewals kept says are not
// worth counting (nil: none).
func countRenewed(prev, next []*model.Node, kept func(was, is *model.Node) bool) int {
	renewed := max(len(next), len(prev)) - min(len(next), len(prev))
	for i := range min(len(next), len(prev)) {
		if next[i] != prev[i] && (kept == nil || !kept(prev[i], next[i])) {
			renewed++
		}
	}
	return renewed
}
