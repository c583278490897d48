package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §6 Confirmation: every action opens a dialog naming id, pid and role
// with the engine's dry run; Cancel is the default; y confirms.
func TestDialogConfirmAndCancel(t *testing.T) {
	tests := []struct {
		name     string
		open     string
		keys     []string
		wantRun  *ActionRequest // the real (non-dry) request, or nil
		wantOpen bool
	}{
		{name: "y confirms kill", open: "x", keys: []string{"y"},
			wantRun: &ActionRequest{Action: model.ActionKill, NodeID: "A/test/3"}},
		{name: "X kills the subtree", open: "X", keys: []string{"y"},
			wantRun: &ActionRequest{Action: model.ActionKill, NodeID: "A/test/3", Tree: true}},
		{name: "r resume", open: "r", keys: []string{"y"},
			wantRun: &ActionRequest{Action: model.ActionResume, NodeID: "A/test/3"}},
		{name: "c compact", open: "c", keys: []string{"y"},
			wantRun: &ActionRequest{Action: model.ActionCompact, NodeID: "A/test/3"}},
		{name: "m merge", open: "m", keys: []string{"y"},
			wantRun: &ActionRequest{Action: model.ActionMerge, NodeID: "A/test/3"}},
		{name: "enter on the default Cancel cancels", open: "x", keys: []string{"enter"}},
		{name: "esc cancels", open: "x", keys: []string{"esc"}},
		{name: "n cancels", open: "x", keys: []string{"n"}},
		{name: "tab then enter confirms", open: "x", keys: []string{"tab", "enter"},
			wantRun: &ActionRequest{Action: model.ActionKill, NodeID: "A/test/3"}},
		{name: "tab twice is back on Cancel", open: "x", keys: []string{"tab", "tab", "enter"}},
		{name: "tree keys do nothing under the dialog", open: "x", keys: []string{"j", "G", "f"}, wantOpen: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runner := &fakeRunner{}
			m := newTestModel(t, 80, 24, Options{Runner: runner})
			m.moveTo(m.rowIndex("A/test/3"))
			run(m, press(m, tt.open))
			if m.dialog == nil {
				t.Fatal("no dialog opened")
			}
			if m.dialog.confirm {
				t.Fatal("the dialog does not default to Cancel")
			}
			view := stripped(m)
			for _, want := range []string{"A/test/3", "4104", "tester", "would " + string(m.dialog.action)} {
				if !strings.Contains(view, want) {
					t.Errorf("dialog does not show %q:\n%s", want, view)
				}
			}
			for _, k := range tt.keys {
				run(m, press(m, k))
			}
			reqs := runner.requests()
			if len(reqs) == 0 || !reqs[0].DryRun {
				t.Fatalf("first request is not a dry run: %+v", reqs)
			}
			var real []ActionRequest
			for _, r := range reqs {
				if !r.DryRun {
					real = append(real, r)
				}
			}
			switch {
			case tt.wantRun == nil && len(real) > 0:
				t.Errorf("ran %+v, want nothing", real)
			case tt.wantRun != nil && (len(real) != 1 || real[0] != *tt.wantRun):
				t.Errorf("ran %+v, want %+v", real, *tt.wantRun)
			}
			if (m.dialog != nil) != tt.wantOpen {
				t.Errorf("dialog open %v, want %v", m.dialog != nil, tt.wantOpen)
			}
		})
	}
}

// SPEC §6: the target is the node id captured when the dialog opened; rows
// moving underneath (inserted above, the old row index now another node,
// the cursor moved by a filter) do not change it.
func TestDialogKeepsTargetWhenRowsMove(t *testing.T) {
	runner := &fakeRunner{}
	m := newTestModel(t, 80, 24, Options{Runner: runner})
	m.moveTo(m.rowIndex("A/test/3"))
	row := m.cursor
	run(m, press(m, "x"))

	// Four new nodes sort before A/test/3 and one after; B vanishes.
	specs := []spec{
		{id: "0-new", state: model.StateRunning, pid: 9},
		{id: "00-new", state: model.StateRunning, pid: 10},
		{id: "000-new", state: model.StateRunning, pid: 13},
		{id: "A", role: "lead", state: model.StateRunning, pid: 4101},
		{id: "A/aaa/0", state: model.StateRunning, pid: 11},
		{id: "A/test/3", role: "tester", state: model.StateRunning, pid: 4104},
		{id: "A/zzz/9", state: model.StateRunning, pid: 12},
	}
	m.Update(updateMsg{update: model.Update{Snapshot: buildSnapshot("/srv/fleet/.sessions", clock12, specs)}})
	if m.rows[row].node.ID == "A/test/3" {
		t.Fatal("the fixture did not move the row")
	}
	if !strings.Contains(stripped(m), "A/test/3") {
		t.Errorf("the dialog no longer names its target")
	}
	run(m, press(m, "y"))
	var real []ActionRequest
	for _, r := range runner.requests() {
		if !r.DryRun {
			real = append(real, r)
		}
	}
	if len(real) != 1 || real[0].NodeID != "A/test/3" || real[0].Action != model.ActionKill {
		t.Errorf("ran %+v, want kill of A/test/3", real)
	}
}

