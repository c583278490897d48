package ui

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/model"
)

var dialogBorder = lipgloss.RoundedBorder()

// columns are the widths of the tree's columns at one screen width; the
// reason takes what is left. Name and state are as wide as the widest row
// needs, within bounds; narrow screens drop CfA and retries.
type columns struct {
	name, state, beat, pid, cfa, retries, action int
}

func layoutColumns(width, nameMax, stateMax int) columns {
	c := columns{beat: 6, pid: 7, action: 7}
	stateCap := 22
	if width >= 110 {
		c.cfa, c.retries = 10, 2
		stateCap = 30
	}
	nameCap := width / 3
	if width < 100 {
		nameCap = width * 3 / 10 // leave the reason room on a small screen
	}
	c.name = max(12, min(nameMax, nameCap))
	c.state = max(8, min(stateMax, stateCap))
	return c
}

// reasonWidth is what the reason column gets at width w.
func (c columns) reasonWidth(w int) int {
	return max(0, w-c.fixed())
}

// fixed is the width of every column but the reason, with separators.
func (c columns) fixed() int {
	used := c.name + c.state + c.beat + c.pid + c.action + 5
	if c.cfa > 0 {
		used += c.cfa + c.retries + 2
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

// renderHeader is the title line, the counts, and the watch line.
func (m *Model) renderHeader(w int) []string {
	st := m.styles
	snap := m.snap
	title := "dispatchtop"
	clock := m.now.Format("15:04:05")
	roots := "no snapshot yet"
	if snap != nil && len(snap.Roots) > 0 {
		roots = clean(strings.Join(snap.Roots, "  "))
	}
	room := max(0, w-len(title)-len(clock)-4)
	line1 := title + "  " + fit(roots, room) + "  " + clock
	header := []string{st.Header.Render(fit(line1, w))}

	// Counts: every state, then the flags present, as glyph, number, word.
	var tokens []string
	var sum model.Summary
	if snap != nil {
		sum = m.sum
	}
	tokens = append(tokens, fmt.Sprintf("%d nodes/%d sessions", sum.Nodes, sum.Sessions))
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
		tokens = append(tokens, st.stateStyle(s).Render(fmt.Sprintf("%s %d %s", stateGlyph(s), n, s)))
	}
	for _, f := range model.Flags {
		if n := sum.ByFlag[f]; n > 0 {
			style := st.Warning
			if f == model.FlagBlocked {
				style = st.Blocked
			}
			tokens = append(tokens, style.Render(fmt.Sprintf("%s %d %s", flagGlyph(f), n, f)))
		}
	}
	if sum.Problems > 0 {
		tokens = append(tokens, st.Error.Render(fmt.Sprintf("! %d problems", sum.Problems)))
	}
	// Counts take one line, or more on a narrow screen: a flag an operator
	// must see is never dropped silently; notes take the next line.
	header = append(header, packLines(tokens, w, maxCountLines)...)
	if len(m.hosts) > 0 {
		header = append(header, m.renderHostsLine(w))
	}
	header = append(header, truncate(strings.Join(m.watchNotes(), "  "), w))

	if m.mode == modeTree {
		header = append(header, m.renderColumnHead(w))
	}
	return header
}

// maxCountLines bounds the header's count lines, so the tree keeps its room
// on a small screen; what does not fit is counted on the last line.
const maxCountLines = 6

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
			line += "  " + more(len(rest))
		}
		lines = append(lines, line)
		tokens = rest
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

// watchNotes say how the view is kept current and what to keep in mind.
func (m *Model) watchNotes() []string {
	st := m.styles
	var notes []string
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
	if m.paused {
		notes = append(notes, st.Warning.Render("‖ PAUSED"))
	}
	if m.following != "" {
		notes = append(notes, "following "+clean(m.following))
	}
	if m.opts.Readonly {
		notes = append(notes, "read-only")
	}
	if m.typing {
		notes = append(notes, st.Title.Render(m.filterInput.View()))
	} else if m.textFilter != "" {
		notes = append(notes, st.Title.Render("/"+clean(m.textFilter)))
	}
	if m.state != filterAll {
		notes = append(notes, st.Title.Render("show: "+m.state.String()))
	}
	for _, n := range m.opts.Notes {
		notes = append(notes, st.Warning.Render(clean(n)))
	}
	return notes
}

func (m *Model) renderColumnHead(w int) string {
	c := m.columns(w)
	var b strings.Builder
	b.WriteString(fit("NODE", c.name))
	b.WriteString(" " + fit("STATE", c.state))
	b.WriteString(" " + fit("BEAT", c.beat))
	b.WriteString(" " + fit("PID", c.pid))
	if c.cfa > 0 {
		b.WriteString(" " + fit("CFA", c.cfa))
		b.WriteString(" " + fit("RT", c.retries))
	}
	b.WriteString(" " + fit("ACTION", c.action))
	b.WriteString(" REASON")
	return m.styles.ColumnHead.Render(fit(b.String(), w))
}

