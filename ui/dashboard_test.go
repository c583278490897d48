package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/themes"
)

// monoSet is the theme set NO_COLOR gives: mono first.
func monoSet() themes.Set {
	set := themes.Set{Themes: themes.Builtins()}
	for i, th := range set.Themes {
		if th.Name == themes.Mono {
			set.Start = i
		}
	}
	return set
}

// everyFlagSnapshot is the worked example with one node carrying every
// flag and the header's every note present.
func everyFlagSnapshot() *model.Snapshot {
	snap := exampleSnapshot()
	snap.ByID["A/test/3"].Flags = append([]model.Flag(nil), model.Flags...)
	snap.Watch.Warnings = []string{"/srv/fleet is on nfs: mtime liveness unreliable"}
	snap.Thresholds.NoPidCheck = true
	return snap
}

// SPEC §6: the dashboard's screens at 80×24 and 120×40, in the default
// theme and in mono (what NO_COLOR selects): a collapsed lead over a dead
// worker, the header with every flag and a pause, a refused dialog, a
// batch dialog, a warned dialog, n's jump into a collapsed session, the
// status after an action, the severity sort.
func TestGoldenDashboard(t *testing.T) {
	screens := []struct {
		name   string
		opts   func() Options
		setup  func(m *Model)
		expect []string // what the frame must show, at every size and theme
	}{
		{name: "collapsed_lead", setup: func(m *Model) { press(m, "space") },
			expect: []string{"▸● lead A", "✖1 ◆1 ⊘1"}},
		{name: "every_flag", opts: func() Options {
			return Options{Initial: everyFlagSnapshot(), Readonly: true, Notes: []string{"a note"}}
		}, setup: func(m *Model) {
			press(m, "f")
			press(m, "p")
		}, expect: []string{"PAUSED", "kill_candidate", " more"}},
		{name: "refused", opts: func() Options {
			return Options{Runner: &fakeRunner{refuse: "pid 4104 now belongs to another process"}}
		}, setup: func(m *Model) {
			m.moveTo(m.rowIndex("A/test/3"))
			run(m, press(m, "x"))
		}, expect: []string{"refused: pid 4104", "[ esc close ]"}},
		{name: "batch", setup: func(m *Model) {
			for _, id := range []string{"A/test/3", "B/code/1", "C"} {
				m.moveTo(m.rowIndex(id))
				press(m, "v")
			}
			run(m, press(m, "x"))
		}, expect: []string{"Kill 3 marked nodes?", "would kill A/test/3", "would kill B/code/1", "would kill C"}},
		{name: "warned", setup: func(m *Model) {
			m.moveTo(m.rowIndex("A/code/2"))
			run(m, press(m, "r"))
		}, expect: []string{"⚠ its lead A is running", "Y Confirm anyway"}},
		{name: "next_action", setup: func(m *Model) {
			press(m, "-")
			press(m, "n")
			press(m, "n")
		}, expect: []string{"▾● lead A", "▸✖ lead B", "6/7  B"}},
		{name: "status_after_kill", setup: func(m *Model) {
			m.moveTo(m.rowIndex("A/test/3"))
			run(m, press(m, "x"))
			run(m, press(m, "y"))
		}, expect: []string{"kill done: did kill A/test/3"}},
		{name: "sort_severity", setup: func(m *Model) { press(m, "s") },
			expect: []string{"sort: severity"}},
	}
	sizes := []struct {
		name string
		w, h int
	}{{"80x24", 80, 24}, {"120x40", 120, 40}}
	for _, sc := range screens {
		for _, sz := range sizes {
			for _, mono := range []bool{false, true} {
				name := sc.name + "_" + sz.name
				if mono {
					name += "_mono"
				}
				t.Run(name, func(t *testing.T) {
					opts := Options{Runner: &fakeRunner{}}
					if sc.opts != nil {
						opts = sc.opts()
					}
					if mono {
						opts.Themes = monoSet()
					}
					m := newTestModel(t, sz.w, sz.h, opts)
					sc.setup(m)
					frame := m.View().Content
					checkFrame(t, frame, sz.w, sz.h)
					if mono && carriesColour(frame) {
						t.Errorf("mono frame carries colour")
					}
					plain := ansi.Strip(frame)
					for _, want := range sc.expect {
						if !strings.Contains(plain, want) {
							t.Errorf("frame lacks %q:\n%s", want, plain)
						}
					}
					golden.RequireEqual(t, plain)
				})
			}
		}
	}
}

