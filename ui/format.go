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

// labelParts are a row's name beside its glyph: role (and team when it
// differs) and the id's tail, so siblings of one team stay apart.
func labelParts(n *model.Node) (tagline, tail string) {
	role, team := n.Role(), n.Team()
	tagline = role
	switch {
	case role == "" && team != "":
		tagline = team
	case team != "" && team != role:
		tagline = team + "/" + role
	}
	return termtext.Line(tagline), termtext.Line(idTail(n.ID))
}

// fitLabel fits a label into room cells. Ids of one tree share their start
// (a date, a session) and differ at the end, so the end of the id tail is
// what is kept: the role is cut first, then the tail from its left.
func fitLabel(tagline, tail string, room int) string {
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
	// A role cut to two cells and an ellipsis still says something.
	if left := room - tw - 1; left >= 3 {
		return ansi.Truncate(tagline, left, "…") + " " + tail
	}
	if tw <= room {
		return tail
	}
	return cutLeft(tail, room)
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
