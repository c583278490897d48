package ui

// The tree's columns as data: one declaration a column (its head, its
// width rule, the screen width below which it is dropped, its cell and how
// a row colours it), which the column head, the rows, the width allocator
// and the tick all read. A new column is one row of treeColumns.

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/internal/glyph"
	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

// column is one column of the tree.
type column struct {
	head string
	// The width rule, one of three. A fixed column has width cells. A grow
	// column (width 0) has at least wide from 80 columns on and takes a
	// third of what the rest column has past its want, up to most; below
	// 80 the grow columns share what the others leave, each but the last
	// share percent of it. The rest column (rest, the last) takes what is
	// left: at least least, and want is what it asks before the grow
	// columns get more.
	width       int
	wide, most  int
	share       int
	rest        bool
	least, want int
	// dropBelow: the column is left out on a screen narrower than this
	// (SPEC §6's order); 0 keeps it at any width.
	dropBelow int
	// tight: no separator between this column and the next (the mark cell
	// touches NODE).
	tight bool
	// cell is a row's text in the column before it is fitted; w is the
	// column's width (NODE fits its label itself, keeping the id's tail).
	cell func(m *Model, rc rowCtx, w int) string
	// ages: the text moves with the clock, and a tick draws it again
	// (reage) without styling the row anew.
	ages bool
	// paint appends the fitted cell, coloured, to dst for a row that is
	// not the selected one; nil draws it muted, in one run with its muted
	// neighbours.
	paint func(m *Model, rc rowCtx, dst []byte, cell string, w int) []byte
}

// treeColumns is the tree's columns, left to right. Below 110 columns they
// are dropped in the order of SPEC §6: RT and CFA, then PID (below 100),
// BEAT (below 72), REASON (below 64) and BELOW (below 44); NODE, STATE and
// ACTION stay at any width.
var treeColumns = []column{
	{head: " ", width: markWidth, tight: true, cell: markCell, paint: paintMark},
	{head: "NODE", wide: nameWide, most: nameMax, share: 55, cell: nameCell, paint: paintName},
	{head: "STATE", wide: stateWide, most: stateMax, cell: stateCell, paint: paintState},
	{head: "ACTION", width: 7, cell: actionCell, paint: paintAction},
	{head: "BELOW", width: 9, dropBelow: 44, cell: belowCell, paint: paintBelow},
	{head: "BEAT", width: 6, dropBelow: 72, cell: beatCell, ages: true},
	{head: "PID", width: 7, dropBelow: 100, cell: pidCell},
	{head: "CFA", width: 9, dropBelow: 110, cell: cfaCell},
	{head: "RT", width: 2, dropBelow: 110, cell: retriesCell},
	{head: "REASON", rest: true, least: reasonMin, want: reasonWant, dropBelow: 64, cell: reasonText, ages: true, paint: paintReason},
}

// markWidth is the leading cell that shows a `v` mark (`*`).
const markWidth = 1

// reasonMin is the least a reason column is worth showing at.
const reasonMin = 10

// From 80 columns on, NODE and STATE have what a tree's names and a state
// with a flag or two need (nameWide, stateWide); the reason takes what is
// left, up to reasonWant, enough for a typical one ("heartbeat 12m old,
// pid 4242 gone"). What is left past that is shared in thirds: NODE (for
// deeper trees, up to nameMax), STATE (for more flags, up to stateMax) and
// the reason.
const (
	nameWide, stateWide = 20, 18
	nameMax, stateMax   = 40, 30
	reasonWant          = 40
)

// rowCtx is what a row's cells are drawn from: the row, its guides, and
// what several cells look up (the host a host row stands for).
// It is passed by value: a pointer handed to a column's functions would
// move it to the heap at every row.
type rowCtx struct {
	r      row
	guide  string
	marked bool
	host   *model.Host // the host a host row stands for, or nil
}

func (m *Model) rowCtx(r row, guide string) rowCtx {
	rc := rowCtx{r: r, guide: guide, marked: m.marked[r.node.ID]}
	if _, ok := m.host(r.node); ok {
		rc.host = &m.hosts[m.hostOf[r.node.ID]]
	}
	return rc
}

func markCell(_ *Model, rc rowCtx, _ int) string {
	if rc.marked {
		return "*"
	}
	return " "
}

