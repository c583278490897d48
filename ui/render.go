package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/model"
)

var dialogBorder = lipgloss.RoundedBorder()

// columns are the widths of the tree's columns at one screen width (0: the
// column is dropped); the reason takes what is left. They depend on the
// width alone, never on the rows, so a filter or a new node does not move
// them. Below 110 columns they are dropped in the order of SPEC §6: RT and
// CFA, then PID (below 100), BEAT (below 72), REASON (below 64) and BELOW
// (below 44); NODE, STATE and ACTION stay at any width.
type columns struct {
	name, state, action, below, beat, pid, cfa, retries int
	reason                                              bool
}

// markWidth is the leading cell that shows a `v` mark (`*`).
const markWidth = 1

// reasonMin is the least a reason column is worth showing at.
const reasonMin = 10

func layoutColumns(width int) columns {
	c := columns{action: 7, below: 9, beat: 6, pid: 7, cfa: 9, retries: 2, reason: true}
	if width >= 110 {
		c.below = 10
		c.name = min(40, width/5+2)
		c.state = 24
		if width >= 140 {
			c.state = 30
		}
		return c
	}
	c.cfa, c.retries = 0, 0
	if width < 100 {
		c.pid = 0
	}
	if width < 72 {
		c.beat = 0
	}
	if width < 64 {
		c.reason = false
	}
	if width < 44 {
		c.below = 0
	}
	if width >= 80 {
		c.name = 20 + (width-80)/3
		c.state = 18 + (width-80)/6
		return c
	}
	// Below 80, NODE and STATE share what the other columns leave.
	other := markWidth + c.action + 1
	for _, col := range []int{c.below, c.beat} {
		if col > 0 {
			other += col + 1
		}
	}
	if c.reason {
		other += reasonMin + 1
	}
	avail := max(8, width-other-1)
	c.name = min(20, max(4, avail*55/100))
	c.state = min(18, max(4, avail-c.name))
	return c
}

// reasonWidth is what the reason column gets at width w.
func (c columns) reasonWidth(w int) int {
	if !c.reason {
		return 0
	}
	return max(0, w-c.fixed()-1)
}

// fixed is the width of every column but the reason, with separators.
func (c columns) fixed() int {
	used := markWidth + c.name
	for _, col := range []int{c.state, c.action, c.below, c.beat, c.pid, c.cfa, c.retries} {
		if col > 0 {
			used += 1 + col
		}
	}
	return used
}

// layout works out the shape of the next frame from the model: the
// header's lines (its height depends on what it holds), the detail pane's
// lines, and the scroll offsets that keep the cursor and the details on
// screen within them. Update runs it after each change, so View only draws.
func (m *Model) layout() {
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		return
	}
	m.header = m.renderHeader(w)
	m.headerH = len(m.header)
	m.scrollToCursor()
	m.detail = nil
	if m.mode == modeDetail {
		m.detail = m.detailView(w)
		m.layoutDetail(w, h-m.headerH-footerLines)
	}
	if m.eventsOpen && m.mode == modeTree {
		m.layoutEvents(w, m.eventPaneHeight())
	}
}

// render builds the whole frame from the model as layout left it.
func (m *Model) render() string {
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		return ""
	}
	lines := make([]string, 0, h)
	lines = append(lines, m.header...)
	var body []string
	switch m.mode {
	case modeDetail:
		body = m.renderDetail(w, h-len(lines)-footerLines)
	case modeHelp:
		body = m.renderHelp(w, h-len(lines)-footerLines)
	default:
		body = m.renderTree(w)
		if m.eventsOpen {
			// The pane keeps its place under the tree's whole height, where
			// the wheel looks for it, however few rows a filter leaves.
			for len(body) < m.treeHeight() {
				body = append(body, "")
			}
			body = append(body, m.renderEvents(w, m.eventPaneHeight())...)
		}
	}
	want := max(0, h-len(lines)-footerLines)
	for len(body) < want {
		body = append(body, "")
	}
	body = body[:want]
	if m.dialog != nil {
		overlay(body, m.renderDialog(w), w)
	}
	lines = append(lines, body...)
	lines = append(lines, m.renderStatus(w), m.renderShortHelp(w))
	if len(lines) > h {
		lines = lines[:h]
	}
	return strings.Join(lines, "\n")
}

