package ui

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/themes"
)

// Styles are the Lip Gloss styles of every part of the screen, built from a
// theme. Colours come only from the theme; with an empty colour (mono) a
// style falls back to bold, faint or reverse, so selection stays visible.
type Styles struct {
	Header      lipgloss.Style
	Title       lipgloss.Style
	ColumnHead  lipgloss.Style
	Text        lipgloss.Style
	Muted       lipgloss.Style
	Selected    lipgloss.Style
	Action      lipgloss.Style
	Warning     lipgloss.Style
	Blocked     lipgloss.Style
	Error       lipgloss.Style
	Success     lipgloss.Style
	Dialog      lipgloss.Style
	DialogTitle lipgloss.Style
	Button      lipgloss.Style
	ButtonFocus lipgloss.Style
	PaneTitle   lipgloss.Style
	State       map[model.State]lipgloss.Style
	Help        help.Styles
}

// NewStyles builds the styles of theme t.
func NewStyles(t themes.Theme) Styles {
	fg := func(s lipgloss.Style, c string) lipgloss.Style {
		if c == "" {
			return s
		}
		return s.Foreground(lipgloss.Color(c))
	}
	bg := func(s lipgloss.Style, c string) lipgloss.Style {
		if c == "" {
			return s
		}
		return s.Background(lipgloss.Color(c))
	}
	base := lipgloss.NewStyle()
	st := Styles{
		Text:       fg(base, t.Text),
		Muted:      fg(base, t.Muted),
		Title:      fg(base.Bold(true), t.Accent),
		ColumnHead: fg(base.Bold(true), t.Muted),
		Action:     fg(base, t.ActionFg),
		Warning:    fg(base, t.Warning),
		Blocked:    fg(base, t.Blocked),
		Error:      fg(base.Bold(true), t.ErrorFg),
		Success:    fg(base, t.SuccessFg),
		PaneTitle:  fg(base.Bold(true), t.Accent),
		State: map[model.State]lipgloss.Style{
			model.StateRunning:  fg(base, t.Running),
			model.StateDead:     fg(base.Bold(true), t.Dead),
			model.StateFinished: fg(base, t.Finished),
			model.StateMissing:  fg(base, t.Missing),
		},
	}
	st.Header = bg(fg(base, t.HeaderFg), t.HeaderBg)
	if t.SelectBg == "" {
		st.Selected = base.Reverse(true)
	} else {
		st.Selected = bg(fg(base, t.SelectFg), t.SelectBg)
	}
	st.Dialog = bg(fg(base, t.Text), t.DialogBg)
	st.DialogTitle = fg(base.Bold(true), t.Accent)
	st.Button = fg(base, t.Muted)
	if t.SelectBg == "" {
		st.ButtonFocus = base.Reverse(true).Bold(true)
	} else {
		st.ButtonFocus = bg(fg(base.Bold(true), t.SelectFg), t.SelectBg)
	}
	if t.Muted == "" {
		st.Muted = base.Faint(true)
		st.ColumnHead = base.Bold(true)
	}
	key := fg(base.Bold(true), t.Accent)
	desc := fg(base, t.Muted)
	sep := fg(base, t.Border)
	st.Help = help.Styles{
		Ellipsis: sep, ShortKey: key, ShortDesc: desc, ShortSeparator: sep,
		FullKey: key, FullDesc: desc, FullSeparator: sep,
	}
	return st
}

// stateStyle is the style of state s (plain for an unknown state).
func (s Styles) stateStyle(st model.State) lipgloss.Style {
	if style, ok := s.State[st]; ok {
		return style
	}
	return s.Text
}

// wrap is a style as the text it puts around a run, for the cells a tick
// redraws without going through Render again. It is Render's own output,
// taken once: for a style of attributes and colours alone (no width,
// padding, border or transform), Render wraps a line without tabs in the
// same opening and reset whatever the line says.
type wrap struct{ open, close string }

// wrapOf is s as a wrap, and false where s does more than wrap (then
// Render it is).
func wrapOf(s lipgloss.Style) (wrap, bool) {
	const probe = "x"
	if s.GetWidth() > 0 || s.GetMaxWidth() > 0 || s.GetHorizontalFrameSize() > 0 || s.GetTransform() != nil || s.GetInline() {
		return wrap{}, false
	}
	out := s.Render(probe)
	if strings.Count(out, probe) != 1 {
		return wrap{}, false
	}
	i := strings.Index(out, probe)
	return wrap{open: out[:i], close: out[i+len(probe):]}, true
}