// SPEC §6: the result or refusal shows in the status line and the event pane.
func TestActionOutcomeShown(t *testing.T) {
	tests := []struct {
		name    string
		runner  *fakeRunner
		confirm bool // whether y can run at all
		status  string
		bad     bool
	}{
		{name: "done", runner: &fakeRunner{}, confirm: true, status: "kill done: did kill A/test/3"},
		{name: "refused at dry run cannot be confirmed", runner: &fakeRunner{refuse: "pid 4104 now belongs to another process"}, status: "closed kill"},
		{name: "error at dry run", runner: &fakeRunner{failErr: errors.New("read /srv/x/.heartbeat: permission denied")}, status: "closed kill"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestModel(t, 120, 40, Options{Runner: tt.runner})
			m.moveTo(m.rowIndex("A/test/3"))
			run(m, press(m, "x"))
			if tt.runner.refuse != "" && !strings.Contains(stripped(m), "refused: "+tt.runner.refuse) {
				t.Errorf("refusal not shown in the dialog:\n%s", stripped(m))
			}
			if tt.runner.failErr != nil && !strings.Contains(stripped(m), "cannot plan") {
				t.Errorf("plan error not shown:\n%s", stripped(m))
			}
			run(m, press(m, "y"))
			if m.dialog != nil && !tt.confirm {
				press(m, "esc")
			}
			if !strings.Contains(m.status, tt.status) {
				t.Errorf("status %q, want it to contain %q", m.status, tt.status)
			}
			if tt.confirm {
				if len(m.events) != 1 || m.events[0].id != "A/test/3" {
					t.Errorf("event pane: %+v", m.events)
				}
				press(m, "e")
				if !strings.Contains(stripped(m), "A/test/3  kill: done") {
					t.Errorf("event pane does not show the result:\n%s", stripped(m))
				}
			}
		})
	}
}

// The engine refusing at execution (after a clean dry run) shows as a refusal.
func TestActionRefusedAtExecution(t *testing.T) {
	runner := &fakeRunner{}
	m := newTestModel(t, 80, 24, Options{Runner: runner})
	m.moveTo(m.rowIndex("B"))
	run(m, press(m, "r"))
	runner.refuse = "already pending since 11:59:58"
	run(m, press(m, "y"))
	if !m.bad || !strings.Contains(m.status, "resume refused: already pending") {
		t.Errorf("status %q (bad %v)", m.status, m.bad)
	}
	if len(m.events) != 1 || !m.events[0].bad {
		t.Errorf("events %+v", m.events)
	}
}

func TestDialogWithoutEngine(t *testing.T) {
	m := newTestModel(t, 80, 24, Options{})
	run(m, press(m, "x"))
	if m.dialog == nil || m.dialog.canConfirm() {
		t.Fatal("a dialog without an engine must open and refuse to confirm")
	}
	if !strings.Contains(stripped(m), "no recovery engine") {
		t.Errorf("dialog does not say why:\n%s", stripped(m))
	}
}

// An action confirmed from the detail pane reloads the node's journal.
func TestActionFromDetailsReloadsJournal(t *testing.T) {
	loads := 0
	m := newTestModel(t, 120, 60, Options{Runner: &fakeRunner{}, Journal: func(ctx context.Context, n *model.Node) ([]string, error) {
		loads++
		return []string{fmt.Sprintf("journal read %d", loads)}, nil
	}})
	m.moveTo(m.rowIndex("B"))
	run(m, press(m, "enter"))
	run(m, press(m, "r"))
	run(m, press(m, "y"))
	if loads != 2 || !strings.Contains(stripped(m), "journal read 2") {
		t.Errorf("journal loaded %d times; view:\n%s", loads, stripped(m))
	}
}

// SPEC §6 Confirmation shows the dry run of what will happen: a long step
// (the command a resume starts) wraps inside the dialog, so its end, the
// part that differs between nodes, is on screen at 80 columns too.
func TestDialogShowsWholePlanSteps(t *testing.T) {
	command := `start "/usr/local/bin/teaparty" "dispatch" "--resume" "/srv/fleet/.sessions/20261122-091500/worktree" "--task" "t-102-last-arg" detached, output to /srv/fleet/.sessions/20261122-091500/.resume.log`
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			runner := &fakeRunner{plan: []string{"create /srv/fleet/.sessions/20261122-091500/.resume-pending (O_EXCL)", command}}
			m := newTestModel(t, size[0], size[1], Options{Runner: runner})
			m.moveTo(m.rowIndex("B"))
			run(m, press(m, "r"))
			view := stripped(m)
			for _, want := range []string{`last-arg"`, ".resume.log"} {
				if !strings.Contains(view, want) {
					t.Errorf("dialog cuts off %q:\n%s", want, view)
				}
			}
			for i, l := range strings.Split(view, "\n") {
				if w := ansi.StringWidth(l); w > size[0] {
					t.Errorf("line %d is %d wide, over %d", i, w, size[0])
				}
			}
		})
	}
}

// The status line carries an action's outcome until the operator moves on:
// moving the selection shows the newly selected node's reason again.
func TestStatusGivesWayToSelection(t *testing.T) {
	m := newTestModel(t, 120, 40, Options{Runner: &fakeRunner{}})
	m.moveTo(m.rowIndex("A/test/3"))
	run(m, press(m, "x"))
	run(m, press(m, "y"))
	lines := strings.Split(stripped(m), "\n")
	if status := lines[len(lines)-2]; !strings.Contains(status, "kill done") {
		t.Fatalf("status line does not show the outcome: %q", status)
	}
	press(m, "j")
	lines = strings.Split(stripped(m), "\n")
	if status := lines[len(lines)-2]; !strings.HasPrefix(status, "pid 4201 gone") || !strings.HasSuffix(strings.TrimSpace(status), " B") {
		t.Errorf("status line after moving: %q, want the selected node B and its reason", status)
	}
}
