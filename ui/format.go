package ui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

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
		// One allocation: fit runs for every cell of every row drawn.
		var b strings.Builder
		b.Grow(len(s) + w - sw)
		b.WriteString(s)
		for range w - sw {
			b.WriteByte(' ')
		}
		return b.String()
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

// labelParts are a row's name beside its glyph: the agent's name (and
// team when it differs, agentName) and the id's tail, so siblings of one
// team stay apart; short is the name alone, what a cut row keeps of the
// tagline.
func labelParts(n *model.Node) (tagline, tail string) {
	tagline, _, tail = labelPartsShort(n)
	return tagline, tail
}

func labelPartsShort(n *model.Node) (tagline, short, tail string) {
	role, team := agentName(n), n.Team()
	tagline, short = role, role
	switch {
	case role == "" && team != "":
		tagline, short = team, team
	case team != "" && team != role:
		tagline = team + "/" + role
	}
	return termtext.Line(tagline), termtext.Line(short), termtext.Line(idTail(n.ID))
}

// tailMin is the least of an id's tail worth showing beside a role: an
// ellipsis and the last four cells, enough to tell siblings apart.
const tailMin = 5

// fitLabel fits a label into room cells. The role is the name an operator
// knows a node by, so it is kept whole; ids of one tree share their start
// (a date, a session) and differ at the end, so what gives way, in order:
// the team before the role (short is the role alone), the id's tail from
// its left (`testing …090110`) down to tailMin cells, then the tail; a
// role alone wider than the room is cut last.
func fitLabel(tagline, short, tail string, room int) string {
	if room <= 0 {
		return ""
	}
	tw := ansi.StringWidth(tail)
	if tagline == "" {
		if tw <= room {
			return tail
		}
		return cutLeft(tail, room)
	}
	if ansi.StringWidth(tagline)+1+tw <= room {
		return tagline + " " + tail
	}
	if short == "" {
		short = tagline
	}
	for _, name := range []string{tagline, short} {
		if left := room - ansi.StringWidth(name) - 1; left >= min(tw, tailMin) {
			return name + " " + cutLeft(tail, left)
		}
	}
	return truncate(short, room)
}

// cutLeft keeps the last w-1 cells of s behind an ellipsis.
func cutLeft(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw <= w {
		return s
	}
	if w <= 1 {
		return ansi.TruncateLeft(s, sw-w, "")
	}
	return ansi.TruncateLeft(s, sw-w+1, "…")
}

// isProblem is the `problems` state filter: anything an operator should look at.
func isProblem(n *model.Node) bool {
	if n.State == model.StateDead || n.State == model.StateMissing || len(n.Problems()) > 0 {
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