func (m *Model) columns(w int) columns {
	return layoutColumns(w, m.nameMax, m.stateMax)
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

// rowCells are the plain texts of a row's columns.
func (m *Model) rowCells(r row, guide string, c columns) (name, state, beat, pid, cfa, retries, action, reason string) {
	n := r.node
	marker := " "
	if r.hasKids {
		marker = "▾"
		if r.collapsed {
			marker = "▸"
		}
	}
	name = guide + marker + stateGlyph(n.State) + " " + nodeLabel(n)
	state = stateWords(n)
	if h, ok := m.host(n); ok {
		name = guide + marker + hostGlyph + " " + clean(n.ID)
		state = hostWord(h)
	}
	beat = "-"
	if !n.BeatMtime.IsZero() {
		beat = model.FormatAge(m.now.Sub(n.BeatMtime))
	}
	pid = "-"
	if p := n.PID(); p != 0 {
		pid = strconv.Itoa(p)
	}
	cfa = "-"
	if n.Cfa != nil && n.Cfa.State != "" {
		cfa = clean(n.Cfa.State)
	}
	retries = "-"
	if n.Retries.Total > 0 {
		retries = strconv.Itoa(n.Retries.Total)
	}
	action = string(n.Action)
	if n.Action == model.ActionNone || n.Action == "" {
		action = "-"
	}
	reason = clean(n.ReasonAt(m.now))
	return
}

func (m *Model) renderRow(r row, guide string, c columns, w int, selected bool) string {
	st := m.styles
	name, state, beat, pid, cfa, retries, action, reason := m.rowCells(r, guide, c)
	reasonW := c.reasonWidth(w)
	if selected {
		var b strings.Builder
		b.WriteString(fit(name, c.name) + " " + fit(state, c.state) + " " + fit(beat, c.beat) + " " + fit(pid, c.pid))
		if c.cfa > 0 {
			b.WriteString(" " + fit(cfa, c.cfa) + " " + fit(retries, c.retries))
		}
		b.WriteString(" " + fit(action, c.action) + " " + reason)
		return st.Selected.Render(fit(b.String(), w))
	}
	stateStyle := st.stateStyle(r.node.State)
	sw := min(len(r.node.State), c.state)
	if h, ok := m.host(r.node); ok {
		// A host row: its reachability word takes the state's place.
		stateStyle, sw = m.hostStyle(h), c.state
	}
	var b strings.Builder
	// The name: guides muted, glyph in the state's colour, label plain.
	nameCell := fit(name, c.name)
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
	stateCell := fit(state, c.state)
	b.WriteString(stateStyle.Render(ansi.Cut(stateCell, 0, sw)))
	flagStyle := st.Warning
	if r.node.HasFlag(model.FlagBlocked) {
		flagStyle = st.Blocked
	}
	b.WriteString(flagStyle.Render(ansi.Cut(stateCell, sw, c.state)))
	b.WriteByte(' ')
	b.WriteString(st.Muted.Render(fit(beat, c.beat) + " " + fit(pid, c.pid)))
	if c.cfa > 0 {
		b.WriteString(" " + st.Text.Render(fit(cfa, c.cfa)) + " " + st.Muted.Render(fit(retries, c.retries)))
	}
	b.WriteByte(' ')
	b.WriteString(st.Action.Render(fit(action, c.action)))
	if reasonW > 0 {
		b.WriteByte(' ')
		b.WriteString(st.Text.Render(truncate(reason, reasonW)))
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
		return m.styles.Muted.Render(truncate("words, state:dead flag:blocked action:kill (all must match) · ↑↓ history · enter keep · esc clear", w))
	}
	if m.dialog != nil {
		return m.styles.Muted.Render(truncate("y confirm · esc cancel", w))
	}
	h := m.help
	h.SetWidth(w)
	h.ShowAll = false
	if m.mode == modeDetail {
		return truncate(h.View(detailKeys{m.keys}), w)
	}
	if m.mode == modeHelp {
		return m.styles.Muted.Render(truncate("? or esc closes the help", w))
	}
	return truncate(h.View(m.keys), w)
}

// renderHelp is the `?` screen: every enabled binding.
func (m *Model) renderHelp(w, h int) []string {
	hm := m.help
	hm.SetWidth(0) // measure unclipped; blocks are split to fit below
	hm.ShowAll = true
	lines := []string{m.styles.Title.Render("Keys"), ""}
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
	lines = append(lines, m.styles.Muted.Render(truncate("Actions ask first: Cancel is the default, y confirms; the engine re-checks.", w)))
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
