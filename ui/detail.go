package ui

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

// historyTail is how many CfA history entries the detail pane shows.
const historyTail = 5

// detailLines is everything known about n, one line each, unstyled.
func (m *Model) detailLines(n *model.Node) []string {
	var out []string
	add := func(label, value string) {
		if value == "" {
			value = "-"
		}
		out = append(out, fmt.Sprintf("%-13s %s", label, termtext.Line(value)))
	}
	section := func(title string) { out = append(out, "", "── "+title) }
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		// In the screen clock's zone, whatever zone the time was read in
		// (a started is read as the local zone's, a file's mtime as it was
		// given), so that the times of one pane compare at a glance.
		return t.In(m.now.Location()).Format("2006-01-02 15:04:05") + " (" + model.FormatAge(m.now.Sub(t)) + " ago)"
	}

	if h, ok := m.host(n); ok {
		hostDetail(h, n, add, stamp)
		return out
	}
	add("id", n.ID)
	add("name", agentName(n))
	add("state", stateWords(n))
	add("reason", n.ReasonAt(m.now))
	add("action", string(n.Action))
	if n.Blocked != nil {
		m.questionLines(n, add, section, stamp, &out)
	}
	if !n.OrphanedSince().IsZero() {
		add("orphaned", "since "+stamp(n.OrphanedSince()))
	}
	add("role", n.Role())
	add("team", n.Team())
	add("task", n.TaskID())
	pid := ""
	if p := n.PID(); p != 0 {
		pid = strconv.Itoa(p) + " (process " + n.Process.String() + ")"
	}
	add("pid", pid)
	add("status", n.Status())
	if n.Heartbeat != nil {
		add("started", stamp(n.Heartbeat.StartedTime()))
	}
	add("beat", stamp(n.BeatMtime))
	add("activity", stamp(n.ActivityMtime))
	parent := n.ParentID
	if declared := n.DeclaredParent(); declared != "" {
		parent += "  (declares " + declared + ")"
	}
	add("parent", parent)
	if others := n.OtherParents(); len(others) > 0 {
		add("also claimed", strings.Join(others, ", "))
	}
	add("children", strconv.Itoa(len(n.Children)))

	if sf := n.SourceFields(); len(sf) > 0 {
		// What the node's own system says of it (its state word, end
		// reason, last error, pane, harness), as the system words it.
		section(cmp.Or(n.Source, "source") + " (its own fields)")
		for _, f := range sf {
			out = append(out, fmt.Sprintf("  %-18s %s", termtext.Line(f.Name), termtext.Line(cmp.Or(f.Value, "-"))))
		}
	}

	section("paths")
	add("root", n.Root)
	add("infra dir", n.InfraDir)
	add("heartbeat", n.HeartbeatPath)
	add(".children", n.RegistryPath())
	if n.Blocked != nil {
		add("blocked", n.Blocked.Path)
	}
	if n.HasRegistry {
		torn, bad := 0, 0
		for _, l := range n.RegistryLines() {
			if l.Torn {
				torn++
			}
			if l.Entry == nil {
				bad++
			}
		}
		add("registry", fmt.Sprintf("%d lines, %d unparseable, %d torn; modified %s",
			len(n.RegistryLines()), bad, torn, stamp(n.RegistryMtime())))
	}

	section("retries")
	phase, left := liveness.RetriesLeft(n)
	add("retries", fmt.Sprintf("total %d, this CfA state %d, left %d", n.Retries.Total, phase, left))
	if rp := n.ResumePending(); rp != nil {
		add("resume", fmt.Sprintf("pending since %s by %s (pid %d)", stamp(rp.Time), rp.User, rp.PID))
	}
	if n.Merged {
		add("merged", "yes (.merged)")
	}

	section("CfA")
	if n.Cfa == nil {
		add("state", "")
	} else {
		add("state", n.Cfa.State+" ("+n.Cfa.Outcome()+")")
		add("backtracks", strconv.Itoa(n.Cfa.BacktrackCount))
		if n.Cfa.CfaDetail != nil && n.Cfa.Phase != "" {
			add("phase", n.Cfa.Phase)
		}
		history := m.cfaHistory(n)
		start := max(0, len(history)-historyTail)
		if len(history) > 0 {
			add("history", fmt.Sprintf("last %d of %d", len(history)-start, len(history)))
		}
		for _, h := range history[start:] {
			out = append(out, "  "+termtext.Line(string(h)))
		}
	}

	section("registry entry (in the parent's .children)")
	if line, ok := m.registryLine(n); ok {
		out = append(out, fmt.Sprintf("  line %d: %s", line.Number, termtext.Line(string(line.Raw))))
	} else if n.Entry == nil {
		out = append(out, "  -")
	} else if b, err := json.Marshal(n.Entry); err == nil {
		out = append(out, "  "+termtext.Line(string(b)))
	}

	section("heartbeat (raw)")
	out = append(out, m.heartbeatLines(n)...)

	if len(n.Problems()) > 0 {
		section("problems")
		for _, p := range n.Problems() {
			out = append(out, "  "+termtext.Line(p.Path+": "+p.Error))
		}
	}

	section("output")
	out = append(out, m.outputLines(n)...)

	section("journal")
	j, ok := m.journal[n.ID]
	switch {
	case m.opts.Journal == nil:
		out = append(out, "  (no journal reader)")
	case !ok:
		out = append(out, "  loading…")
	case j.err != nil:
		out = append(out, "  "+termtext.Line(j.err.Error()))
	case len(j.lines) == 0:
		out = append(out, "  no actions recorded for this node")
	default:
		for _, l := range j.lines {
			out = append(out, "  "+termtext.Line(l))
		}
	}
	return out
}

