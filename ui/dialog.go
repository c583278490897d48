package ui

import (
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/model"
)

// dialog confirms one action. Its target is the node id captured when it
// opened: rows moving underneath never change what `y` acts on.
type dialog struct {
	req     ActionRequest
	pid     int
	role    string
	state   string
	loading bool // the dry run is on its way
	result  ActionResult
	err     error
	confirm bool // focus on Confirm; Cancel is the default
	running bool // confirmed, the engine is at work
}

// canConfirm: a dry run the engine refused (or that failed) cannot be
// confirmed; the engine would refuse again.
func (d *dialog) canConfirm() bool {
	return !d.loading && !d.running && d.err == nil && !d.result.Refused
}

func actionTitle(req ActionRequest) string {
	if req.Action == model.ActionKill && req.Tree {
		return "kill subtree"
	}
	return string(req.Action)
}

// openDialog opens the confirmation for an action on the selected node and
// fetches the engine's dry run through a command.
func (m *Model) openDialog(action model.Action, tree bool) tea.Cmd {
	n := m.selectedNode()
	if n == nil {
		return nil
	}
	if m.opts.Readonly {
		m.setStatus("read-only: actions are disabled", true)
		return nil
	}
	req := ActionRequest{Action: action, NodeID: n.ID, Tree: tree}
	d := &dialog{req: req, pid: n.PID(), role: n.Role(), state: stateWords(n), loading: true}
	m.dialog = d
	m.dirty = true
	if m.opts.Runner == nil {
		d.loading = false
		d.err = fmt.Errorf("no recovery engine is connected")
		return nil
	}
	runner, ctx := m.opts.Runner, m.ctx
	dry := req
	dry.DryRun = true
	return func() tea.Msg {
		res, err := runner.Run(ctx, dry)
		return dryRunMsg{req: req, result: res, err: err}
	}
}

func (m *Model) dialogKey(msg tea.KeyPressMsg) tea.Cmd {
	d := m.dialog
	if d.running {
		return nil // the engine is at work; the result closes the dialog
	}
	switch msg.String() {
	case "y", "Y":
		return m.confirmDialog()
	case "n", "N", "esc", "q":
		m.closeDialog("cancelled " + actionTitle(d.req) + " " + clean(d.req.NodeID))
	case "tab", "shift+tab", "left", "right", "h", "l":
		d.confirm = !d.confirm && d.canConfirm()
	case "enter":
		if d.confirm {
			return m.confirmDialog()
		}
		m.closeDialog("cancelled " + actionTitle(d.req) + " " + clean(d.req.NodeID))
	}
	return nil
}

func (m *Model) closeDialog(status string) {
	m.dialog = nil
	m.setStatus(status, false)
}

// confirmDialog runs the captured request for real; the engine re-checks
// its preconditions at execution.
func (m *Model) confirmDialog() tea.Cmd {
	d := m.dialog
	if !d.canConfirm() {
		return nil
	}
	d.running = true
	m.dirty = true
	runner, ctx, req := m.opts.Runner, m.ctx, d.req
	feed := m.opts.Feed
	return func() tea.Msg {
		res, err := runner.Run(ctx, req)
		if r, ok := feed.(Refresher); ok {
			r.Refresh() // show the action's effect without waiting for the next event
		}
		return actionDoneMsg{req: req, result: res, err: err}
	}
}

func (m *Model) actionDone(msg actionDoneMsg) {
	if m.dialog != nil && m.dialog.req == msg.req {
		m.dialog = nil
	}
	title := actionTitle(msg.req)
	e := event{time: m.opts.Now(), id: msg.req.NodeID}
	switch {
	case msg.err != nil:
		e.text, e.reason, e.bad = title+": failed", msg.err.Error(), true
	case msg.result.Refused:
		e.text, e.reason, e.bad = title+": refused", msg.result.Message, true
	default:
		e.text, e.reason = title+": done", msg.result.Message
	}
	m.addEvent(e)
	m.setStatus(clean(e.id)+" "+e.text+": "+clean(e.reason), e.bad)
}

// renderDialog draws the dialog box, width w at most.
func (m *Model) renderDialog(w int) []string {
	d := m.dialog
	st := m.styles
	// 72 cells, wider (up to 100) when the plan's steps need it.
	want := 72
	for _, p := range d.result.Plan {
		want = max(want, ansi.StringWidth(clean(p))+2)
	}
	inner := max(20, min(w-4, want, 100))
	var lines []string
	add := func(s string) { lines = append(lines, s) }
	add(st.DialogTitle.Render(fit(strings.ToUpper(actionTitle(d.req)[:1])+actionTitle(d.req)[1:]+"?", inner)))
	add(fit("node  "+clean(d.req.NodeID), inner))
	pid := "-"
	if d.pid > 0 {
		pid = strconv.Itoa(d.pid)
	}
	role := clean(d.role)
	if role == "" {
		role = "-"
	}
	add(fit("pid   "+pid+"   role "+role, inner))
	add(fit("state "+d.state, inner))
	add(fit("", inner))
	switch {
	case d.loading:
		add(fit("asking the engine what it would do…", inner))
	case d.err != nil:
		add(st.Error.Render(fit("cannot plan: "+clean(d.err.Error()), inner)))
	default:
		if d.result.Refused {
			for _, l := range wrapIndent("the engine refuses: "+clean(d.result.Message), inner, 2) {
				add(st.Error.Render(fit(l, inner)))
			}
		} else {
			add(fit("dry run:", inner))
			plan := d.result.Plan
			if len(plan) == 0 && d.result.Message != "" {
				plan = []string{d.result.Message}
			}
			// The plan is what `y` will do: its steps wrap rather than lose
			// their end (the command a resume starts is at the end).
			const maxPlanLines = 10
			shown := 0
			for i, p := range plan {
				wrapped := wrapIndent("  "+clean(p), inner, 4)
				if shown+len(wrapped) > maxPlanLines {
					add(fit(fmt.Sprintf("  … %d more steps", len(plan)-i), inner))
					break
				}
				for _, l := range wrapped {
					add(fit(l, inner))
				}
				shown += len(wrapped)
			}
		}
	}
	add(fit("", inner))
	cancel, confirm := st.Button.Render("[ Cancel ]"), st.Button.Render("[ y Confirm ]")
	if d.confirm {
		confirm = st.ButtonFocus.Render("[ y Confirm ]")
	} else {
		cancel = st.ButtonFocus.Render("[ Cancel ]")
	}
	if !d.canConfirm() {
		confirm = st.Muted.Render("[ y Confirm ]")
		if d.running {
			confirm = st.Muted.Render("[ running… ]")
		}
	}
	buttons := cancel + "  " + confirm
	add(buttons + strings.Repeat(" ", max(0, inner-len("[ Cancel ]  [ y Confirm ]"))))
	add(st.Muted.Render(fit("y confirm · enter on Cancel cancels · esc cancel · tab switch", inner)))
	box := st.Dialog.Border(dialogBorder).BorderForeground(st.Title.GetForeground()).Padding(0, 1)
	return strings.Split(box.Render(strings.Join(lines, "\n")), "\n")
}
