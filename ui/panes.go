package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

// maxEvents bounds the event pane's history: enough for a day of a busy
// fleet, small enough (a few MB) to keep in memory and to scroll.
const maxEvents = 10000

// newPane is a scrolling pane. Its own key map stays unused: the model's
// keys (which also move the tree) decide what scrolls, so `f`, `b`, `d`
// keep their meaning; only the wheel goes through the viewport.
func newPane() viewport.Model {
	vp := viewport.New()
	vp.MouseWheelDelta = wheelStep
	return vp
}

// scrollKey scrolls vp for a movement key and reports whether it was one.
func (m *Model) scrollKey(vp *viewport.Model, msg tea.KeyPressMsg) bool {
	k := m.keys
	switch {
	case key.Matches(msg, k.Up):
		vp.ScrollUp(1)
	case key.Matches(msg, k.Down):
		vp.ScrollDown(1)
	case key.Matches(msg, k.PageUp):
		vp.PageUp()
	case key.Matches(msg, k.PageDown):
		vp.PageDown()
	case key.Matches(msg, k.Top):
		vp.GotoTop()
	case key.Matches(msg, k.Bottom):
		vp.GotoBottom()
	default:
		return false
	}
	m.frame.dirty = true
	return true
}

// layoutDetail hands the detail lines, styled and cut to w, to the detail
// viewport, which takes the body under the pane's title line.
func (m *Model) layoutDetail(w, bodyH int) {
	lines := make([]string, len(m.frame.detail))
	for i, l := range m.frame.detail {
		style := m.styles.Text
		if strings.HasPrefix(l, "── ") {
			style = m.styles.Title
		}
		lines[i] = style.Render(truncate(l, w))
	}
	m.detailVP.SetWidth(w)
	m.detailVP.SetHeight(max(1, bodyH-1))
	m.detailVP.SetContentLines(lines)
	if m.detailFollow {
		m.detailVP.GotoBottom()
	}
}

// eventsKey is what the event pane's lines were built from: they are
// rebuilt only when it changes, not on every message.
type eventsKey struct {
	seq   int // m.eventSeq: one more for each event added
	width int
	scope string
	theme int
	snap  *model.Snapshot
}

// layoutEvents fills the event viewport (h lines under the pane's title)
// with the events in scope, oldest first. A pane scrolled to its end stays
// at the end as events arrive; one scrolled back stays where it is.
func (m *Model) layoutEvents(w, h int) {
	m.eventsVP.SetWidth(w)
	m.eventsVP.SetHeight(max(1, h-1))
	k := eventsKey{seq: m.eventSeq, width: w, scope: m.eventScope, theme: m.theme}
	if m.eventScope != "" {
		k.snap = m.snap
	}
	if k == m.frame.eventsBuilt && m.eventsVP.TotalLineCount() > 0 {
		return
	}
	follow := m.eventsVP.AtBottom() || m.frame.eventsBuilt.width == 0
	m.frame.eventsBuilt = k
	in := m.eventScopeIDs()
	lines := make([]string, 0, len(m.events))
	m.frame.eventsShown = 0
	for _, e := range m.events {
		if in != nil && !in[e.id] {
			continue
		}
		m.frame.eventsShown++
		lines = append(lines, m.eventLine(e, w))
	}
	if len(lines) == 0 {
		text := "  no transitions yet"
		if in != nil {
			text = "  no transitions in " + termtext.Line(m.eventScope) + "'s subtree (E shows all)"
		}
		lines = append(lines, m.styles.Muted.Render(fit(text, w)))
	}
	m.eventsVP.SetContentLines(lines)
	if follow {
		m.eventsVP.GotoBottom()
	}
}

// eventScopeIDs is the ids of the scoped node's subtree as the snapshot
// has it, or nil for every event.
func (m *Model) eventScopeIDs() map[string]bool {
	if m.eventScope == "" {
		return nil
	}
	in := map[string]bool{m.eventScope: true}
	if m.snap != nil {
		if n := m.snap.Node(m.eventScope); n != nil {
			n.Walk(func(c *model.Node) { in[c.ID] = true })
		}
	}
	return in
}

func (m *Model) eventLine(e event, w int) string {
	st := m.styles
	idW := max(12, w/3)
	id := termtext.Line(e.id)
	if ansi.StringWidth(id) > idW {
		// The tail of an id says which node; the root prefix rarely does.
		id = ansi.TruncateLeft(id, ansi.StringWidth(id)-idW+1, "…")
	}
	line := e.time.Format("15:04:05") + "  " + id + "  " + e.text
	if e.reason != "" {
		line += "  " + termtext.Line(e.reason)
	}
	style := st.Text
	if e.bad {
		style = st.Warning
	}
	return style.Render(truncate(line, w))
}

// renderEvents is the event pane: a title, then the viewport layout filled.
func (m *Model) renderEvents(w, h int) []string {
	title := fmt.Sprintf("── events (%d) ", len(m.events))
	if m.eventScope != "" {
		title = fmt.Sprintf("── events of %s (%d of %d) ", termtext.Line(m.eventScope), m.frame.eventsShown, len(m.events))
	}
	if m.focus == focusEvents {
		title += "↑↓ scroll · tab tree · esc close "
	}
	out := []string{m.styles.PaneTitle.Render(fit(title+strings.Repeat("─", w), w))}
	out = append(out, strings.Split(m.eventsVP.View(), "\n")...)
	return out[:min(len(out), h)]
}

// eventsKeyPressed is `e`: every event. On the tree it opens the event
// pane with the focus in it, shows all events where `E` scoped them, or
// closes the pane when it has the focus and shows all; in the details it
// goes back to the tree with the focus in the event pane.
func (m *Model) eventsKeyPressed() {
	switch {
	case m.mode == modeDetail:
		m.mode = modeTree
		m.eventsOpen, m.focus = true, focusEvents
	case m.eventsOpen && m.focus == focusEvents && m.eventScope == "":
		m.eventsOpen, m.focus = false, focusTree
	default:
		m.eventsOpen, m.focus = true, focusEvents
	}
	if m.eventScope != "" {
		m.eventScope = ""
		m.setStatus("events: all nodes", false)
	}
	m.scrollToCursor()
}

// focusKeyPressed is tab: the focus goes between the tree and an open
// event pane.
func (m *Model) focusKeyPressed() {
	switch {
	case !m.eventsOpen || m.mode != modeTree:
		return
	case m.focus == focusEvents:
		m.focus = focusTree
	default:
		m.focus = focusEvents
	}
	m.frame.dirty = true
}

// eventScopeKeyPressed is `E`: the event pane shows only the selected
// node's subtree, or everything again.
func (m *Model) eventScopeKeyPressed() {
	if m.eventScope != "" {
		m.eventScope = ""
		m.setStatus("events: all nodes", false)
	} else if n := m.selectedNode(); n != nil {
		m.eventScope = n.ID
		m.setStatus("events: "+termtext.Line(n.ID)+" and its subtree", false)
	}
	m.eventsOpen = true
	m.scrollToCursor()
}
