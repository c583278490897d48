package ui

// The tree's rows on screen: each row's cells, laid out in the columns and styled.

import (
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/internal/glyph"
	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

// rowText lays a row's cells out in the columns of c (the mark cell first).
func rowText(c columns, mark, name, state, action, below, beat, pid, cfa, retries string) []string {
	cells := []string{fit(mark, markWidth), fit(name, c.name), fit(state, c.state), fit(action, c.action)}
	for _, col := range []struct {
		w    int
		text string
	}{{c.below, below}, {c.beat, beat}, {c.pid, pid}, {c.cfa, cfa}, {c.retries, retries}} {
		if col.w > 0 {
			cells = append(cells, fit(col.text, col.w))
		}
	}
	return cells
}

// renderTree renders the rows on screen, and only those. A row already on
// screen that shows the same thing is not styled again (see shownRow).
func (m *Model) renderTree(w int) []string {
	h := m.treeHeight()
	if len(m.rows) == 0 {
		m.setShown(m.frame.shownSpare[:0])
		msg := "no nodes"
		if m.textFilter != "" || m.state != filterAll {
			msg = "no node matches the filter (esc clears it)"
		} else if m.snap == nil {
			msg = "scanning…"
		}
		return []string{m.styles.Muted.Render(fit("  "+msg, w))}
	}
	c := m.columns(w)
	prev, cur := m.frame.shown, m.frame.shownSpare[:0]
	out := make([]string, 0, h)
	end := min(len(m.rows), m.offset+h)
	for i := m.offset; i < end; i++ {
		key := m.rowKeyOf(i, w)
		var sr shownRow
		if j, ok := m.frame.shownAt[key.node]; ok && prev[j].key == key {
			sr = prev[j]
			m.reageRow(&sr, c, w)
		} else {
			sr = m.renderRow(m.rows[i], key, c, w)
		}
		cur = append(cur, sr)
		out = append(out, sr.line)
	}
	m.setShown(cur)
	return out
}

// setShown makes rows the rows on screen, the ones the next frame reuses;
// the previous ones' array is kept for the frame after, emptied: its rows'
// nodes may be an older snapshot's, which one node keeps whole.
func (m *Model) setShown(rows []shownRow) {
	m.frame.shown, m.frame.shownSpare = rows, m.frame.shown
	clear(m.frame.shownSpare[:cap(m.frame.shownSpare)])
	if m.frame.shownAt == nil {
		m.frame.shownAt = make(map[*model.Node]int, len(rows))
	}
	clear(m.frame.shownAt)
	for j, sr := range rows {
		m.frame.shownAt[sr.key.node] = j
	}
}

// shownRow is a tree row as it is on screen: its line, and where in the
// line its ages sit, so that a tick re-ages the row without styling it
// again (SPEC §8: idle costs what moved, not the frame).
type shownRow struct {
	key  rowKey
	line string
	// beat is the BEAT cell's text before fitting; line[beatAt:beatAt+
	// beatLen] is the fitted cell (beatAt -1: not spliced, re-rendered).
	beat            string
	beatAt, beatLen int
	// reason is the reason as of the line's instant (before cleaning and
	// cutting), and reasonAt where its cell starts in line: the cell ends
	// the line (-1: not spliced, re-rendered).
	reason   string
	reasonAt int
}

// rowKey is everything a row's line depends on but the clock: a row with
// the same key is drawn the same but for its ages. Nodes are compared by
// pointer: a snapshot is never mutated once sent (model.Update), so a
// shared node is the same classification.
type rowKey struct {
	node                                               *model.Node
	guide                                              string
	roll                                               rollup
	hasRoll, hasKids, collapsed, match, marked, picked bool
	width, epoch                                       int
}

func (m *Model) rowKeyOf(i, w int) rowKey {
	r := m.rows[i]
	k := rowKey{
		node: r.node, guide: guide(m.rows, i), hasKids: r.hasKids, collapsed: r.collapsed, match: r.match,
		marked: m.marked[r.node.ID], picked: i == m.cursor, width: w, epoch: m.frame.rowEpoch,
	}
	if r.roll != nil {
		k.roll, k.hasRoll = *r.roll, true
	}
	return k
}

// reageRow brings sr's ages to m.now: the cells are spliced into the line
// where they sit, or the row is rendered again where they cannot be. It
// reports whether the line changed.
func (m *Model) reageRow(sr *shownRow, c columns, w int) bool {
	n := sr.key.node
	beat, reason := sr.beat, sr.reason
	if c.beat > 0 {
		beat = beatText(n, m.now)
	}
	if c.reasonWidth(w) > 0 {
		reason = n.ReasonAt(m.now)
	}
	if beat == sr.beat && reason == sr.reason {
		return false
	}
	var cell string
	if beat != sr.beat {
		cell = fit(beat, c.beat)
	}
	// A cell that does not sit where it can be overwritten (the selected
	// row, a cut one) or whose new text is not as long (an ellipsis): the
	// row is drawn again.
	if (beat != sr.beat && (sr.beatAt < 0 || len(cell) != sr.beatLen)) || (reason != sr.reason && sr.reasonAt < 0) {
		*sr = m.renderRow(sr.row(), sr.key, c, w)
		return true
	}
	// The line again in one piece: up to the BEAT cell, the cell, up to
	// the REASON cell, the cell.
	head, tail := sr.line, ""
	if reason != sr.reason {
		head, tail = sr.line[:sr.reasonAt], m.reasonCell(reason, c.reasonWidth(w))
	}
	var b strings.Builder
	b.Grow(len(head) + len(tail))
	if beat != sr.beat {
		b.WriteString(head[:sr.beatAt])
		b.WriteString(cell)
		b.WriteString(head[sr.beatAt+sr.beatLen:])
	} else {
		b.WriteString(head)
	}
	b.WriteString(tail)
	sr.line, sr.beat, sr.reason = b.String(), beat, reason
	return true
}

// row is the row sr was rendered from, as far as drawing goes.
func (sr *shownRow) row() row {
	r := row{node: sr.key.node, hasKids: sr.key.hasKids, collapsed: sr.key.collapsed, match: sr.key.match}
	if sr.key.hasRoll {
		roll := sr.key.roll
		r.roll = &roll
	}
	return r
}

// beatText is the BEAT cell: the heartbeat's age at now, "-" for none.
func beatText(n *model.Node, now time.Time) string {
	if n.BeatMtime.IsZero() {
		return "-"
	}
	return model.FormatAge(now.Sub(n.BeatMtime))
}

// reasonCell is the REASON cell that ends a row: reason (as ReasonAt gives
// it) cleaned and cut to width w.
func (m *Model) reasonCell(reason string, w int) string {
	text := truncate(termtext.Line(reason), w)
	if m.frame.reasonWrapOK {
		return " " + m.frame.reasonWrap.open + text + m.frame.reasonWrap.close
	}
	return " " + m.styles.Text.Render(text)
}

// rowCells are the plain texts of a row's cells; the name is already
// fitted to its column (its id tail kept, see fitLabel).
type rowCells struct {
	mark, prefix, label, name, state, action, below, beat, pid, cfa, retries, reason string
}

func (m *Model) rowCells(r row, guide string, c columns) rowCells {
	n := r.node
	var rc rowCells
	rc.mark = " "
	if m.marked[n.ID] {
		rc.mark = "*"
	}
	marker := " "
	if r.hasKids {
		marker = "▾"
		if r.collapsed {
			marker = "▸"
		}
	}
	mark := glyph.State(n.State)
	rc.state = stateWords(n)
	tagline, short, tail := labelPartsShort(n)
	if h, ok := m.host(n); ok {
		mark, tagline, short, tail = hostGlyph, "", "", termtext.Line(n.ID)
		rc.state = hostWord(h)
	}
	rc.prefix = guide + marker + mark + " "
	rc.label = fitLabel(tagline, short, tail, c.name-ansi.StringWidth(rc.prefix))
	rc.name = rc.prefix + rc.label
	rc.beat = beatText(n, m.now)
	rc.pid = "-"
	if p := n.PID(); p != 0 {
		rc.pid = strconv.Itoa(p)
	}
	rc.cfa = "-"
	if n.Cfa != nil && n.Cfa.State != "" {
		rc.cfa = termtext.Line(n.Cfa.State)
	}
	rc.retries = "-"
	if n.Retries.Total > 0 {
		rc.retries = strconv.Itoa(n.Retries.Total)
	}
	rc.action = string(n.Action)
	if !needsAction(n) {
		rc.action = "-"
	}
	if r.roll != nil {
		rc.below = r.roll.String()
	}
	rc.reason = n.ReasonAt(m.now) // cleaned where it is drawn
	return rc
}

// renderRow styles row r of key k; the line it returns remembers where its
// ages sit (shownRow).
func (m *Model) renderRow(r row, k rowKey, c columns, w int) shownRow {
	st := m.styles
	rc := m.rowCells(r, k.guide, c)
	sr := shownRow{key: k, beat: rc.beat, beatAt: -1, reason: rc.reason, reasonAt: -1}
	reasonW := c.reasonWidth(w)
	cells := rowText(c, rc.mark, rc.name, rc.state, rc.action, rc.below, rc.beat, rc.pid, rc.cfa, rc.retries)
	if k.picked {
		// The selected row is one style end to end: drawn again when its
		// ages move, the only row a tick styles.
		line := cells[0] + strings.Join(cells[1:], " ")
		if reasonW > 0 {
			line += " " + termtext.Line(rc.reason)
		}
		sr.line = st.Selected.Render(fit(line, w))
		return sr
	}
	stateStyle := st.stateStyle(r.node.State)
	sw := min(len(r.node.State), c.state)
	if h, ok := m.host(r.node); ok {
		// A host row: its reachability word takes the state's place.
		stateStyle, sw = m.hostStyle(h), c.state
	}
	var b strings.Builder
	// Styles cost a Render each: plain text for what carries nothing (no
	// mark, an empty roll-up), one Render for the muted columns together.
	if rc.mark != " " {
		b.WriteString(st.Title.Render(cells[0]))
	} else {
		b.WriteString(cells[0])
	}
	// The name: guides muted, glyph in the state's colour, label plain.
	nameCell := cells[1]
	gw := ansi.StringWidth(k.guide) + 1
	b.WriteString(st.Muted.Render(ansi.Cut(nameCell, 0, gw)))
	b.WriteString(stateStyle.Render(ansi.Cut(nameCell, gw, gw+1)))
	label := ansi.Cut(nameCell, gw+1, c.name)
	if !r.match {
		b.WriteString(st.Muted.Render(label))
	} else {
		b.WriteString(st.Text.Render(label))
	}
	b.WriteByte(' ')
	// State word coloured, flags in the warning colour.
	stateCell := cells[2]
	b.WriteString(stateStyle.Render(ansi.Cut(stateCell, 0, sw)))
	flagStyle := st.Warning
	if r.node.HasFlag(model.FlagBlocked) {
		flagStyle = st.Blocked
	}
	b.WriteString(flagStyle.Render(ansi.Cut(stateCell, sw, c.state)))
	b.WriteByte(' ')
	if rc.action == "-" {
		b.WriteString(cells[3]) // nothing to do: no colour
	} else {
		b.WriteString(st.Action.Render(cells[3]))
	}
	i := 4
	if c.below > 0 {
		switch {
		case rc.below == "":
			b.WriteString(" " + cells[i])
		case r.roll.state == model.StateDead || r.roll.state == model.StateMissing || r.roll.actions > 0:
			b.WriteString(" " + st.Warning.Render(cells[i]))
		default:
			b.WriteString(" " + st.Muted.Render(cells[i]))
		}
		i++
	}
	if i < len(cells) {
		b.WriteByte(' ')
		muted := strings.Join(cells[i:], " ")
		run := st.Muted.Render(muted)
		if at := strings.Index(run, muted); c.beat > 0 && at >= 0 {
			// The BEAT cell opens the muted run, as it is: a tick overwrites it there.
			sr.beatAt, sr.beatLen = b.Len()+at, len(cells[i])
		}
		b.WriteString(run)
	}
	if reasonW > 0 {
		sr.reasonAt = b.Len()
		b.WriteString(m.reasonCell(rc.reason, reasonW))
	}
	sr.line = b.String()
	if c.fixed() > w {
		// The fixed columns alone overflow a very narrow screen: cut the row.
		sr.line, sr.beatAt, sr.reasonAt = truncate(sr.line, w), -1, -1
	}
	return sr
}
