package ui

// The tree's rows on screen: each row's cells, laid out in the columns and styled.

import (
	"strings"
	"time"
	"unsafe"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

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
			m.reageRow(&sr, c)
		} else {
			sr = m.renderRow(m.rows[i], key, c)
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
	// ages are the cells of the columns whose text moves with the clock
	// (column.ages), left to right.
	ages []agedCell
}

// agedCell is where a clock-moving cell sits in a shownRow's line: col is
// its index among the laid-out columns, raw its text before fitting as of
// the line's instant, and line[at:at+n] the fitted text (at -1: it cannot
// be overwritten there, the row is rendered again).
type agedCell struct {
	col   int
	raw   string
	at, n int
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

// reageRow brings sr's ages to m.now: each clock-moving cell is drawn
// again through its column's cell and put where the column placed it, or
// the row is rendered again where one cannot be. It reports whether the
// line changed.
func (m *Model) reageRow(sr *shownRow, c columns) bool {
	var raws [4]string // most rows have two clock-moving cells: no allocation
	moved := raws[:0]
	rc := m.rowCtx(sr.row(), sr.key.guide)
	changed, splice := false, true
	for _, a := range sr.ages {
		lc := &c.laid[a.col]
		raw := lc.cell(m, rc, lc.width)
		moved = append(moved, raw)
		if raw != a.raw {
			changed = true
			splice = splice && a.at >= 0
		}
	}
	if !changed {
		return false
	}
	if !splice {
		*sr = m.renderRow(sr.row(), sr.key, c)
		return true
	}
	// The line again in one piece: each moved cell fitted and put in its
	// place, what lies between copied; a cell after one whose length
	// changed moves with it.
	var b strings.Builder
	b.Grow(len(sr.line) + 8)
	from, shift := 0, 0
	for k := range sr.ages {
		a := &sr.ages[k]
		if moved[k] == a.raw {
			a.at += shift
			continue
		}
		cell := c.laid[a.col].fitCell(moved[k])
		b.WriteString(sr.line[from:a.at])
		from = a.at + a.n
		shift += len(cell) - a.n
		a.at, a.n, a.raw = b.Len(), len(cell), moved[k]
		b.WriteString(cell)
	}
	b.WriteString(sr.line[from:])
	sr.line = b.String()
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

// renderRow styles row r of key k in the columns c; the line it returns
// remembers where its clock-moving cells sit (shownRow).
func (m *Model) renderRow(r row, k rowKey, c columns) shownRow {
	rc := m.rowCtx(r, k.guide)
	sr := shownRow{key: k}
	cells := m.rowCells(rc, &sr, c)
	if k.picked {
		// The selected row is one style end to end: drawn again when its
		// ages move, the only row a tick styles.
		sr.line = m.styles.Selected.Render(fit(joinCells(c, cells), c.screen))
		return sr
	}
	p := rowPainter{sr: &sr, cells: cells, buf: m.frame.rowBuf[:0]}
	for i := 0; i < len(c.laid); i++ {
		lc := &c.laid[i]
		if lc.rest && lc.width == 0 {
			break
		}
		if lc.sep {
			p.buf = append(p.buf, ' ')
		}
		start := len(p.buf)
		if lc.paint != nil {
			p.buf = lc.paint(m, rc, p.buf, cells[i], lc.width)
			p.placed(i, i+1, start, cells[i])
			continue
		}
		// Styles cost a Render each: the muted columns side by side in one.
		j := i + 1
		for j < len(c.laid) && c.laid[j].paint == nil && c.laid[j].sep {
			j++
		}
		run := strings.Join(cells[i:j], " ")
		p.buf = append(p.buf, m.styles.Muted.Render(run)...)
		p.placed(i, j, start, run)
		i = j - 1
	}
	sr.line = string(p.buf)
	m.frame.rowBuf = p.buf[:0]
	if c.fixed() > c.screen {
		// The fixed columns alone overflow a very narrow screen: cut the row.
		sr.line = truncate(sr.line, c.screen)
		for k := range sr.ages {
			sr.ages[k].at = -1
		}
	}
	return sr
}

// rowCells are the fitted texts of a row's cells, one a laid-out column
// (in an array the next row reuses); the clock-moving ones are noted in
// sr.ages.
func (m *Model) rowCells(rc rowCtx, sr *shownRow, c columns) []string {
	cells := m.frame.cells
	if cap(cells) < len(c.laid) {
		cells = make([]string, len(c.laid))
		m.frame.cells = cells
	}
	cells = cells[:len(c.laid)]
	for i := range c.laid {
		lc := &c.laid[i]
		raw := lc.cell(m, rc, lc.width)
		if lc.rest && sr.key.picked {
			// The selected row's reason is cut with the whole line.
			cells[i] = termtext.Line(raw)
		} else {
			cells[i] = lc.fitCell(raw)
		}
		if lc.ages && lc.width > 0 {
			sr.ages = append(sr.ages, agedCell{col: i, raw: raw, at: -1})
		}
	}
	return cells
}

// joinCells is a row's cells in one plain line, with their separators.
func joinCells(c columns, cells []string) string {
	var b strings.Builder
	for i, lc := range c.laid {
		if lc.rest && lc.width == 0 {
			break
		}
		if lc.sep {
			b.WriteByte(' ')
		}
		b.WriteString(cells[i])
	}
	return b.String()
}

// rowPainter is a row's line as its cells are appended to it, and where
// in it the clock-moving ones are.
type rowPainter struct {
	buf   []byte
	sr    *shownRow
	cells []string
	next  int // the next of sr.ages to place
}

// placed notes where the cells from to to, joined by separators (plain),
// were written from start on: a clock-moving cell among them is at its
// text in what was written (the column's offset in the run), when the
// style kept the run's text as it is.
func (p *rowPainter) placed(from, to, start int, plain string) {
	if p.next >= len(p.sr.ages) || p.sr.ages[p.next].col >= to {
		return
	}
	// The bytes written, looked at in place: nothing appends to them
	// while Index reads.
	written := unsafe.String(unsafe.SliceData(p.buf[start:]), len(p.buf)-start)
	at := strings.Index(written, plain)
	if at < 0 {
		return
	}
	off := start + at
	for x := from; x < to; x++ {
		if p.next < len(p.sr.ages) && p.sr.ages[p.next].col == x {
			p.sr.ages[p.next].at, p.sr.ages[p.next].n = off, len(p.cells[x])
			p.next++
		}
		off += len(p.cells[x]) + 1
	}
}
