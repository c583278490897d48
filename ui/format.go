package ui

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

// stateGlyph marks each state so it reads without colour (mono).
func stateGlyph(s model.State) string {
	switch s {
	case model.StateRunning:
		return "●"
	case model.StateDead:
		return "✖"
	case model.StateFinished:
		return "✔"
	case model.StateMissing:
		return "○"
	}
	return "?"
}

// flagGlyph marks a flag in the header counts; all are one cell wide.
func flagGlyph(f model.Flag) string {
	switch f {
	case model.FlagStarting:
		return "◔"
	case model.FlagQuiet:
		return "◌"
	case model.FlagStalled:
		return "◑"
	case model.FlagKillCandidate:
		return "◆"
	case model.FlagBlocked:
		return "⧗"
	case model.FlagPaused:
		return "‖"
	case model.FlagOrphaned:
		return "◇"
	case model.FlagLegacy:
		return "▫"
	case model.FlagUnreadable:
		return "!"
	case model.FlagPidUnverified:
		return "¿"
	case model.FlagConflict:
		return "≠"
	case model.FlagCycle:
		return "↻"
	case model.FlagOutsideRoot:
		return "↗"
	case model.FlagClockSkew:
		return "±"
	}
	return "·"
}

// clean makes text read from disk safe to print: nothing in it reaches the
// terminal as a control (an escape sequence a hostile heartbeat or
// directory name could carry); spacing is kept for the layout.
func clean(s string) string { return termtext.Line(s) }

// fit truncates s to w cells (with an ellipsis) and pads it to exactly w.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	if sw > w {
		s = ansi.Truncate(s, w, "…")
		sw = ansi.StringWidth(s)
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

// truncate cuts s to w cells without padding.
func truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// stateWords is the state followed by its flags: "running stalled kill_candidate".
func stateWords(n *model.Node) string {
	if len(n.Flags) == 0 {
		return string(n.State)
	}
	parts := make([]string, 0, len(n.Flags)+1)
	parts = append(parts, string(n.State))
	for _, f := range n.Flags {
		parts = append(parts, string(f))
	}
	return strings.Join(parts, " ")
}

// idTail is the last segment of a node id.
func idTail(id string) string {
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		return id[i+1:]
	}
	return id
}

// nodeLabel is the row's name: role (and team when it differs) and the
// id's tail, so siblings of one team stay apart.
func nodeLabel(n *model.Node) string {
	role, team := n.Role(), n.Team()
	label := role
	switch {
	case role == "" && team != "":
		label = team
	case team != "" && team != role:
		label = team + "/" + role
	}
	tail := idTail(n.ID)
	if label == "" {
		return clean(tail)
	}
	return clean(label + " " + tail)
}

// labelWidth is the rune count of nodeLabel(n), without building it.
func labelWidth(n *model.Node) int {
	role, team := n.Role(), n.Team()
	w := utf8.RuneCountInString(role)
	switch {
	case role == "" && team != "":
		w = utf8.RuneCountInString(team)
	case team != "" && team != role:
		w += 1 + utf8.RuneCountInString(team)
	}
	tail := utf8.RuneCountInString(idTail(n.ID))
	if w == 0 {
		return tail
	}
	return w + 1 + tail
}

// isProblem is the `problems` state filter: anything an operator should look at.
func isProblem(n *model.Node) bool {
	if n.State == model.StateDead || n.State == model.StateMissing || len(n.Problems) > 0 {
		return true
	}
	for _, f := range n.Flags {
		switch f {
		case model.FlagStalled, model.FlagKillCandidate, model.FlagBlocked, model.FlagOrphaned,
			model.FlagUnreadable, model.FlagConflict, model.FlagCycle, model.FlagOutsideRoot,
			model.FlagUnknownStatus, model.FlagClockSkew:
			return true
		}
	}
	switch n.Action {
	case model.ActionKill, model.ActionResume, model.ActionSurface, model.ActionCompact, model.ActionAnswer:
		return true
	}
	return false
}