// SPEC §6 Tree: a collapsed row and a session row carry the worst state,
// flag and action beneath them with their counts; an expanded inner row
// shows nothing there (its children are on screen).
func TestRollupShowsWhatLiesBeneath(t *testing.T) {
	m := newTestModel(t, 120, 40, Options{})
	tests := []struct {
		id   string
		want string
	}{
		{"A", "✖1 ◆1 ⊘1"}, // a dead coder, a kill candidate, a kill
		{"B", "✖1 ◑1 ✎1"}, // a dead tester, the stalled asker, an answer
		{"A/code/2", ""},  // a leaf
		{"C", ""},         // a session without children
	}
	for _, tt := range tests {
		r := m.rows[m.rowIndex(tt.id)]
		got := ""
		if r.roll != nil {
			got = r.roll.String()
		}
		if got != tt.want {
			t.Errorf("%s: roll-up %q, want %q", tt.id, got, tt.want)
		}
	}
	// Collapsing the lead keeps its roll-up on its row.
	m.moveTo(m.rowIndex("A"))
	press(m, "space")
	if !strings.Contains(stripped(m), "▸● lead A") || !strings.Contains(stripped(m), "✖1 ◆1 ⊘1") {
		t.Errorf("a collapsed lead does not show the dead worker beneath it:\n%s", stripped(m))
	}
}

// SPEC §6 Keys: n and N go to the next and previous node needing action
// (an action the operator takes, not wait), expanding collapsed ancestors; sorting hides none.
func TestNextActionVisitsEveryNodeInOrder(t *testing.T) {
	for _, order := range []string{"id", "severity", "age", "action"} {
		t.Run(order, func(t *testing.T) {
			m := newTestModel(t, 80, 24, Options{})
			for m.sort.String() != order {
				press(m, "s")
			}
			press(m, "-") // collapse everything
			// From the selection on, wrapping around: each node needing action once.
			all := flatten(m.snap.Sessions, flatOptions{sort: m.sort})
			at := slices.IndexFunc(all, func(r row) bool { return r.node.ID == m.selected })
			var want []string
			for i := 1; i <= len(all); i++ {
				if n := all[(at+i)%len(all)].node; operatorActs(n) {
					want = append(want, n.ID)
				}
			}
			var got []string
			for range want {
				press(m, "n")
				got = append(got, m.selected)
			}
			if !slices.Equal(got, want) {
				t.Errorf("n visits %v, want %v", got, want)
			}
			press(m, "N")
			if m.selected != want[len(want)-2] {
				t.Errorf("N from %s goes to %s, want %s", want[len(want)-1], m.selected, want[len(want)-2])
			}
		})
	}
}

// Through a real program on a generated 32-session tree: n from the top,
// with every session collapsed, reaches every node needing action.
func TestEndToEndNextActionReachesEveryNode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".sessions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := treegen.Generate(dir, 32, 6, 3, time.Now()); err != nil {
		t.Fatal(err)
	}
	snap, err := scanner.Scan(scanner.Options{Roots: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Sessions) != 32 {
		t.Fatalf("generated %d sessions, want 32", len(snap.Sessions))
	}
	// Every fifth node in id order needs something, deep ones included
	// (not a wait: n does not stop there).
	actions := []model.Action{model.ActionKill, model.ActionResume, model.ActionMerge, model.ActionAnswer}
	var ids []string
	for id := range snap.ByID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	need := map[string]bool{}
	for i, id := range ids {
		if i%5 == 2 {
			snap.ByID[id].Action = actions[i%len(actions)]
			need[id] = true
		} else {
			snap.ByID[id].Action = model.ActionNone
		}
	}
	m := New(Options{Initial: snap, Now: fixedNow, Tick: -1})
	visited := map[string]bool{}
	visit := &visitRecorder{Model: m, visited: visited}
	tm := teatest.NewTestModel(t, visit, teatest.WithInitialTermSize(80, 24))
	tm.Send(keyMsg("-"))
	for range len(need) {
		tm.Send(keyMsg("n"))
	}
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	for id := range need {
		if !visited[id] {
			t.Errorf("n never reached %s", id)
		}
	}
	for id := range visited {
		if !need[id] {
			t.Errorf("n stopped at %s, which needs no action", id)
		}
	}
}

