package ui

import (
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

// dialog confirms one action on one node or on the nodes `v` marked. Its
// targets are the node ids captured when it opened: rows moving underneath
// never change what it acts on.
type dialog struct {
	action  model.Action
	tree    bool
	targets []*target
	confirm bool // focus on Confirm; Cancel is the default
	running bool // confirmed, the engine is at work
	// The scrolled part, as layout made it (layoutDialog): every line of
	// every target, the first one shown, how many fit, and whether the
	// last has been on screen since the dry runs came back: y and Y run
	// nothing before (no step is confirmed unseen).
	body    []string
	inner   int
	top     int
	height  int
	seenEnd bool
}

// target is one node of a dialog with the engine's dry run for it and the
// warnings the operator must accept (with Y) before it runs.
type target struct {
	req      ActionRequest
	pid      int
	role     string
	state    string
	loading  bool // the dry run is on its way
	result   ActionResult
	err      error
	warnings []string
}

// runnable: the engine's dry run neither refused nor failed.
func (t *target) runnable() bool { return !t.loading && t.err == nil && !t.result.Refused }

func (d *dialog) loading() bool {
	for _, t := range d.targets {
		if t.loading {
			return true
		}
	}
	return false
}

// refused: every dry run is back and none can run; the dialog can only
// be closed.
func (d *dialog) refused() bool {
	if d.loading() {
		return false
	}
	for _, t := range d.targets {
		if t.runnable() {
			return false
		}
	}
	return true
}

// warned: some target that would run carries a warning, so only Y runs it.
func (d *dialog) warned() bool {
	for _, t := range d.targets {
		if t.runnable() && len(t.warnings) > 0 {
			return true
		}
	}
	return false
}

// canConfirm: the dry runs are back, at least one target can run, and
// every line of the dialog has been on screen.
func (d *dialog) canConfirm() bool {
	return !d.loading() && !d.running && !d.refused() && d.seenEnd
}

// below is how many lines of the dialog are below its window.
func (d *dialog) below() int { return max(0, len(d.body)-d.top-d.height) }

// hint is the key line under a dialog: only the keys that do something.
func (d *dialog) hint() string {
	switch {
	case d.running:
		return "the engine is at work…"
	case d.loading():
		return "esc cancel"
	case d.refused():
		return "esc close"
	case !d.seenEnd:
		return fmt.Sprintf("↓ j/pgdn: %d more lines to read before it can run · esc cancel", d.below())
	case d.warned():
		return "Y go ahead despite the warnings · esc cancel"
	}
	return "y confirm · esc cancel · tab switch"
}

func actionTitle(action model.Action, tree bool) string {
	if action == model.ActionKill && tree {
		return "kill subtree"
	}
	return string(action)
}

// warningsFor are what an operator must know before action runs on n:
// the engine would go ahead, but a person may not want it to.
func warningsFor(action model.Action, tree bool, n, parent *model.Node) []string {
	var out []string
	if action == model.ActionResume && n.State == model.StateDead && n.Action == model.ActionWait &&
		parent != nil && parent.State == model.StateRunning {
		out = append(out, fmt.Sprintf("its lead %s is running and owns its recovery (action wait)", termtext.Line(parent.ID)))
	}
	if action == model.ActionKill {
		if n.HasFlag(model.FlagBlocked) {
			out = append(out, "it is blocked on a question: killing it drops the question")
		} else if tree {
			n.Walk(func(c *model.Node) {
				if c != n && c.HasFlag(model.FlagBlocked) && len(out) == 0 {
					out = append(out, fmt.Sprintf("%s below it is blocked on a question", termtext.Line(c.ID)))
				}
			})
		}
	}
	if n.HasFlag(model.FlagPidUnverified) {
		out = append(out, fmt.Sprintf("pid %d is unverified: it may be another process now", n.PID()))
	}
	return out
}

// openDialog opens the confirmation for an action on the marked nodes, or
// on the selected node when none is marked, and fetches the engine's dry
// run of each through commands.
func (m *Model) openDialog(action model.Action, tree bool) tea.Cmd {
	var nodes []*model.Node
	if len(m.marked) > 0 && m.snap != nil {
		// In the order the tree shows them.
		for _, r := range flatten(m.snap.Sessions, flatOptions{sort: m.sort}) {
			if m.marked[r.node.ID] {
				nodes = append(nodes, r.node)
			}
		}
	} else if n := m.selectedNode(); n != nil {
		nodes = append(nodes, n)
	}
	if len(nodes) == 0 {
		return nil
	}
	if m.opts.Readonly {
		m.setStatus("read-only: actions are disabled", true)
		return nil
	}
	d := &dialog{action: action, tree: tree}
	for _, n := range nodes {
		d.targets = append(d.targets, &target{
			req: ActionRequest{Action: action, NodeID: n.ID, Tree: tree},
			pid: n.PID(), role: n.Role(), state: stateWords(n), loading: true,
			warnings: warningsFor(action, tree, n, m.snap.ParentOf(n)),
		})
	}
	m.dialog = d
	m.frame.dirty = true
	if m.opts.Runner == nil {
		for _, t := range d.targets {
			t.loading, t.err = false, fmt.Errorf("no recovery engine is connected")
		}
		return nil
	}
	runner, ctx := m.opts.Runner, m.ctx
	cmds := make([]tea.Cmd, 0, len(d.targets))
	for _, t := range d.targets {
		req := t.req
		dry := req
		dry.DryRun = true
		cmds = append(cmds, func() tea.Msg {
			res, err := runner.Run(ctx, dry)
			return dryRunMsg{req: req, result: res, err: err}
		})
	}
	return tea.Batch(cmds...)
}

// dryRunDone files a dry run's answer with its target.
func (m *Model) dryRunDone(msg dryRunMsg) {
	d := m.dialog
	if d == nil {
		return
	}
	for _, t := range d.targets {
		if t.req == msg.req {
			t.loading = false
			t.result, t.err = msg.result, msg.err
			m.frame.dirty = true
		}
	}
}

// dialogKey handles a key while the dialog is open. A dialog that can only
// be closed passes any other key on (pass), so nothing is swallowed.
func (m *Model) dialogKey(msg tea.KeyPressMsg) (cmd tea.Cmd, pass bool) {
	d := m.dialog
	if d.running {
		return nil, false // the engine is at work; the result closes the dialog
	}
	k := msg.String()
	if d.refused() {
		m.closeDialog("closed " + actionTitle(d.action, d.tree))
		switch k {
		case "esc", "enter", "q", "n", "N", "y", "Y":
			return nil, false
		}
		return nil, true
	}
	switch k {
	case "j", "down":
		d.top++
		m.frame.dirty = true
		return nil, false
	case "k", "up":
		d.top--
		m.frame.dirty = true
		return nil, false
	case "pgdown", "ctrl+d", "space":
		d.top += max(1, d.height-1)
		m.frame.dirty = true
		return nil, false
	case "pgup", "ctrl+u":
		d.top -= max(1, d.height-1)
		m.frame.dirty = true
		return nil, false
	case "g", "home":
		d.top = 0
		m.frame.dirty = true
		return nil, false
	case "G", "end":
		d.top = len(d.body)
		m.frame.dirty = true
		return nil, false
	case "Y":
		return m.confirmDialog(), false
	case "y":
		if d.warned() {
			m.frame.dirty = true // the hint already says Y
			return nil, false
		}
		return m.confirmDialog(), false
	case "n", "N", "esc", "q":
		m.closeDialog("cancelled " + actionTitle(d.action, d.tree))
	case "tab", "shift+tab", "left", "right", "h", "l":
		d.confirm = !d.confirm && d.canConfirm() && !d.warned()
		m.frame.dirty = true
	case "enter":
		if d.confirm && !d.warned() {
			return m.confirmDialog(), false
		}
		m.closeDialog("cancelled " + actionTitle(d.action, d.tree))
	}
	return nil, false
}

func (m *Model) closeDialog(status string) {
	m.dialog = nil
	m.setStatus(status, false)
}

// confirmDialog runs the captured requests of the targets that can run,
// one after another; the engine re-checks each at execution.
func (m *Model) confirmDialog() tea.Cmd {
	d := m.dialog
	if !d.canConfirm() {
		return nil
	}
	d.running = true
	m.frame.dirty = true
	var reqs []ActionRequest
	for _, t := range d.targets {
		if t.runnable() {
			reqs = append(reqs, t.req)
		}
	}
	runner, ctx := m.opts.Runner, m.ctx
	feed := m.opts.Feed
	return func() tea.Msg {
		done := actionDoneMsg{outcomes: make([]outcome, 0, len(reqs))}
		for _, req := range reqs {
			res, err := runner.Run(ctx, req)
			done.outcomes = append(done.outcomes, outcome{req: req, result: res, err: err})
		}
		if r, ok := feed.(Refresher); ok {
			r.Refresh() // show the action's effect without waiting for the next event
		}
		return done
	}
}

// actionDone puts each outcome in the event pane and sums them up on the
// status line, the outcome first.
func (m *Model) actionDone(msg actionDoneMsg) {
	if m.dialog != nil && m.dialog.running {
		m.dialog = nil
	}
	if len(msg.outcomes) == 0 {
		return
	}
	var done, refused, failed int
	var firstBad string
	for _, o := range msg.outcomes {
		title := actionTitle(o.req.Action, o.req.Tree)
		e := event{time: m.opts.Now(), id: o.req.NodeID}
		switch {
		case o.err != nil:
			e.text, e.reason, e.bad = title+": failed", o.err.Error(), true
			failed++
		case o.result.Refused:
			e.text, e.reason, e.bad = title+": refused", o.result.Message, true
			refused++
		default:
			e.text, e.reason = title+": done", o.result.Message
			done++
			if o.req.Action == model.ActionResume {
				if m.awaiting == nil {
					m.awaiting = map[string]resumeWatch{}
				}
				if n := m.snap.Node(o.req.NodeID); n != nil {
					m.awaiting[o.req.NodeID] = resumeWatch{dead: n.PID()}
				}
			}
		}
		if e.bad && firstBad == "" {
			firstBad = termtext.Line(o.req.NodeID) + ": " + m.shortMessage(e.reason)
		}
		m.addEvent(e)
	}
	first := msg.outcomes[0]
	title := actionTitle(first.req.Action, first.req.Tree)
	if len(msg.outcomes) == 1 {
		verdict, text := "done", first.result.Message
		switch {
		case first.err != nil:
			verdict, text = "failed", first.err.Error()
		case first.result.Refused:
			verdict = "refused"
		}
		line := title + " " + verdict + ": " + m.shortMessage(text)
		if !strings.Contains(text, first.req.NodeID) {
			line += " (" + termtext.Line(first.req.NodeID) + ")"
		}
		m.setStatus(line, verdict != "done")
		return
	}
	line := fmt.Sprintf("%s of %d: %d done", title, len(msg.outcomes), done)
	if refused > 0 {
		line += fmt.Sprintf(", %d refused", refused)
	}
	if failed > 0 {
		line += fmt.Sprintf(", %d failed", failed)
	}
	if firstBad != "" {
		line += " — " + firstBad
	}
	if refused+failed == 0 {
		clear(m.marked) // the batch is done; a partial one stays marked to retry
	}
	m.setStatus(line, refused+failed > 0)
}

// shortMessage is an engine message with the roots' paths taken out: the
// node is named once, by its id, and the path says nothing more.
func (m *Model) shortMessage(s string) string {
	s = termtext.Line(s)
	if m.snap == nil {
		return s
	}
	for _, root := range m.snap.Roots {
		if root != "" {
			s = strings.ReplaceAll(s, termtext.Line(root)+"/", "")
		}
	}
	return s
}

// resumeWatch follows a resumed node until its agent runs: the pid it had
// when it died, and the pid its heartbeat named while `starting` (a
// wrapper writes its own pid until it has launched the agent).
type resumeWatch struct {
	dead, starter int
}

// noteAgents: after a resume, the status names the agent's own pid once it
// runs, not the pid of what was started (a wrapper's, where they differ).
func (m *Model) noteAgents() {
	for id, w := range m.awaiting {
		n := m.snap.Node(id)
		if n == nil {
			delete(m.awaiting, id)
			continue
		}
		pid := n.PID()
		if pid == 0 || pid == w.dead || n.State != model.StateRunning {
			continue
		}
		if n.Status() == model.StatusStarting || n.HasFlag(model.FlagStarting) {
			w.starter = pid
			m.awaiting[id] = w
			continue
		}
		delete(m.awaiting, id)
		line := fmt.Sprintf("resume %s: its agent runs as pid %d", termtext.Line(id), pid)
		if w.starter != 0 && w.starter != pid {
			line += fmt.Sprintf(" (started through pid %d)", w.starter)
		}
		m.setStatus(line, false)
	}
}

var dialogBorder = lipgloss.RoundedBorder()

// Around the scrolled lines a dialog has its border (2 lines), title,
// a blank line, the buttons and the key hint.
const dialogChrome = 6

// layoutDialog lays the open dialog out for a screen w wide with h lines
// under the header: every line of its targets (nothing is cut, SPEC §6),
// the window of them that fits with the title and the buttons, and
// whether its last line has been on screen.
func (m *Model) layoutDialog(w, h int) {
	d := m.dialog
	// 72 cells, wider (up to 100) when the plan's steps need it.
	want := 72
	for _, t := range d.targets {
		for _, p := range t.result.Plan {
			want = max(want, ansi.StringWidth(termtext.Line(p))+2)
		}
	}
	d.inner = max(20, min(w-4, want, 100))
	d.body = d.body[:0]
	add := func(s string) { d.body = append(d.body, s) }
	for i, t := range d.targets {
		if i > 0 {
			add(fit("", d.inner))
		}
		m.renderTarget(t, d.inner, len(d.targets) > 1, add)
	}
	d.height = max(1, h-dialogChrome)
	if len(d.body) > d.height {
		d.height = max(1, d.height-1) // the line that says what is below
	}
	d.top = max(0, min(d.top, len(d.body)-d.height))
	if !d.loading() && d.top+d.height >= len(d.body) {
		d.seenEnd = true
	}
}

// renderDialog draws the dialog box as layoutDialog laid it out.
func (m *Model) renderDialog() []string {
	d := m.dialog
	st := m.styles
	inner := d.inner
	var lines []string
	add := func(s string) { lines = append(lines, s) }
	title := actionTitle(d.action, d.tree)
	title = strings.ToUpper(title[:1]) + title[1:]
	if len(d.targets) > 1 {
		title += fmt.Sprintf(" %d marked nodes", len(d.targets))
	}
	add(st.DialogTitle.Render(fit(title+"?", inner)))
	end := min(len(d.body), d.top+d.height)
	lines = append(lines, d.body[d.top:end]...)
	if len(d.body) > d.height {
		where := fmt.Sprintf("── lines %d–%d of %d", d.top+1, end, len(d.body))
		if below := d.below(); below > 0 {
			where += fmt.Sprintf(", ↓ %d more (j/pgdn)", below)
		}
		add(st.Muted.Render(fit(where+" ", inner)))
	}
	add(fit("", inner))
	var buttons string
	switch {
	case d.refused():
		buttons = st.ButtonFocus.Render("[ esc close ]")
	case d.running:
		buttons = st.Button.Render("[ running… ]")
	case d.loading():
		buttons = st.ButtonFocus.Render("[ esc cancel ]")
	default:
		cancel, confirm := st.Button.Render("[ Cancel ]"), st.Button.Render("[ y Confirm ]")
		switch {
		case !d.seenEnd:
			confirm = st.Muted.Render("[ read to the end ]")
		case d.warned():
			confirm = st.Warning.Render("[ Y Confirm anyway ]")
		}
		if d.confirm {
			confirm = st.ButtonFocus.Render("[ y Confirm ]")
		} else {
			cancel = st.ButtonFocus.Render("[ Cancel ]")
		}
		buttons = cancel + "  " + confirm
	}
	add(buttons + strings.Repeat(" ", max(0, inner-ansi.StringWidth(buttons))))
	add(st.Muted.Render(fit(d.hint(), inner)))
	box := st.Dialog.Border(dialogBorder).BorderForeground(st.Title.GetForeground()).Padding(0, 1)
	return strings.Split(box.Render(strings.Join(lines, "\n")), "\n")
}

// renderTarget adds one target's lines: who it is, its warnings and its
// dry run (or the refusal).
func (m *Model) renderTarget(t *target, inner int, batch bool, add func(string)) {
	st := m.styles
	pid := "-"
	if t.pid > 0 {
		pid = strconv.Itoa(t.pid)
	}
	role := termtext.Line(t.role)
	if role == "" {
		role = "-"
	}
	if batch {
		add(fit(termtext.Line(t.req.NodeID)+"  pid "+pid+"  "+role+"  "+t.state, inner))
	} else {
		add(fit("node  "+termtext.Line(t.req.NodeID), inner))
		add(fit("pid   "+pid+"   role "+role, inner))
		add(fit("state "+t.state, inner))
		add(fit("", inner))
	}
	switch {
	case t.loading:
		add(fit("  asking the engine what it would do…", inner))
		return
	case t.err != nil:
		add(st.Error.Render(fit("  cannot plan: "+termtext.Line(t.err.Error()), inner)))
		return
	case t.result.Refused:
		for _, l := range wrapIndent("  refused: "+m.shortMessage(t.result.Message), inner, 4) {
			add(st.Error.Render(fit(l, inner)))
		}
		return
	}
	for _, w := range t.warnings {
		for _, l := range wrapIndent("  ⚠ "+w, inner, 4) {
			add(st.Warning.Render(fit(l, inner)))
		}
	}
	if !batch {
		add(fit("dry run:", inner))
	}
	plan := t.result.Plan
	if len(plan) == 0 && t.result.Message != "" {
		plan = []string{t.result.Message}
	}
	// The plan is what `y` will do: every step, wrapped rather than cut
	// (the command a resume starts is at the end); the dialog scrolls.
	for _, p := range plan {
		// The plan stays verbatim: it is what will run, paths and all.
		for _, l := range wrapIndent("  "+termtext.Line(p), inner, 4) {
			add(fit(l, inner))
		}
	}
}
