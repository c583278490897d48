package ui

// The frame put together from the header, the body and the footer: the
// status line, the key line and the `?` help screen.

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"
	"github.com/dispatchtop/dispatchtop/internal/glyph"
	"github.com/dispatchtop/dispatchtop/internal/termtext"

	"github.com/dispatchtop/dispatchtop/model"
)

// render builds the whole frame from the model as layout left it, and
// notes where in it the cells a tick moves are (reage).
func (m *Model) render() string {
	w, h := m.width, m.height
	m.frame.ageable, m.frame.rowsAt = false, -1
	if w <= 0 || h <= 0 {
		return ""
	}
	lines := append(m.frame.lines[:0], m.frame.header...)
	var body []string
	switch m.mode {
	case modeDetail:
		body = m.renderDetail(w, h-len(lines)-footerLines)
	case modeHelp:
		body = m.renderHelp(w, h-len(lines)-footerLines)
	default:
		body = m.renderTree(w)
		m.frame.rowsAt = len(lines)
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
	cut := len(body) > want || len(lines)+want+footerLines > h
	body = body[:want]
	if m.dialog != nil {
		overlay(body, m.renderDialog(), w)
	}
	if m.answerBox != nil {
		overlay(body, m.renderAnswer(w, want), w)
	}
	lines = append(lines, body...)
	lines = append(lines, m.renderStatus(w), m.renderShortHelp(w))
	if len(lines) > h {
		lines = lines[:h]
	}
	m.frame.lines, m.frame.statusAt = lines, len(lines)-footerLines
	// A tick can redraw its cells in place only where they are all on
	// screen as drawn: nothing cut, no dialog over the rows, no details.
	m.frame.ageable = !cut && m.dialog == nil && m.mode != modeDetail
	return strings.Join(lines, "\n")
}

// reage brings the frame to m.now after a tick: the clock, the rows' age
// cells and the status line, each drawn again only where it moved; a frame
// nothing moved in stays the very same string.
func (m *Model) reage() {
	w := m.width
	moved := false
	if title := m.renderTitle(w); title != m.frame.lines[0] {
		m.frame.header[0], m.frame.lines[0] = title, title
		moved = true
	}
	if m.frame.rowsAt >= 0 {
		c := m.columns(w)
		for k := range m.frame.shown {
			if m.reageRow(&m.frame.shown[k], c) {
				m.frame.lines[m.frame.rowsAt+k] = m.frame.shown[k].line
				moved = true
			}
		}
	}
	if status := m.renderStatus(w); status != m.frame.lines[m.frame.statusAt] {
		m.frame.lines[m.frame.statusAt] = status
		moved = true
	}
	if moved {
		m.frame.text = strings.Join(m.frame.lines, "\n")
	}
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

// renderStatus is the status line: the last action's outcome or a notice.
func (m *Model) renderStatus(w int) string {
	st := m.styles
	if m.status == "" {
		if n := m.selectedNode(); n != nil && m.mode == modeTree {
			// The reason column is the first to be cut on a narrow screen, so
			// the selected node's reason is always readable here in full.
			// It leads, the position and the id follow (the row shows the name).
			line := fmt.Sprintf("%d/%d  %s", m.cursor+1, len(m.rows), termtext.Line(n.ID))
			if n.Reason != "" {
				line = termtext.Line(n.ReasonAt(m.now)) + "  · " + line
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
	if m.prompt.typing {
		return m.styles.Muted.Render(truncate("enter keep · esc clear · ↑↓ history · words, state:dead,missing -flag:quiet action:kill (all must match; , or; - not)", w))
	}
	if d := m.dialog; d != nil {
		return m.styles.Muted.Render(truncate(d.hint(), w))
	}
	if m.answerBox != nil {
		return m.styles.Muted.Render(truncate("ctrl+s send the answer · esc cancel", w))
	}
	if m.mode == modeHelp {
		line := "? or esc closes the help"
		if m.helpTop > 0 || m.frame.helpBelow > 0 {
			line = fmt.Sprintf("↓ %d more lines · ↑↓ pgup pgdn scroll · ", m.frame.helpBelow) + line
		}
		return m.styles.Muted.Render(truncate(line, w))
	}
	// The keys' line changes with the mode, the width and the theme alone:
	// made once, not at every frame an update or a key draws.
	events := m.mode == modeTree && m.eventsOpen && m.focus == focusEvents
	built := helpKey{mode: m.mode, events: events, width: w, theme: m.theme}
	if m.frame.helpLine != "" && m.frame.helpBuilt == built {
		return m.frame.helpLine
	}
	var bindings []key.Binding
	switch {
	case m.mode == modeDetail:
		bindings = detailKeys{m.keys}.ShortHelp()
	case events:
		bindings = eventKeys{m.keys}.ShortHelp()
	default:
		bindings = m.keys.ShortHelp()
	}
	m.frame.helpLine, m.frame.helpBuilt = m.shortHelpEndingWith(bindings, []key.Binding{m.keys.Help, m.keys.Quit}, w), built
	return m.frame.helpLine
}

// helpKey is what the short help line of the tree or the details is made from.
type helpKey struct {
	mode         mode
	events       bool // the event pane has the focus
	width, theme int
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

// renderHelp is the `?` screen: every enabled binding and the legend of
// the glyphs, from helpTop on; what does not fit scrolls (scrollHelp) and
// the key line says how much is below (helpBelow, a cache of the frame).
func (m *Model) renderHelp(w, h int) []string {
	all := m.helpLines(w)
	if h <= 0 {
		return nil
	}
	top := max(0, min(m.helpTop, len(all)-h))
	lines := all[top:]
	m.frame.helpBelow = max(0, len(lines)-h)
	return lines[:min(h, len(lines))]
}

// helpLines are every line of the `?` screen at width w.
func (m *Model) helpLines(w int) []string {
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
	lines = append(lines, m.styles.Muted.Render(truncate(theme, w)), "")
	return append(lines, m.legendLines(w)...)
}

// legendLines are the glyphs the screen draws, each with its word: the
// states, the flags, the actions (as in BELOW) and the tree's marks. The
// glyphs are read from where they are defined, never copied.
func (m *Model) legendLines(w int) []string {
	var states, flags, actions []string
	for _, s := range model.States {
		states = append(states, glyph.State(s)+" "+string(s))
	}
	for _, f := range model.Flags {
		flags = append(flags, glyph.Flag(f)+" "+string(f))
	}
	for _, a := range model.Actions {
		if a != model.ActionNone {
			actions = append(actions, glyph.Action(a)+" "+string(a))
		}
	}
	actions = append(actions, "- nothing to do")
	tree := []string{"▾ expanded", "▸ collapsed", "* marked", hostGlyph + " host"}
	lines := []string{m.styles.Title.Render("Legend")}
	for _, group := range []struct {
		name  string
		items []string
	}{{"states", states}, {"flags", flags}, {"actions", actions}, {"tree", tree}} {
		lines = append(lines, packLine(group.name, group.items, w)...)
	}
	return lines
}

// packLine lays items out after a name, as many to a line as fit in w,
// the lines after the first indented under the first item.
func packLine(name string, items []string, w int) []string {
	const indent = 9 // "actions  "
	head := fit(name, indent)
	var lines []string
	line := head
	for _, it := range items {
		if line != head && ansi.StringWidth(line)+2+ansi.StringWidth(it) > w {
			lines = append(lines, line)
			line = strings.Repeat(" ", indent)
		}
		if line != head && strings.TrimSpace(line) != "" {
			line += "  "
		}
		line += it
	}
	lines = append(lines, truncate(line, w))
	for i := range lines {
		lines[i] = truncate(lines[i], w)
	}
	return lines
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