// visitRecorder notes the node selected after each n.
type visitRecorder struct {
	*Model
	visited map[string]bool
}

func (v *visitRecorder) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := v.Model.Update(msg)
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "n" {
		v.visited[v.selected] = true
	}
	return v, cmd
}

// SPEC §6: below 80 columns the columns go in a documented order; at 80
// STATE and ACTION stay and an id is cut from the left, so the tail that
// tells siblings apart shows; the key line always ends with help and quit.
func TestNarrowLayouts(t *testing.T) {
	specs := []spec{
		{id: "20261122-093012-a7f3", role: "lead", state: model.StateRunning, pid: 10, beat: time.Second},
		{id: "20261122-093012-a7f3/code/20261122-093514-1c2e", role: "coder", team: "code", state: model.StateDead, action: model.ActionWait, reason: "pid 11 gone", pid: 11, beat: time.Minute},
		{id: "20261122-093012-a7f3/code/20261122-093514-9d4b", role: "coder", team: "code", state: model.StateRunning, flags: []model.Flag{model.FlagStalled, model.FlagKillCandidate}, action: model.ActionKill, reason: "not beating", pid: 12, beat: 6 * time.Minute},
		{id: "20261122-101500-b001", role: "lead", state: model.StateDead, action: model.ActionResume, reason: "pid 20 gone", pid: 20, beat: time.Minute},
	}
	tests := []struct {
		w       int
		heads   []string
		noHeads []string
		tails   []string
	}{
		{w: 120, heads: []string{"NODE", "STATE", "ACTION", "BELOW", "BEAT", "PID", "CFA", "RT", "REASON"}, tails: []string{"1c2e", "9d4b", "a7f3", "b001"}},
		{w: 80, heads: []string{"NODE", "STATE", "ACTION", "BELOW", "BEAT", "REASON"}, noHeads: []string{"PID", "CFA"}, tails: []string{"1c2e", "9d4b", "a7f3", "b001"}},
		{w: 64, heads: []string{"NODE", "STATE", "ACTION", "BELOW", "REASON"}, noHeads: []string{"BEAT"}, tails: []string{"1c2e", "9d4b", "a7f3", "b001"}},
		{w: 50, heads: []string{"NODE", "STATE", "ACTION", "BELOW"}, noHeads: []string{"REASON"}, tails: []string{"1c2e", "9d4b", "a7f3", "b001"}},
		{w: 40, heads: []string{"NODE", "STATE", "ACTION"}, noHeads: []string{"BELOW"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d columns", tt.w), func(t *testing.T) {
			m := newTestModel(t, tt.w, 24, Options{Initial: buildSnapshot("/srv/s/.sessions", clock12, specs)})
			frame := m.View().Content
			checkFrame(t, frame, tt.w, 24)
			lines := strings.Split(ansi.Strip(frame), "\n")
			head := lines[m.frame.headerH-1]
			for _, h := range tt.heads {
				if !strings.Contains(head, h) {
					t.Errorf("column head lacks %s: %q", h, head)
				}
			}
			for _, h := range tt.noHeads {
				if strings.Contains(head, h) {
					t.Errorf("column head still has %s: %q", h, head)
				}
			}
			body := strings.Join(lines[m.frame.headerH:len(lines)-2], "\n")
			for _, tail := range tt.tails {
				if !strings.Contains(body, tail) {
					t.Errorf("no row shows the id tail %s:\n%s", tail, body)
				}
			}
			if !strings.Contains(body, "kill") || !strings.Contains(body, "resume") {
				t.Errorf("ACTION is not readable:\n%s", body)
			}
			if keys := lines[len(lines)-1]; !strings.HasSuffix(keys, "? help · q quit") {
				t.Errorf("key line does not end with help and quit: %q", keys)
			}
			golden.RequireEqual(t, ansi.Strip(frame))
		})
	}
}

