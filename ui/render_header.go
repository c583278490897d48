package ui

// The header: title, state and flag counts, notes, the column head — the
// same lines whatever comes and goes, so the rows never move.

import (
	"fmt"
	"maps"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/internal/glyph"
	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

// renderHeader is the title line, the state counts, the flag counts, the
// notes and the column head: always the same lines, whatever comes and
// goes (a `quiet` flag, a filter, a pause), so the rows never move. What
// does not fit a line is counted at its end ("+3 more").
func (m *Model) renderHeader(w int) []string {
	snap := m.snap
	header := []string{m.renderTitle(w)}

	var sum model.Summary
	if snap != nil {
		sum = m.sum
	}
	header = append(header, m.countLines(sum, w)...)
	if len(m.hosts) > 0 {
		header = append(header, m.renderHostsLine(w))
	}
	header = append(header, packLines(m.watchNotes(), w, 1)...)

	if m.mode == modeTree {
		header = append(header, m.renderColumnHead(w))
	}
	return header
}

// countsMemo is the header's count lines as last drawn, and what they were
// drawn from: most updates (a beat) move no count, and the lines cost
// half of what such an update costs the dashboard.
type countsMemo struct {
	sum    model.Summary
	w      int
	epoch  int // rowEpoch: a theme restyles them
	lines  []string
	filled bool
}

// countLines is the state and flag counts' lines for sum at width w.
func (m *Model) countLines(sum model.Summary, w int) []string {
	c := &m.frame.counts
	if c.filled && c.w == w && c.epoch == m.frame.rowEpoch && sameCounts(c.sum, sum) {
		return c.lines
	}
	lines := m.renderCounts(sum, w)
	*c = countsMemo{sum: sum, w: w, epoch: m.frame.rowEpoch, lines: lines, filled: true}
	return lines
}

// sameCounts reports whether a and b give the same count lines: the counts
// renderCounts draws are equal.
func sameCounts(a, b model.Summary) bool {
	return a.Nodes == b.Nodes && a.Sessions == b.Sessions && a.Running == b.Running && a.Dead == b.Dead &&
		a.Finished == b.Finished && a.Missing == b.Missing && a.Problems == b.Problems && maps.Equal(a.ByFlag, b.ByFlag)
}

// renderCounts is the state line and the flag line: every state, as glyph,
// number and word (where the words do not fit, as glyph and number, so no
// state's count is ever cut), then the flags present, worst first.
func (m *Model) renderCounts(sum model.Summary, w int) []string {
	st := m.styles
	var header []string
	totals := fmt.Sprintf("%d nodes/%d sessions", sum.Nodes, sum.Sessions)
	states := []string{totals}
	compact := []string{totals}
	for _, s := range model.States {
		n := 0
		switch s {
		case model.StateRunning:
			n = sum.Running
		case model.StateDead:
			n = sum.Dead
		case model.StateFinished:
			n = sum.Finished
		case model.StateMissing:
			n = sum.Missing
		}
		states = append(states, st.stateStyle(s).Render(fmt.Sprintf("%s %d %s", glyph.State(s), n, s)))
		compact = append(compact, st.stateStyle(s).Render(fmt.Sprintf("%s %d", glyph.State(s), n)))
	}
	if _, rest := pack(states, w); len(rest) > 0 {
		states = compact
	}
	header = append(header, packLines(states, w, 1)...)
	// Flags: the ones present, worst first, so a narrow screen cuts the
	// least urgent ones into "+N more".
	var flags []string
	if sum.Problems > 0 {
		flags = append(flags, st.Error.Render(fmt.Sprintf("! %d problems", sum.Problems)))
	}
	for _, f := range flagOrder {
		if n := sum.ByFlag[f]; n > 0 {
			style := st.Warning
			if f == model.FlagBlocked {
				style = st.Blocked
			}
			flags = append(flags, style.Render(fmt.Sprintf("%s %d %s", glyph.Flag(f), n, f)))
		}
	}
	if len(flags) == 0 {
		flags = append(flags, st.Muted.Render("no flags"))
	}
	return append(header, packLines(flags, w, 1)...)
}

// titleKey is what the header's first line is drawn from.
type titleKey struct {
	w, epoch int
	paused   bool
	second   int64   // the clock's, which it shows
	roots    *string // the snapshot's Roots, by their array: a watcher's stay the same
	nRoots   int
}

// renderTitle is the header's first line (titleLine), kept while what it
// shows holds: the one header line a tick moves, once a second.
func (m *Model) renderTitle(w int) string {
	k := titleKey{w: w, epoch: m.frame.rowEpoch, paused: m.paused, second: m.now.Unix()}
	if m.snap != nil && len(m.snap.Roots) > 0 {
		k.roots, k.nRoots = &m.snap.Roots[0], len(m.snap.Roots)
	}
	return m.frame.title.get(k, func() string { return m.titleLine(w) })
}

// titleLine is the header's first line: the title, the roots and the
// clock.
func (m *Model) titleLine(w int) string {
	st := m.styles
	title := "dispatchtop"
	if m.paused {
		// The frame is frozen, the clock included: say so where it is seen.
		title += "  " + st.Warning.Render("PAUSED")
	}
	clock := m.now.Format("15:04:05")
	roots := "no snapshot yet"
	if m.snap != nil && len(m.snap.Roots) > 0 {
		roots = termtext.Line(strings.Join(m.snap.Roots, "  "))
	}
	room := max(0, w-ansi.StringWidth(title)-len(clock)-4)
	line1 := title + "  " + fit(roots, room) + "  " + clock
	return st.Header.Render(fit(line1, w))
}

// packLines puts tokens on at most limit lines of width w; tokens that do
// not fit are replaced, at the end of the last line, by how many they are.
func packLines(tokens []string, w, limit int) []string {
	var lines []string
	for len(tokens) > 0 && len(lines) < limit {
		line, rest := pack(tokens, w)
		if line == "" {
			// A token wider than the screen: shown cut, never skipped.
			line, rest = truncate(tokens[0], w), tokens[1:]
		}
		if len(lines) == limit-1 && len(rest) > 0 {
			more := func(n int) string { return fmt.Sprintf("+%d more", n) }
			line, rest = pack(tokens, max(0, w-len(more(len(tokens)))-2))
			if line == "" {
				line = truncate(more(len(rest)), w)
			} else {
				line += "  " + more(len(rest))
			}
		}
		lines = append(lines, line)
		tokens = rest
	}
	if len(lines) == 0 {
		lines = append(lines, "")
	}
	return lines
}

// pack puts tokens on one line of width w, two spaces apart, and returns
// the ones that did not fit.
func pack(tokens []string, w int) (string, []string) {
	var b strings.Builder
	used := 0
	for i, t := range tokens {
		tw := ansi.StringWidth(t)
		sep := 0
		if i > 0 {
			sep = 2
		}
		if used+sep+tw > w {
			return b.String(), tokens[i:]
		}
		if i > 0 {
			b.WriteString("  ")
		}
		b.WriteString(t)
		used += sep + tw
	}
	return b.String(), nil
}

// watchNotes say how the view is ordered and kept current, and what to
// keep in mind; the sort comes first, so it is never cut.
func (m *Model) watchNotes() []string {
	st := m.styles
	notes := []string{st.Title.Render("sort: " + m.sort.String())}
	if len(m.marked) > 0 {
		notes = append(notes, st.Title.Render(fmt.Sprintf("%d marked", len(m.marked))))
	}
	if m.prompt.typing {
		notes = append(notes, st.Title.Render(m.prompt.View()))
	} else if m.textFilter != "" {
		notes = append(notes, st.Title.Render("/"+termtext.Line(m.textFilter)))
	}
	if m.state != filterAll {
		notes = append(notes, st.Title.Render("show: "+m.state.String()))
	}
	if m.following != "" {
		notes = append(notes, "following "+termtext.Line(m.following))
	}
	if m.snap != nil {
		wi := m.snap.Watch
		switch wi.Mode {
		case "":
			if m.opts.Feed == nil {
				notes = append(notes, "still picture")
			}
		case "polling":
			note := "watch: polling every " + wi.Interval.String()
			if wi.Reason != "" {
				note += " (" + termtext.Line(wi.Reason) + ")"
			}
			notes = append(notes, note)
		default:
			note := "watch: " + wi.Mode
			if wi.Mode == "mixed" && wi.Interval > 0 {
				note += ", polling every " + wi.Interval.String()
			}
			if wi.Reason != "" {
				note += " (" + termtext.Line(wi.Reason) + ")"
			}
			notes = append(notes, note)
		}
		if wi.Overflows > 0 {
			notes = append(notes, st.Warning.Render(fmt.Sprintf("%d event overflows re-stated", wi.Overflows)))
		}
		for _, warn := range wi.Warnings {
			notes = append(notes, st.Warning.Render("⚠ "+termtext.Line(warn)))
		}
		if m.snap.Thresholds.NoPidCheck {
			notes = append(notes, st.Warning.Render("--no-pid-check: liveness from mtimes alone"))
		}
	}
	if m.closed {
		notes = append(notes, st.Warning.Render("watcher stopped"))
	}
	if m.opts.Readonly {
		notes = append(notes, "read-only")
	}
	for _, n := range m.opts.Notes {
		notes = append(notes, st.Warning.Render(termtext.Line(n)))
	}
	return notes
}

// columnHeadKey is what the column head is drawn from: the columns as
// laid out (their array: laid out again, a new one) and the theme.
type columnHeadKey struct {
	w, epoch int
	laid     *laidColumn
}

// renderColumnHead is the column head (columnHeadLine), kept while the
// columns and the theme hold.
func (m *Model) renderColumnHead(w int) string {
	c := m.columns(w)
	k := columnHeadKey{w: w, epoch: m.frame.rowEpoch}
	if len(c.laid) > 0 {
		k.laid = &c.laid[0]
	}
	return m.frame.columnHead.get(k, func() string { return m.columnHeadLine(w) })
}

// columnHeadLine is the columns' heads, each over its column.
func (m *Model) columnHeadLine(w int) string {
	var b strings.Builder
	for _, lc := range m.columns(w).laid {
		if lc.sep {
			b.WriteByte(' ')
		}
		if lc.rest {
			b.WriteString(lc.head)
		} else {
			b.WriteString(fit(lc.head, lc.width))
		}
	}
	return m.styles.ColumnHead.Render(fit(b.String(), w))
}