// overlay centres box over body, replacing the lines it covers.
func overlay(body, box []string, w int) {
	top := max(0, (len(body)-len(box))/2)
	bw := 0
	for _, l := range box {
		bw = max(bw, ansi.StringWidth(l))
	}
	left := strings.Repeat(" ", max(0, (w-bw)/2))
	for i, l := range box {
		if top+i >= len(body) {
			break
		}
		body[top+i] = truncate(left+l, w)
	}
}

// renderHeader is the title line, the state counts, the flag counts, the
// notes and the column head: always the same lines, whatever comes and
// goes (a `quiet` flag, a filter, a pause), so the rows never move. What
// does not fit a line is counted at its end ("+3 more").
func (m *Model) renderHeader(w int) []string {
	st := m.styles
	snap := m.snap
	title := "dispatchtop"
	if m.paused {
		// The frame is frozen, the clock included: say so where it is seen.
		title += "  " + st.Warning.Render("PAUSED")
	}
	clock := m.now.Format("15:04:05")
	roots := "no snapshot yet"
	if snap != nil && len(snap.Roots) > 0 {
		roots = clean(strings.Join(snap.Roots, "  "))
	}
	room := max(0, w-ansi.StringWidth(title)-len(clock)-4)
	line1 := title + "  " + fit(roots, room) + "  " + clock
	header := []string{st.Header.Render(fit(line1, w))}

	var sum model.Summary
	if snap != nil {
		sum = m.sum
	}
	// States: every one, as glyph, number and word; where the words do not
	// fit, as glyph and number, so no state's count is ever cut.
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
		states = append(states, st.stateStyle(s).Render(fmt.Sprintf("%s %d %s", stateGlyph(s), n, s)))
		compact = append(compact, st.stateStyle(s).Render(fmt.Sprintf("%s %d", stateGlyph(s), n)))
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
			flags = append(flags, style.Render(fmt.Sprintf("%s %d %s", flagGlyph(f), n, f)))
		}
	}
	if len(flags) == 0 {
		flags = append(flags, st.Muted.Render("no flags"))
	}
	header = append(header, packLines(flags, w, 1)...)
	if len(m.hosts) > 0 {
		header = append(header, m.renderHostsLine(w))
	}
	header = append(header, packLines(m.watchNotes(), w, 1)...)

	if m.mode == modeTree {
		header = append(header, m.renderColumnHead(w))
	}
	return header
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
	if m.typing {
		notes = append(notes, st.Title.Render(m.filterInput.View()))
	} else if m.textFilter != "" {
		notes = append(notes, st.Title.Render("/"+clean(m.textFilter)))
	}
	if m.state != filterAll {
		notes = append(notes, st.Title.Render("show: "+m.state.String()))
	}
	if m.following != "" {
		notes = append(notes, "following "+clean(m.following))
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
				note += " (" + clean(wi.Reason) + ")"
			}
			notes = append(notes, note)
		default:
			note := "watch: " + wi.Mode
			if wi.Mode == "mixed" && wi.Interval > 0 {
				note += ", polling every " + wi.Interval.String()
			}
			if wi.Reason != "" {
				note += " (" + clean(wi.Reason) + ")"
			}
			notes = append(notes, note)
		}
		if wi.Overflows > 0 {
			notes = append(notes, st.Warning.Render(fmt.Sprintf("%d event overflows re-stated", wi.Overflows)))
		}
		for _, warn := range wi.Warnings {
			notes = append(notes, st.Warning.Render("⚠ "+clean(warn)))
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
		notes = append(notes, st.Warning.Render(clean(n)))
	}
	return notes
}

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

func (m *Model) renderColumnHead(w int) string {
	c := m.columns(w)
	cells := rowText(c, " ", "NODE", "STATE", "ACTION", "BELOW", "BEAT", "PID", "CFA", "RT")
	line := cells[0] + strings.Join(cells[1:], " ") // the mark cell and NODE touch, as in the rows
	if c.reason {
		line += " REASON"
	}
	return m.styles.ColumnHead.Render(fit(line, w))
}