// SPEC §6 Keys: the key line ends with `? help · q quit` and fits the
// screen at any width, on the tree and in the details alike, whichever
// bindings the width cuts (the details have more than the tree).
func TestKeyLineEndsWithHelpAndQuitAtEveryWidth(t *testing.T) {
	tests := []struct {
		name string
		keys []string
	}{
		{name: "tree"},
		{name: "details", keys: []string{"enter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for w := 20; w <= 200; w++ {
				m := newTestModel(t, w, 24, Options{})
				for _, k := range tt.keys {
					press(m, k)
				}
				lines := strings.Split(stripped(m), "\n")
				keys := lines[len(lines)-1]
				if ansi.StringWidth(keys) > w {
					t.Fatalf("at %d columns the key line is %d wide: %q", w, ansi.StringWidth(keys), keys)
				}
				if !strings.HasSuffix(keys, "? help · q quit") {
					t.Fatalf("at %d columns the key line does not end with help and quit: %q", w, keys)
				}
			}
		})
	}
}

// SPEC §6 Tree: column widths depend on the terminal's width alone; a
// filter that leaves only short rows moves no column.
func TestColumnsDoNotMoveWithTheFilter(t *testing.T) {
	m := newTestModel(t, 100, 30, Options{})
	head := strings.Split(stripped(m), "\n")[m.frame.headerH-1]
	for range 5 {
		press(m, "f")
		if got := strings.Split(stripped(m), "\n")[m.frame.headerH-1]; got != head {
			t.Errorf("the column head moved with filter %s:\n%q\n%q", m.state, got, head)
		}
	}
}