// nameCell is the guides, the fold marker, the state's glyph and the label
// fitted to what is left of w (its id's tail kept, see fitLabel).
func nameCell(_ *Model, rc rowCtx, w int) string {
	n := rc.r.node
	marker := " "
	if rc.r.hasKids {
		marker = "▾"
		if rc.r.collapsed {
			marker = "▸"
		}
	}
	mark := glyph.State(n.State)
	tagline, short, tail := labelPartsShort(n)
	if rc.host != nil {
		mark, tagline, short, tail = hostGlyph, "", "", termtext.Line(n.ID)
	}
	prefix := rc.guide + marker + mark + " "
	return prefix + fitLabel(tagline, short, tail, w-ansi.StringWidth(prefix))
}

func stateCell(_ *Model, rc rowCtx, _ int) string {
	if rc.host != nil {
		return hostWord(*rc.host)
	}
	return stateWords(rc.r.node)
}

func actionCell(_ *Model, rc rowCtx, _ int) string {
	if n := rc.r.node; needsAction(n) {
		return string(n.Action)
	}
	return "-"
}

func belowCell(_ *Model, rc rowCtx, _ int) string {
	if rc.r.roll != nil {
		return rc.r.roll.String()
	}
	return ""
}

func beatCell(m *Model, rc rowCtx, _ int) string { return beatText(rc.r.node, m.now) }

func pidCell(_ *Model, rc rowCtx, _ int) string {
	if p := rc.r.node.PID(); p != 0 {
		return strconv.Itoa(p)
	}
	return "-"
}

func cfaCell(_ *Model, rc rowCtx, _ int) string {
	if n := rc.r.node; n.Cfa != nil && n.Cfa.State != "" {
		return termtext.Line(n.Cfa.State)
	}
	return "-"
}

func retriesCell(_ *Model, rc rowCtx, _ int) string {
	if n := rc.r.node; n.Retries.Total > 0 {
		return strconv.Itoa(n.Retries.Total)
	}
	return "-"
}

// reasonText is the reason as of m.now, cleaned where it is drawn.
func reasonText(m *Model, rc rowCtx, _ int) string { return rc.r.node.ReasonAt(m.now) }

// stateStyle is the colour of a row's glyph and state word: a host row's
// reachability takes the state's place.
func (m *Model) rowStateStyle(rc rowCtx) lipgloss.Style {
	if rc.host != nil {
		return m.hostStyle(*rc.host)
	}
	return m.styles.stateStyle(rc.r.node.State)
}

func paintMark(m *Model, _ rowCtx, dst []byte, cell string, _ int) []byte {
	if cell != " " {
		return append(dst, m.styles.Title.Render(cell)...)
	}
	return append(dst, cell...)
}

// paintName: guides muted, glyph in the state's colour, label plain (muted
// where the row only leads to a match).
func paintName(m *Model, rc rowCtx, dst []byte, cell string, w int) []byte {
	st := m.styles
	gw := ansi.StringWidth(rc.guide) + 1
	label := st.Text
	if !rc.r.match {
		label = st.Muted
	}
	dst = append(dst, st.Muted.Render(ansi.Cut(cell, 0, gw))...)
	dst = append(dst, m.rowStateStyle(rc).Render(ansi.Cut(cell, gw, gw+1))...)
	return append(dst, label.Render(ansi.Cut(cell, gw+1, w))...)
}

// paintState: the state word coloured, flags in the warning colour.
func paintState(m *Model, rc rowCtx, dst []byte, cell string, w int) []byte {
	st := m.styles
	sw := min(len(rc.r.node.State), w)
	if rc.host != nil {
		sw = w
	}
	flags := st.Warning
	if rc.r.node.HasFlag(model.FlagBlocked) {
		flags = st.Blocked
	}
	dst = append(dst, m.rowStateStyle(rc).Render(ansi.Cut(cell, 0, sw))...)
	return append(dst, flags.Render(ansi.Cut(cell, sw, w))...)
}

func paintAction(m *Model, _ rowCtx, dst []byte, cell string, _ int) []byte {
	if cell[0] == '-' {
		return append(dst, cell...) // nothing to do: no colour
	}
	return append(dst, m.styles.Action.Render(cell)...)
}

// paintBelow: a roll-up with the dead, the missing or something to act on
// below in the warning colour, others muted, an empty one plain.
func paintBelow(m *Model, rc rowCtx, dst []byte, cell string, _ int) []byte {
	roll := rc.r.roll
	switch {
	case roll == nil || strings.TrimSpace(cell) == "":
		return append(dst, cell...)
	case roll.state == model.StateDead || roll.state == model.StateMissing || roll.actions > 0:
		return append(dst, m.styles.Warning.Render(cell)...)
	}
	return append(dst, m.styles.Muted.Render(cell)...)
}

