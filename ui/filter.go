package ui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/dispatchtop/dispatchtop/model"
)

// maxFilterHistory bounds the filters `/` recalls with up and down.
const maxFilterHistory = 100

// filterTerm is one word of the `/` filter: a bare word, or field:value.
type filterTerm struct {
	field string // "" for a bare word
	value string // lower-cased
}

// query is the parsed `/` filter: every term must match (AND).
type query []filterTerm

// filterFields are the fields a term may name, in the order the error lists them.
var filterFields = []string{"id", "role", "team", "state", "flag", "action"}

// parseQuery splits s at spaces into terms. A bare word matches within the
// id, role, team or task id, or the start of the state or a flag word; it
// never matches the reason, whose prose would drown the words (`dead`
// would match "lead dead since"). id:, role: and team: match within that
// field; state:, flag: and action: match one word exactly.
func parseQuery(s string) (query, error) {
	var q query
	for _, word := range strings.Fields(strings.ToLower(s)) {
		field, value, ok := strings.Cut(word, ":")
		if !ok {
			q = append(q, filterTerm{value: word})
			continue
		}
		if !slices.Contains(filterFields, field) {
			return q, fmt.Errorf("filter: unknown field %q (%s)", field, strings.Join(filterFields, ", "))
		}
		if value == "" {
			return q, fmt.Errorf("filter: %q needs a value", word)
		}
		if err := checkValue(field, value); err != nil {
			return q, err
		}
		q = append(q, filterTerm{field: field, value: value})
	}
	return q, nil
}

// checkValue refuses a state, flag or action that does not exist, which
// would silently match nothing.
func checkValue(field, value string) error {
	var known []string
	switch field {
	case "state":
		for _, s := range model.States {
			known = append(known, string(s))
		}
	case "flag":
		for _, f := range model.Flags {
			known = append(known, string(f))
		}
	case "action":
		for _, a := range model.Actions {
			known = append(known, string(a))
		}
	default:
		return nil
	}
	if slices.Contains(known, value) {
		return nil
	}
	return fmt.Errorf("filter: no %s %q (%s)", field, value, strings.Join(known, ", "))
}

func (q query) match(n *model.Node) bool {
	for _, t := range q {
		if !t.match(n) {
			return false
		}
	}
	return true
}

func (t filterTerm) match(n *model.Node) bool {
	switch t.field {
	case "id":
		return containsFold(n.ID, t.value)
	case "role":
		return containsFold(n.Role(), t.value)
	case "team":
		return containsFold(n.Team(), t.value)
	case "state":
		return string(n.State) == t.value
	case "flag":
		return slices.Contains(n.Flags, model.Flag(t.value))
	case "action":
		a := n.Action
		if a == "" {
			a = model.ActionNone
		}
		return string(a) == t.value
	}
	if containsFold(n.ID, t.value) || containsFold(n.Role(), t.value) ||
		containsFold(n.Team(), t.value) || containsFold(n.TaskID(), t.value) {
		return true
	}
	if strings.HasPrefix(string(n.State), t.value) {
		return true
	}
	for _, f := range n.Flags {
		if strings.HasPrefix(string(f), t.value) {
			return true
		}
	}
	return false
}

// newFilterInput is the `/` prompt. Its cursor does not blink (a blink is a
// redraw twice a second for nothing) and its styles are plain: the header
// styles the line, so mono stays mono.
func newFilterInput() textinput.Model {
	in := textinput.New()
	in.Prompt = "/"
	st := textinput.Styles{}
	st.Focused = textinput.StyleState{Text: lipgloss.NewStyle(), Prompt: lipgloss.NewStyle(), Placeholder: lipgloss.NewStyle()}
	st.Blurred = st.Focused
	st.Cursor.Blink = false
	in.SetStyles(st)
	return in
}

// openFilter is `/`: the prompt opens on the current filter.
func (m *Model) openFilter() tea.Cmd {
	m.typing = true
	m.historyAt = len(m.filterHistory)
	m.filterInput.SetValue(m.textFilter)
	m.filterInput.CursorEnd()
	return m.filterInput.Focus()
}

// filterKey edits the prompt: enter keeps the filter (and remembers it),
// esc clears it, up and down walk the filters kept earlier in the run.
func (m *Model) filterKey(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "enter":
			m.typing = false
			m.filterInput.Blur()
			m.rememberFilter(m.textFilter)
			m.reflow()
			return nil
		case "esc":
			m.typing = false
			m.filterInput.Blur()
			m.filterInput.SetValue("")
			m.setFilter("")
			return nil
		case "up":
			m.recallFilter(-1)
			return nil
		case "down":
			m.recallFilter(+1)
			return nil
		}
	}
	m.filterInput, cmd = m.filterInput.Update(msg)
	m.setFilter(m.filterInput.Value())
	return cmd
}

// setFilter applies the prompt's text; a term that does not parse is named
// on the status line and the terms before it still apply.
func (m *Model) setFilter(s string) {
	m.textFilter = s
	q, err := parseQuery(s)
	m.query = q
	if err != nil {
		m.setStatus(err.Error(), true)
	} else if m.bad && strings.HasPrefix(m.status, "filter: ") {
		m.setStatus("", false)
	}
	m.reflow()
}

func (m *Model) rememberFilter(s string) {
	if strings.TrimSpace(s) == "" {
		return
	}
	if n := len(m.filterHistory); n > 0 && m.filterHistory[n-1] == s {
		return
	}
	m.filterHistory = append(m.filterHistory, s)
	if len(m.filterHistory) > maxFilterHistory {
		m.filterHistory = slices.Delete(m.filterHistory, 0, 1)
	}
}

// recallFilter moves through the history; past the newest it comes back to
// what was being typed before the walk began.
func (m *Model) recallFilter(step int) {
	if m.historyAt == len(m.filterHistory) {
		m.historyDraft = m.filterInput.Value()
	}
	at := max(0, min(m.historyAt+step, len(m.filterHistory)))
	if at == m.historyAt {
		return
	}
	m.historyAt = at
	text := m.historyDraft
	if at < len(m.filterHistory) {
		text = m.filterHistory[at]
	}
	m.filterInput.SetValue(text)
	m.filterInput.CursorEnd()
	m.setFilter(text)
}
