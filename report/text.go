package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/internal/glyph"
	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

// Painter colours a piece of a line by the node's state; nil prints plain.
type Painter func(state model.State, text string) string

// WriteText writes the forest as an indented tree, one node a line: glyph,
// state word and flags, id, name (the agent's, as its system gives it), pid, beat age, action, reason.
func WriteText(w io.Writer, snap *model.Snapshot, paint Painter) error {
	sum := snap.Summarize()
	var b strings.Builder
	fmt.Fprintf(&b, "%d sessions, %d nodes: %d running, %d dead, %d finished, %d missing",
		sum.Sessions, sum.Nodes, sum.Running, sum.Dead, sum.Finished, sum.Missing)
	for _, f := range []model.Flag{model.FlagStalled, model.FlagKillCandidate, model.FlagBlocked, model.FlagOrphaned} {
		if c := sum.ByFlag[f]; c > 0 {
			fmt.Fprintf(&b, ", %d %s", c, f)
		}
	}
	if snap.Thresholds.NoPidCheck {
		b.WriteString(" (no pid check: liveness from mtimes alone)")
	}
	b.WriteString("\n")

	var rows [][]string
	var states []model.State
	for _, s := range snap.Sessions {
		s.Walk(func(n *model.Node) {
			rows = append(rows, textRow(n, snap))
			states = append(states, n.State)
		})
	}
	widths := make([]int, 6)
	for _, r := range rows {
		for i := range widths {
			widths[i] = max(widths[i], ansi.StringWidth(r[i]))
		}
	}
	for i, r := range rows {
		var line strings.Builder
		for c := range widths {
			line.WriteString(r[c])
			line.WriteString(strings.Repeat(" ", widths[c]-ansi.StringWidth(r[c])+2))
		}
		line.WriteString(r[6])
		text := strings.TrimRight(line.String(), " ")
		if paint != nil {
			text = paint(states[i], text)
		}
		b.WriteString(text)
		b.WriteString("\n")
	}
	if len(snap.Problems) > 0 {
		fmt.Fprintf(&b, "\n%d problems:\n", len(snap.Problems))
		for _, p := range snap.Problems {
			fmt.Fprintf(&b, "  %s: %s\n", termtext.OneLine(p.Path, maxTextField), termtext.OneLine(p.Error, maxTextField))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// textRow is the columns of one line: indented glyph+state+flags, id, name,
// pid, beat age, action; then the reason.
func textRow(n *model.Node, snap *model.Snapshot) []string {
	depth := 0
	for a := n.Parent; a != nil; a = a.Parent {
		depth++
	}
	state := glyph.State(n.State) + " " + string(n.State)
	for _, f := range n.Flags {
		state += " " + string(f)
	}
	pid := "-"
	if n.PID() != 0 {
		pid = "pid " + strconv.Itoa(n.PID())
	}
	age := "-"
	if !n.BeatMtime.IsZero() {
		age = "beat " + model.FormatAge(snap.GeneratedAt.Sub(n.BeatMtime))
	}
	// The agent's name as its own system gives it (an opencode-teams
	// agent's, middle's Epic), else the team.
	role := termtext.OneLine(sources.AgentName(n), maxTextField)
	if role == "" {
		role = termtext.OneLine(n.Team(), maxTextField)
	}
	if role == "" {
		role = "-"
	}
	return []string{strings.Repeat("  ", depth) + state, termtext.OneLine(n.ID, maxTextField), role, pid, age, string(n.Action), termtext.OneLine(n.ReasonAt(snap.GeneratedAt), maxTextField)}
}

// maxTextField caps one agent-written field of a line (termtext.OneLine
// keeps it on one line, free of terminal escapes); a path fits whole.
const maxTextField = 4096