// questionLines is the question a blocked node waits on, whole, its line
// breaks kept (each line wraps on screen), and where the answer goes.
func (m *Model) questionLines(n *model.Node, add func(label, value string), section func(string), stamp func(time.Time) string, out *[]string) {
	b := n.Blocked
	if !b.Since.IsZero() {
		add("waiting", "since "+stamp(b.Since))
	}
	if b.Kind != "" {
		add("kind", b.Kind)
	}
	if path := answerPath(n); path != "" {
		add("answer to", path+"  (a writes it)")
	} else if n.Source != "" {
		add("answer to", n.Source+"'s own reply channel")
	}
	if at, ok := m.answeredAt[n.ID]; ok {
		add("answered", "at "+at.Format("15:04:05")+", waiting for the agent")
	}
	section("question")
	paragraph := func(text string) {
		if strings.TrimSpace(text) == "" {
			*out = append(*out, "  -")
			return
		}
		for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			*out = append(*out, "  "+termtext.Line(strings.TrimRight(l, "\r")))
		}
	}
	paragraph(b.Question)
	if b.Context != "" {
		*out = append(*out, "", "  context:")
		paragraph(b.Context)
	}
	*out = append(*out, "")
}

// detailIndent is where a detail line's value starts ("%-13s ").
const detailIndent = 14

// wrapIndent wraps l into lines of w cells at word and path boundaries
// (a word longer than a line is cut). The value wraps under itself: after a
// label ("%-13s "), or after the line's own leading spaces.
func wrapIndent(l string, w, indent int) []string {
	if ansi.StringWidth(l) <= w || w <= indent+8 {
		return []string{l}
	}
	prefix := l[:len(l)-len(strings.TrimLeft(l, " "))]
	if len(l) > indent && l[0] != ' ' && l[indent-1] == ' ' && ansi.StringWidth(l[:indent]) == indent {
		prefix = l[:indent]
	}
	pad := strings.Repeat(" ", ansi.StringWidth(prefix))
	lines := strings.Split(ansi.Wrap(l[len(prefix):], w-len(pad), "/,"), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = prefix + lines[i]
		} else {
			lines[i] = pad + lines[i]
		}
	}
	return lines
}

// rawJSONLines indents valid JSON and shows anything else as it is.
func rawJSONLines(raw []byte) []string {
	if len(raw) == 0 {
		return []string{"  -"}
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "  ", "  "); err == nil {
		// Valid JSON may still carry C1 controls and bidirectional
		// overrides unescaped inside its strings.
		lines := strings.Split("  "+buf.String(), "\n")
		for i, l := range lines {
			lines[i] = termtext.Line(l)
		}
		return lines
	}
	var out []string
	for _, l := range strings.Split(string(raw), "\n") {
		out = append(out, "  "+termtext.Line(l))
	}
	return out
}

// detailView is the selected node's detail lines, wrapped to w: the node
// as of the latest snapshot (rows point into it). Long values (paths,
// reasons) wrap under their label rather than lose their end.
func (m *Model) detailView(w int) []string {
	n := m.selectedNode()
	if n == nil {
		return nil
	}
	var all []string
	for _, l := range m.detailLines(n) {
		all = append(all, wrapIndent(l, w, detailIndent)...)
	}
	return all
}

// renderDetail shows the selected node's details (detailView, as layout
// scrolled them) in h lines.
func (m *Model) renderDetail(w, h int) []string {
	n := m.selectedNode()
	if n == nil {
		return []string{m.styles.Muted.Render("no node selected")}
	}
	out := make([]string, 0, h)
	out = append(out, m.styles.PaneTitle.Render(fit("── details  "+termtext.Line(n.ID)+"  (enter/esc back, ↑↓ pgup/pgdn g/G scroll) "+strings.Repeat("─", w), w)))
	out = append(out, strings.Split(m.detailVP.View(), "\n")...)
	return out[:min(len(out), h)]
}
