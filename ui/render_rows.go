package ui

// The tree's rows on screen: each row's cells, laid out in the columns and styled.

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

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

// renderTree renders the rows on screen, and only those.
func (m *Model) renderTree(w int) []string {
	h := m.treeHeight()
	if len(m.rows) == 0 {
		msg := "no nodes"
		if m.textFilter != "" || m.state != filterAll {
			msg = "no node matches the filter (esc clears it)"
		} else if m.snap == nil {
			msg = "scanning…"
		}
		return []string{m.styles.Muted.Render(fit("  "+msg, w))}
	}
	c := m.columns(w)
	out := make([]string, 0, h)
	end := min(len(m.rows), m.offset+h)
	for i := m.offset; i < end; i++ {
		out = append(out, m.renderRow(m.rows[i], guide(m.rows, i), c, w, i == m.cursor))
	}
	return out
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
	glyph := stateGlyph(n.State)
	rc.state = stateWords(n)
	tagline, tail := labelParts(n)
	if h, ok := m.host(n); ok {
		glyph, tagline, tail = hostGlyph, "", clean(n.ID)
		rc.state = hostWord(h)
	}
	rc.prefix = guide + marker + glyph + " "
	rc.label = fitLabel(tagline, tail, c.name-ansi.StringWidth(rc.prefix))
	rc.name = rc.prefix + rc.label
	rc.beat = "-"
	if !n.BeatMtime.IsZero() {
		rc.beat = model.FormatAge(m.now.Sub(n.BeatMtime))
	}
	rc.pid = "-"
	if p := n.PID(); p != 0 {
		rc.pid = strconv.Itoa(p)
	}
	rc.cfa = "-"
	if n.Cfa != nil && n.Cfa.State != "" {
		rc.cfa = clean(n.Cfa.State)
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
	rc.reason = clean(n.ReasonAt(m.now))
	return rc
}

func (m *Model) renderRow(r row, guide string, c columns, w int, selected bool) string {
	st := m.styles
	rc := m.rowCells(r, guide, c)
	reasonW := c.reasonWidth(w)
	cells := rowText(c, rc.mark, rc.name, rc.state, rc.action, rc.below, rc.beat, rc.pid, rc.cfa, rc.retries)
	if selected {
		line := cells[0] + strings.Join(cells[1:], " ")
		if reasonW > 0 {
			line += " " + rc.reason
		}
		return st.Selected.Render(fit(line, w))
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
	gw := ansi.StringWidth(guide) + 1
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
	b.WriteString(st.Action.Render(cells[3]))
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
		b.WriteString(" " + st.Muted.Render(strings.Join(cells[i:], " ")))
	}
	if reasonW > 0 {
		b.WriteByte(' ')
		b.WriteString(st.Text.Render(truncate(rc.reason, reasonW)))
	}
	if c.fixed() > w {
		// The fixed columns alone overflow a very narrow screen: cut the row.
		return truncate(b.String(), w)
	}
	return b.String()
}