// SPEC §6 Sort: s cycles id, severity, age, action; siblings reorder,
// every node stays.
func TestSortOrdersSiblings(t *testing.T) {
	tests := []struct {
		order string
		want  []string // A's children in order
	}{
		{"id", []string{"A/code/2", "A/docs/4", "A/plan/1", "A/test/3"}},
		{"severity", []string{"A/code/2", "A/docs/4", "A/test/3", "A/plan/1"}},
		{"age", []string{"A/plan/1", "A/test/3", "A/code/2", "A/docs/4"}},
		{"action", []string{"A/test/3", "A/code/2", "A/docs/4", "A/plan/1"}},
	}
	m := newTestModel(t, 120, 40, Options{})
	for i, tt := range tests {
		if i > 0 {
			press(m, "s")
		}
		if m.sort.String() != tt.order {
			t.Fatalf("sort is %s, want %s", m.sort, tt.order)
		}
		var got []string
		for _, r := range m.rows {
			if r.node.Parent != nil && r.node.Parent.ID == "A" {
				got = append(got, r.node.ID)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("sort %s: %v, want %v", tt.order, got, tt.want)
		}
		if len(m.rows) != 10 {
			t.Errorf("sort %s shows %d rows, want all 10", tt.order, len(m.rows))
		}
		if !strings.Contains(stripped(m), "sort: "+tt.order) {
			t.Errorf("the header does not show sort %s", tt.order)
		}
	}
}

// SPEC §6 Confirmation: x on marked nodes opens one dialog with every
// target's dry run; y runs each and the status line sums them up.
func TestBatchActionRunsEveryMarkedNode(t *testing.T) {
	runner := &fakeRunner{}
	m := newTestModel(t, 120, 40, Options{Runner: runner})
	for _, id := range []string{"C", "A/test/3"} {
		m.moveTo(m.rowIndex(id))
		press(m, "v")
	}
	run(m, press(m, "x"))
	run(m, press(m, "y"))
	var real []string
	for _, r := range runner.requests() {
		if !r.DryRun {
			real = append(real, r.NodeID)
		}
	}
	if !slices.Equal(real, []string{"A/test/3", "C"}) {
		t.Errorf("the engine ran %v, want A/test/3 then C", real)
	}
	if !strings.Contains(m.status, "kill of 2: 2 done") {
		t.Errorf("status %q does not sum the batch up", m.status)
	}
	if len(m.marked) != 0 {
		t.Errorf("marks %v stay after a batch that went through", m.marked)
	}
}

// SPEC §6 Confirmation: a refused dry run shows the refusal and only a way
// to close; y runs nothing, and a key other than the closing ones closes
// the dialog and does what it does on the tree.
func TestRefusedDialogOnlyCloses(t *testing.T) {
	runner := &fakeRunner{refuse: "pid 4104 now belongs to another process"}
	m := newTestModel(t, 80, 24, Options{Runner: runner})
	m.moveTo(m.rowIndex("A/test/3"))
	run(m, press(m, "x"))
	view := stripped(m)
	if strings.Contains(view, "Confirm") || !strings.Contains(view, "esc close") {
		t.Errorf("a refused dialog offers to confirm:\n%s", view)
	}
	run(m, press(m, "y"))
	if m.dialog != nil {
		t.Fatal("y leaves the refused dialog open")
	}
	for _, r := range runner.requests() {
		if !r.DryRun {
			t.Errorf("a refused dialog ran %+v", r)
		}
	}
	run(m, press(m, "x"))
	press(m, "j")
	if m.dialog != nil || m.selected != "B" {
		t.Errorf("j on a refused dialog: dialog open %v, selected %s; want it closed and B selected", m.dialog != nil, m.selected)
	}
}

// SPEC §6 Confirmation: a warning (a resume the lead owns, killing a
// blocked agent, a pid not verified) needs Y; y alone does not confirm.
func TestWarnedDialogNeedsShiftY(t *testing.T) {
	tests := []struct {
		name, id, key, warn string
		flag                model.Flag
	}{
		{name: "resume where the lead owns recovery", id: "A/code/2", key: "r", warn: "its lead A is running"},
		{name: "kill a blocked agent", id: "B/ask/3", key: "x", warn: "blocked on a question"},
		{name: "kill a subtree over a blocked agent", id: "B", key: "X", warn: "B/ask/3 below it is blocked"},
		{name: "act on an unverified pid", id: "C", key: "x", flag: model.FlagPidUnverified, warn: "pid 4301 is unverified"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := exampleSnapshot()
			if tt.flag != "" {
				snap.ByID[tt.id].Flags = append(snap.ByID[tt.id].Flags, tt.flag)
			}
			runner := &fakeRunner{}
			m := newTestModel(t, 120, 40, Options{Initial: snap, Runner: runner})
			m.moveTo(m.rowIndex(tt.id))
			run(m, press(m, tt.key))
			if !strings.Contains(stripped(m), tt.warn) {
				t.Errorf("the dialog does not warn %q:\n%s", tt.warn, stripped(m))
			}
			for _, k := range []string{"y", "tab", "enter"} {
				run(m, press(m, k))
			}
			ran := func() int {
				n := 0
				for _, r := range runner.requests() {
					if !r.DryRun {
						n++
					}
				}
				return n
			}
			if ran() != 0 {
				t.Fatalf("y (or tab, enter) went ahead despite the warning")
			}
			run(m, press(m, tt.key))
			run(m, press(m, "Y"))
			if ran() != 1 {
				t.Errorf("Y did not go ahead: %d runs", ran())
			}
		})
	}
}