func paintReason(m *Model, _ rowCtx, dst []byte, cell string, _ int) []byte {
	if fc := &m.frame; fc.reasonWrapOK {
		dst = append(dst, fc.reasonWrap.open...)
		dst = append(dst, cell...)
		return append(dst, fc.reasonWrap.close...)
	}
	return append(dst, m.styles.Text.Render(cell)...)
}

// laidColumn is a column as laid out at one screen width.
type laidColumn struct {
	*column
	width int
	sep   bool // a separator before it
}

// columns are the tree's columns shown at one screen width, with their
// widths; the dropped ones are left out. They depend on the width alone,
// never on the rows, so a filter or a new node does not move them.
type columns struct {
	laid   []laidColumn
	screen int
}

// fitCell is a cell's text fitted to the column: padded to its width, or
// for the rest column cleaned and cut to what it has.
func (lc *laidColumn) fitCell(text string) string {
	if lc.rest {
		return truncate(termtext.Line(text), lc.width)
	}
	return fit(text, lc.width)
}

// layoutColumns lays table out on a screen width cells wide.
func layoutColumns(table []column, width int) columns {
	c := columns{screen: width}
	tight := true // the first column has no separator before it
	var grow []int
	rest := -1
	for i := range table {
		col := &table[i]
		if width < col.dropBelow {
			continue
		}
		lc := laidColumn{column: col, width: col.width, sep: !tight}
		tight = col.tight
		switch {
		case col.rest:
			rest = len(c.laid)
		case col.width == 0:
			grow = append(grow, len(c.laid))
		}
		c.laid = append(c.laid, lc)
	}
	if width >= 80 {
		for _, i := range grow {
			c.laid[i].width = c.laid[i].wide
		}
		if rest >= 0 {
			c.laid[rest].width = max(0, width-c.fixed()-1)
			if surplus := c.laid[rest].width - c.laid[rest].want; surplus > 0 {
				for _, i := range grow {
					c.laid[i].width = min(c.laid[i].most, c.laid[i].wide+surplus/3)
				}
			}
		}
	} else {
		c.share(grow, rest, width)
	}
	if rest >= 0 {
		c.laid[rest].width = max(0, width-c.fixed()-1)
	}
	return c
}

// share gives the grow columns what the others leave below 80 columns:
// each its share of it, the last what is left, within 4 and wide.
func (c *columns) share(grow []int, rest, width int) {
	other := 0
	for i, lc := range c.laid {
		switch {
		case i == rest:
			other += lc.least + 1
		case lc.width > 0:
			other += lc.width
			if lc.sep {
				other++
			}
		case lc.sep:
			width-- // a grow column's separator
		}
	}
	avail := max(8, width-other)
	given := 0
	for k, i := range grow {
		lc := &c.laid[i]
		if k < len(grow)-1 {
			lc.width = min(lc.wide, max(4, avail*lc.share/100))
		} else {
			lc.width = min(lc.wide, max(4, avail-given))
		}
		given += lc.width
	}
}

// fixed is the width of every column but the rest column, with separators.
func (c columns) fixed() int {
	used := 0
	for _, lc := range c.laid {
		if lc.rest {
			continue
		}
		used += lc.width
		if lc.sep {
			used++
		}
	}
	return used
}

// restWidth is what the rest column (the reason) has, 0 where it is dropped.
func (c columns) restWidth() int {
	if n := len(c.laid); n > 0 && c.laid[n-1].rest {
		return c.laid[n-1].width
	}
	return 0
}

// width is the width of the column headed head, 0 where it is dropped.
func (c columns) width(head string) int {
	for _, lc := range c.laid {
		if lc.head == head {
			return lc.width
		}
	}
	return 0
}

// offset is where the column headed head starts on a row, in cells, or
// -1 where it is dropped.
func (c columns) offset(head string) int {
	at := 0
	for _, lc := range c.laid {
		if lc.sep {
			at++
		}
		if lc.head == head {
			return at
		}
		at += lc.width
	}
	return -1
}

// columns are the tree's columns at width w, laid out once a width (the
// frame's cache holds them).
func (m *Model) columns(w int) columns {
	if fc := &m.frame; fc.cols.laid == nil || fc.cols.screen != w {
		fc.cols = layoutColumns(m.table, w)
	}
	return m.frame.cols
}