func (m *Model) columns(w int) columns {
	return layoutColumns(w)
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

// renderStatus is the status line: the last action's outcome or a notice.
func (m *Model) renderStatus(w int) string {
	st := m.styles
	if m.status == "" {
		if n := m.selectedNode(); n != nil && m.mode == modeTree {
			// The reason column is the first to be cut on a narrow screen, so
			// the selected node's reason is always readable here in full.
			line := fmt.Sprintf("%d/%d  %s", m.cursor+1, len(m.rows), clean(n.ID))
			if n.Reason != "" {
				line += "  " + clean(n.ReasonAt(m.now))
			}
			return st.Muted.Render(truncate(line, w))
		}
		return ""
	}
	if m.bad {
		return st.Error.Render(truncate(m.status, w))
	}
	return st.Success.Render(truncate(m.status, w))
}

func (m *Model) renderShortHelp(w int) string {
	if m.typing {
		return m.styles.Muted.Render(truncate("enter keep · esc clear · ↑↓ history · words, state:dead flag:blocked action:kill (all must match)", w))
	}
	if d := m.dialog; d != nil {
		return m.styles.Muted.Render(truncate(d.hint(), w))
	}
	if m.mode == modeHelp {
		return m.styles.Muted.Render(truncate("? or esc closes the help", w))
	}
	var bindings []key.Binding
	if m.mode == modeDetail {
		bindings = detailKeys{m.keys}.ShortHelp()
	} else {
		bindings = m.keys.ShortHelp()
	}
	return m.shortHelpEndingWith(bindings, []key.Binding{m.keys.Help, m.keys.Quit}, w)
}

// shortHelpEndingWith renders bindings on one line of width w; the ones in
// tail close the line whatever the width cuts from the others, so `? help`
// and `q quit` are always on screen.
func (m *Model) shortHelpEndingWith(bindings, tail []key.Binding, w int) string {
	h := m.help
	h.ShowAll = false
	h.SetWidth(0)
	end := h.ShortHelpView(tail)
	var head []key.Binding
	for _, b := range bindings {
		if !slices.ContainsFunc(tail, func(t key.Binding) bool { return slices.Equal(t.Keys(), b.Keys()) }) {
			head = append(head, b)
		}
	}
	sep := h.Styles.ShortSeparator.Render(h.ShortSeparator)
	room := w - ansi.StringWidth(end) - ansi.StringWidth(sep)
	if room < 4 {
		return truncate(end, w)
	}
	// The longest run of bindings that fits, chosen here: help's own width
	// cut keeps adding bindings once its ellipsis no longer fits.
	front, used, cut := "", 0, false
	for _, b := range head {
		if !b.Enabled() {
			continue
		}
		item := h.ShortHelpView([]key.Binding{b})
		if front != "" {
			item = sep + item
		}
		iw := ansi.StringWidth(item)
		if used+iw > room {
			cut = true
			break
		}
		front += item
		used += iw
	}
	if front == "" {
		return end
	}
	if ellipsis := " " + h.Styles.Ellipsis.Render(h.Ellipsis); cut && used+ansi.StringWidth(ellipsis) < room {
		front += ellipsis
	}
	return front + sep + end
}

// renderHelp is the `?` screen: every enabled binding.
func (m *Model) renderHelp(w, h int) []string {
	hm := m.help
	hm.SetWidth(0) // measure unclipped; blocks are split to fit below
	hm.ShowAll = true
	lines := []string{m.styles.Title.Render("Keys")}
	// Columns that do not fit beside each other go in a block below.
	groups := m.keys.FullHelp()
	for start := 0; start < len(groups); {
		end := start + 1
		for end < len(groups) && ansi.StringWidth(firstLine(hm.FullHelpView(groups[start:end+1]))) <= w {
			end++
		}
		for _, l := range strings.Split(hm.FullHelpView(groups[start:end]), "\n") {
			lines = append(lines, truncate(l, w))
		}
		lines = append(lines, "")
		start = end
	}
	lines = append(lines, m.styles.Muted.Render(truncate("Actions ask first; y confirms (Y where warned), Cancel is the default.", w)))
	lines = append(lines, m.styles.Muted.Render(truncate("With nodes marked (v) an action asks once for them all; the engine re-checks.", w)))
	if m.opts.Readonly {
		lines = append(lines, m.styles.Warning.Render(truncate("read-only: the action keys are disabled.", w)))
	}
	theme := "theme: " + m.themes.Themes[m.theme].Name + " (t cycles)"
	if m.themes.Forced != "" && m.theme == m.themes.Start {
		theme += "; " + m.themes.Forced
	}
	lines = append(lines, m.styles.Muted.Render(truncate(theme, w)))
	if len(lines) > h {
		lines = lines[:max(h, 0)]
	}
	return lines
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