// SPEC §6: p freezes the frame, ages and clock included, and says PAUSED.
func TestPauseFreezesTheFrame(t *testing.T) {
	now := clock12
	m := newTestModel(t, 80, 24, Options{})
	m.opts.Now = func() time.Time { return now }
	press(m, "p")
	frozen := stripped(m)
	if !strings.Contains(strings.Split(frozen, "\n")[0], "PAUSED") {
		t.Errorf("the title line does not say PAUSED: %q", strings.Split(frozen, "\n")[0])
	}
	if strings.Contains(strings.Join(strings.Split(frozen, "\n")[:m.frame.headerH], "\n"), "‖") {
		t.Errorf("the header shows ‖, the paused flag's glyph, for the pause")
	}
	now = now.Add(time.Minute)
	m.Update(tickMsg(now))
	m.Update(updateMsg{update: model.Update{Snapshot: exampleSnapshot()}})
	if got := stripped(m); got != frozen {
		t.Errorf("the paused frame changed:\n%s\nwas\n%s", got, frozen)
	}
	press(m, "p")
	if got := stripped(m); !strings.Contains(got, "12:01:00") || !strings.Contains(got, "1m10s") {
		t.Errorf("resuming does not bring the clock and ages up to date:\n%s", got)
	}
}

// SPEC §6: the status line after an action puts the outcome first and
// names the node once, without the root's path; after a resume it names
// the agent's pid once the agent beats.
func TestStatusAfterAction(t *testing.T) {
	runner := &fakeRunner{plan: []string{"x"}}
	m := newTestModel(t, 120, 40, Options{Runner: runner})
	m.moveTo(m.rowIndex("B"))
	run(m, press(m, "r"))
	runner.mu.Lock()
	runner.plan = nil
	runner.mu.Unlock()
	run(m, press(m, "y"))
	if !strings.HasPrefix(m.status, "resume done: did resume B") || strings.Contains(m.status, "/srv/fleet") {
		t.Errorf("status %q", m.status)
	}
	beat := func(pid int, flags ...model.Flag) {
		specs := exampleSpecs()
		for i := range specs {
			if specs[i].id == "B" {
				specs[i].state, specs[i].pid, specs[i].action, specs[i].flags = model.StateRunning, pid, model.ActionNone, flags
			}
		}
		m.Update(updateMsg{update: model.Update{Snapshot: buildSnapshot("/srv/fleet/.sessions", clock12, specs)}})
	}
	// A wrapper beats first, `starting`, with its own pid: not the agent.
	beat(5120, model.FlagStarting)
	if strings.Contains(m.status, "5120") {
		t.Errorf("status names the wrapper's pid as the agent's: %q", m.status)
	}
	beat(5123)
	if !strings.Contains(m.status, "resume B: its agent runs as pid 5123 (started through pid 5120)") {
		t.Errorf("status after the agent beats: %q", m.status)
	}
}

// SPEC §6 Tree: the default order is the id, whatever order the registry
// (and so the snapshot) lists children and sessions in.
func TestIDOrderDoesNotTrustTheSnapshot(t *testing.T) {
	snap := exampleSnapshot()
	slices.Reverse(snap.ByID["A"].Children)
	slices.Reverse(snap.Sessions)
	m := newTestModel(t, 120, 40, Options{Initial: snap})
	var got []string
	for _, r := range m.rows {
		got = append(got, r.node.ID)
	}
	want := []string{"A", "A/code/2", "A/docs/4", "A/plan/1", "A/test/3", "B", "B/ask/3", "B/code/1", "B/test/2", "C"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
}

// SPEC §6 Keys: n and N stop only where the operator has something to do
// (kill, resume, answer, compact, merge, surface); a `wait` is a lead's or
// the clock's business, not a stop.
func TestNextActionSkipsWait(t *testing.T) {
	m := newTestModel(t, 120, 40, Options{Initial: demoSnapshot()})
	want := []string{
		claudeLead + "/planner",
		".claude/dead0c1a-2026-4c1e-9f00-000000111500",
		"20261122-090000",
		"20261122-090000/review/20261122-090120",
		"20261122-090000/testing/20261122-090110",
		"20261122-091500",
		"20261122-093000",
		"job-102--migrate-schema",
		claudeLead + "/planner",
	}
	var got []string
	for range want {
		press(m, "n")
		got = append(got, m.selected)
	}
	if !slices.Equal(got, want) {
		t.Errorf("n visits %v\nwant     %v", got, want)
	}
	press(m, "N")
	if m.selected != "job-102--migrate-schema" {
		t.Errorf("N goes to %s, want job-102--migrate-schema", m.selected)
	}
}
