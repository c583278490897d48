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

// filterTerm is one word of the `/` filter: a bare word, or field:value;
// values separated by commas are alternatives (any may match), and a
// leading `-` negates the term (none may match).
type filterTerm struct {
	field  string   // "" for a bare word
	values []string // lower-cased, at least one
	not    bool
}

// query is the parsed `/` filter: every term must match (AND).
type query []filterTerm

// filterFields are the fields a term may name, in the order the error lists them.
var filterFields = []string{"id", "name", "role", "team", "state", "flag", "action"}

// parseQuery splits s at spaces into terms. A bare word matches within the
// id, the agent's name, role, team or task id, or the start of the state or a flag word; it
// never matches the reason, whose prose would drown the words (`dead`
// would match "lead dead since"). id:, name:, role: and team: match within that
// field; state:, flag: and action: match one word exactly. `a,b` matches
// either; `-term` matches what term does not.
func parseQuery(s string) (query, error) {
	var q query
	for _, word := range strings.Fields(strings.ToLower(s)) {
		var t filterTerm
		body := word
		if rest, ok := strings.CutPrefix(word, "-"); ok {
			if rest == "" {
				return q, fmt.Errorf("filter: %q needs a term", word)
			}
			t.not, body = true, rest
		}
		field, value, ok := strings.Cut(body, ":")
		if !ok {
			field, value = "", body
		} else if !slices.Contains(filterFields, field) {
			return q, fmt.Errorf("filter: unknown field %q (%s)", field, strings.Join(filterFields, ", "))
		}
		if value == "" {
			return q, fmt.Errorf("filter: %q needs a value", word)
		}
		t.field, t.values = field, strings.Split(value, ",")
		for _, v := range t.values {
			if v == "" {
				return q, fmt.Errorf("filter: %q has an empty alternative", word)
			}
			if err := checkValue(field, v); err != nil {
				return q, err
			}
		}
		q = append(q, t)
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

// equal is whether q and o are the same terms.
func (q query) equal(o query) bool {
	return slices.EqualFunc(q, o, func(a, b filterTerm) bool {
		return a.field == b.field && a.not == b.not && slices.Equal(a.values, b.values)
	})
}

// match is whether any of t's values matches n, or none does for a `-` term.
func (t filterTerm) match(n *model.Node) bool {
	for _, v := range t.values {
		if matchValue(t.field, v, n) {
			return !t.not
		}
	}
	return t.not
}

func matchValue(field, value string, n *model.Node) bool {
	switch field {
	case "id":
		return containsFold(n.ID, value)
	case "name":
		return containsFold(agentName(n), value)
	case "role":
		return containsFold(n.Role(), value)
	case "team":
		return containsFold(n.Team(), value)
	case "state":
		return string(n.State) == value
	case "flag":
		return slices.Contains(n.Flags, model.Flag(value))
	case "action":
		a := n.Action
		if a == "" {
			a = model.ActionNone
		}
		return string(a) == value
	}
	if containsFold(n.ID, value) || containsFold(agentName(n), value) || containsFold(n.Role(), value) ||
		containsFold(n.Team(), value) || containsFold(n.TaskID(), value) {
		return true
	}
	if strings.HasPrefix(string(n.State), value) {
		return true
	}
	for _, f := range n.Flags {
		if strings.HasPrefix(string(f), value) {
			return true
		}
	}
	return false
}

// filterPrompt is the `/` prompt: its text input and the filters kept with
// enter in this run. The model applies what it holds (setFilter).
type filterPrompt struct {
	typing bool // the prompt is open
	input  textinput.Model
	// history is the filters kept with enter in this run, oldest first; at
	// is where up/down stand in it (len: the draft).
	history []string
	at      int
	draft   string
}

func newFilterPrompt() filterPrompt {
	return filterPrompt{input: newFilterInput()}
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

// open opens the prompt on text, the current filter.
func (p *filterPrompt) open(text string) tea.Cmd {
	p.typing = true
	p.at = len(p.history)
	p.input.SetValue(text)
	p.input.CursorEnd()
	return p.input.Focus()
}

// close closes the prompt; clearText empties its text too.
func (p *filterPrompt) close(clearText bool) {
	p.typing = false
	p.input.Blur()
	if clearText {
		p.input.SetValue("")
	}
}

// View is the prompt's line, `/` and the text.
func (p *filterPrompt) View() string { return p.input.View() }

func (p *filterPrompt) remember(s string) {
	if strings.TrimSpace(s) == "" {
		return
	}
	if n := len(p.history); n > 0 && p.history[n-1] == s {
		return
	}
	p.history = append(p.history, s)
	if len(p.history) > maxFilterHistory {
		p.history = slices.Delete(p.history, 0, 1)
	}
}

// recall moves through the history by step and puts what it reaches in the
// input; past the newest it comes back to what was being typed before the
// walk began. moved is false when the walk is already at its end.
func (p *filterPrompt) recall(step int) (text string, moved bool) {
	if p.at == len(p.history) {
		p.draft = p.input.Value()
	}
	at := max(0, min(p.at+step, len(p.history)))
	if at == p.at {
		return "", false
	}
	p.at = at
	text = p.draft
	if at < len(p.history) {
		text = p.history[at]
	}
	p.input.SetValue(text)
	p.input.CursorEnd()
	return text, true
}

// openFilter is `/`: the prompt opens on the current filter.
func (m *Model) openFilter() tea.Cmd {
	return m.prompt.open(m.textFilter)
}

// filterKey edits the prompt: enter keeps the filter (and remembers it),
// esc clears it, up and down walk the filters kept earlier in the run.
func (m *Model) filterKey(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "enter":
			m.prompt.close(false)
			m.prompt.remember(m.textFilter)
			m.reflow()
			return nil
		case "esc":
			m.prompt.close(true)
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
	m.prompt.input, cmd = m.prompt.input.Update(msg)
	m.setFilter(m.prompt.input.Value())
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

// recallFilter applies the filter the history walk reaches.
func (m *Model) recallFilter(step int) {
	if text, moved := m.prompt.recall(step); moved {
		m.setFilter(text)
	}
}
