package ui

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	tea "charm.land/bubbletea/v2"

	"github.com/dispatchtop/dispatchtop/model"
)

// A burst of updates already queued makes one message: one redraw.
func TestFeedCoalescesBursts(t *testing.T) {
	ch := make(chan model.Update, 100)
	for i := range 100 {
		specs := exampleSpecs()[:1]
		specs[0].reason = fmt.Sprintf("beat %d", i)
		ch <- model.Update{
			Snapshot:    buildSnapshot("/srv/fleet/.sessions", clock12, specs),
			Transitions: []model.Transition{{Time: clock12, ID: fmt.Sprintf("n%d", i), To: model.StateRunning}},
		}
	}
	msg := waitFeed(ch)()
	u, ok := msg.(updateMsg)
	if !ok {
		t.Fatalf("got %T", msg)
	}
	if len(u.update.Transitions) != 100 {
		t.Errorf("merged %d transitions, want 100", len(u.update.Transitions))
	}
	if got := u.update.Snapshot.Node("A").Reason; got != "beat 99" {
		t.Errorf("kept snapshot %q, want the newest", got)
	}
	if len(ch) != 0 {
		t.Errorf("%d updates left behind", len(ch))
	}
}

func TestFeedClosed(t *testing.T) {
	ch := make(chan model.Update)
	close(ch)
	m := newTestModel(t, 80, 24, Options{})
	m.feed = ch
	m.Update(waitFeed(ch)())
	if !m.closed || !strings.Contains(stripped(m), "watcher stopped") {
		t.Errorf("closed feed not shown:\n%s", stripped(m))
	}
}

// SPEC §6 Event pane: transitions as they happen, bounded.
func TestEventsBounded(t *testing.T) {
	m := newTestModel(t, 80, 24, Options{})
	for i := range maxEvents + 50 {
		m.Update(updateMsg{update: model.Update{Transitions: []model.Transition{
			{Time: clock12.Add(time.Duration(i) * time.Second), ID: fmt.Sprintf("n%d", i), From: model.StateRunning, To: model.StateDead, Reason: "pid gone"},
		}}})
	}
	if len(m.events) != maxEvents {
		t.Fatalf("%d events kept, want %d", len(m.events), maxEvents)
	}
	if m.events[0].id != "n50" || m.events[len(m.events)-1].id != fmt.Sprintf("n%d", maxEvents+49) {
		t.Errorf("kept %s..%s, want the newest", m.events[0].id, m.events[len(m.events)-1].id)
	}
	press(m, "e")
	if !strings.Contains(stripped(m), fmt.Sprintf("n%d  running → dead  pid gone", maxEvents+49)) {
		t.Errorf("newest event not on screen:\n%s", stripped(m))
	}
}

// SPEC §3: ages move on the tick without any file event.
func TestTickRedrawsAges(t *testing.T) {
	now := clock12
	m := New(Options{Initial: exampleSnapshot(), Now: func() time.Time { return now }, Tick: time.Second})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if !strings.Contains(stripped(m), "12:00:00") {
		t.Fatal("clock not shown")
	}
	now = now.Add(65 * time.Second)
	_, cmd := m.Update(tickMsg(now))
	if cmd == nil {
		t.Error("tick not re-armed")
	}
	view := stripped(m)
	if !strings.Contains(view, "12:01:05") || !strings.Contains(view, "1m15s") {
		t.Errorf("ages not advanced:\n%s", view)
	}
}

// SPEC §6 Mouse: click selects, wheel scrolls.
func TestMouse(t *testing.T) {
	m := newTestModel(t, 80, 12, Options{Initial: bigSnapshot(100)})
	top := m.frame.headerH // measured by Update, before any frame is drawn
	m.Update(tea.MouseClickMsg{X: 5, Y: top + 2, Button: tea.MouseLeft})
	if m.cursor != 2 {
		t.Errorf("click on the third row selected row %d", m.cursor)
	}
	m.Update(tea.MouseClickMsg{X: 5, Y: 0, Button: tea.MouseLeft})
	if m.cursor != 2 {
		t.Errorf("click on the header moved the cursor to %d", m.cursor)
	}
	for range 3 {
		m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	}
	if m.offset != 3*wheelStep {
		t.Errorf("offset %d after three wheel steps, want %d", m.offset, 3*wheelStep)
	}
	if m.cursor < m.offset || m.cursor >= m.offset+m.treeHeight() {
		t.Errorf("cursor %d left the screen (offset %d)", m.cursor, m.offset)
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if m.offset != 2*wheelStep {
		t.Errorf("offset %d after wheel up", m.offset)
	}
}

// SPEC §6: resizes reflow; rows never wrap.
func TestResizeReflows(t *testing.T) {
	m := newTestModel(t, 120, 40, Options{Initial: bigSnapshot(300)})
	m.moveTo(200)
	for _, sz := range [][2]int{{80, 24}, {60, 15}, {200, 60}, {40, 10}} {
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		frame := m.View().Content
		checkFrame(t, frame, sz[0], sz[1])
		if !strings.Contains(stripped(m), idTail(m.selected)) {
			t.Errorf("%dx%d: the selected row is off screen", sz[0], sz[1])
		}
	}
}

// Only the rows on screen are rendered, whatever the tree's size.
func TestOnlyVisibleRowsRendered(t *testing.T) {
	m := newTestModel(t, 80, 24, Options{Initial: bigSnapshot(10000)})
	m.View()
	body := m.renderTree(80)
	if len(body) != m.treeHeight() {
		t.Errorf("rendered %d rows, screen holds %d", len(body), m.treeHeight())
	}
}

// Details load the journal through a command, never in Update.
func TestDetailsLoadJournalThroughCommand(t *testing.T) {
	calls := 0
	m := newTestModel(t, 120, 60, Options{Journal: journalOf(`{"action":"resume","outcome":"done"}`)})
	m.opts.Journal = func(ctx context.Context, n *model.Node) ([]string, error) {
		calls++
		return journalOf(`{"action":"resume","outcome":"done"}`)(ctx, n)
	}
	m.moveTo(m.rowIndex("B"))
	cmd := press(m, "enter")
	if calls != 0 {
		t.Fatal("the journal was read inside Update")
	}
	if !strings.Contains(stripped(m), "loading…") {
		t.Errorf("no loading note before the command ran")
	}
	run(m, cmd)
	if calls != 1 || !strings.Contains(stripped(m), `"outcome":"done"`) {
		t.Errorf("journal lines not shown (calls %d):\n%s", calls, stripped(m))
	}
}

// The detail pane shows the node's registry line verbatim, relative
// heartbeat paths resolved against the parent's infra dir.
func TestDetailsShowRegistryLineVerbatim(t *testing.T) {
	snap := exampleSnapshot()
	a := snap.Node("A")
	a.SetRegistry([]model.RegistryLine{
		{Number: 1, Raw: []byte(`{"heartbeat":"plan/1/.heartbeat","team":"plan","task_id":null,"status":"completed"}`),
			Entry: &model.ChildEntry{Heartbeat: "plan/1/.heartbeat", Team: "plan", Status: "completed"}},
		{Number: 2, Raw: []byte(`{"heartbeat":"code/2/.heartbeat", "team":"code","task_id":"T-7","status":"active"}`),
			Entry: &model.ChildEntry{Heartbeat: "code/2/.heartbeat", Team: "code", Status: "active"}},
	}, time.Time{}, 0)
	m := newTestModel(t, 160, 80, Options{Initial: snap})
	m.moveTo(m.rowIndex("A/code/2"))
	press(m, "enter")
	if want := `line 2: {"heartbeat":"code/2/.heartbeat", "team":"code","task_id":"T-7","status":"active"}`; !strings.Contains(stripped(m), want) {
		t.Errorf("detail lacks %q:\n%s", want, stripped(m))
	}
}

// A beat a little late flaps `quiet` with every beat: such transitions stay
// out of the event pane; every other change goes in.
func TestQuietOnlyTransitionsSkipped(t *testing.T) {
	tests := []struct {
		name string
		tr   model.Transition
		want bool // shown
	}{
		{name: "quiet set", tr: model.Transition{ID: "a", From: model.StateRunning, To: model.StateRunning, ToFlags: []model.Flag{model.FlagQuiet}}},
		{name: "quiet cleared", tr: model.Transition{ID: "a", From: model.StateRunning, To: model.StateRunning, FromFlags: []model.Flag{model.FlagQuiet}}},
		{name: "quiet to stalled", want: true, tr: model.Transition{ID: "a", From: model.StateRunning, To: model.StateRunning, FromFlags: []model.Flag{model.FlagQuiet}, ToFlags: []model.Flag{model.FlagStalled}}},
		{name: "state change", want: true, tr: model.Transition{ID: "a", From: model.StateRunning, To: model.StateDead, FromFlags: []model.Flag{model.FlagQuiet}}},
		{name: "appearance", want: true, tr: model.Transition{ID: "a", To: model.StateRunning, ToFlags: []model.Flag{model.FlagQuiet}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestModel(t, 80, 24, Options{})
			m.Update(updateMsg{update: model.Update{Transitions: []model.Transition{tt.tr}}})
			if got := len(m.events) == 1; got != tt.want {
				t.Errorf("shown %v, want %v", got, tt.want)
			}
		})
	}
}

// Long detail values wrap under their label instead of losing their end.
func TestDetailsWrapLongValues(t *testing.T) {
	specs := exampleSpecs()
	specs[0].reason = "pid 4101 gone; last beat 36s ago; its lead is running and owns the recovery END"
	m := newTestModel(t, 60, 30, Options{Initial: buildSnapshot("/srv/fleet/.sessions", clock12, specs)})
	press(m, "enter")
	view := stripped(m)
	checkFrame(t, m.View().Content, 60, 30)
	if !strings.Contains(view, "recovery END") {
		t.Errorf("the end of a long reason is lost:\n%s", view)
	}
}

// A scan problem shows once in the event pane, however many snapshots carry it.
func TestProblemsInEventPane(t *testing.T) {
	m := newTestModel(t, 120, 40, Options{})
	for range 3 {
		snap := exampleSnapshot()
		snap.Problems = []model.Problem{{Path: "/srv/fleet/.sessions/X", Error: "open /srv/fleet/.sessions/X: permission denied"}}
		m.Update(updateMsg{update: model.Update{Snapshot: snap}})
	}
	if len(m.events) != 1 || m.events[0].text != "problem" {
		t.Fatalf("events %+v, want the problem once", m.events)
	}
	press(m, "e")
	if !strings.Contains(stripped(m), "permission denied") {
		t.Errorf("problem not in the event pane:\n%s", stripped(m))
	}
}

// A long pause holds one snapshot and at most model.MaxPendingTransitions
// transitions, the newest.
func TestPauseStaysBounded(t *testing.T) {
	m := newTestModel(t, 80, 24, Options{})
	press(m, "p")
	const perUpdate = 500
	updates := 3 * model.MaxPendingTransitions / perUpdate
	for u := range updates {
		tr := make([]model.Transition, perUpdate)
		for j := range tr {
			tr[j] = model.Transition{Time: clock12, ID: fmt.Sprintf("n%d", u*perUpdate+j), From: model.StateRunning, To: model.StateDead}
		}
		m.Update(updateMsg{update: model.Update{Snapshot: exampleSnapshot(), Transitions: tr}})
	}
	if got := len(m.pending.Transitions); got != model.MaxPendingTransitions {
		t.Errorf("pending holds %d transitions, want %d", got, model.MaxPendingTransitions)
	}
	// A transition-only update keeps the snapshot already pending.
	m.Update(updateMsg{update: model.Update{Transitions: []model.Transition{{Time: clock12, ID: "x", From: model.StateRunning, To: model.StateDead}}}})
	if m.pending.Snapshot == nil {
		t.Error("a transition-only update dropped the pending snapshot")
	}
	press(m, "p")
	if want := fmt.Sprintf("n%d", updates*perUpdate-1); m.events[len(m.events)-2].id != want {
		t.Errorf("newest held transition %q, want %q", m.events[len(m.events)-2].id, want)
	}
}

// SPEC §8 (a touch reaches the screen fast): an update lays the new tree's
// rows out in the array the old ones had; of a 10,000-node tree it
// allocates less than those rows take.
func TestUpdateReusesTheRows(t *testing.T) {
	m := newTestModel(t, 120, 40, Options{Initial: bigSnapshot(10000)})
	next := bigSnapshot(10000)
	rowsBytes := uint64(len(m.rows)) * uint64(unsafe.Sizeof(row{}))
	got := bytesOf(func() { m.Update(updateMsg{update: model.Update{Snapshot: next}}) })
	if got >= rowsBytes {
		t.Errorf("an update of %d rows allocated %d bytes, the rows alone take %d: they were laid out anew", len(m.rows), got, rowsBytes)
	}
}

// bytesOf counts the bytes one call of f allocates.
func bytesOf(f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// SPEC §8 (memory): an update that renews most of the tree but keeps a
// session (a fleet crossing a threshold over a tick or two) lays the
// renewed rows out without growing a scratch array row by row: it
// allocates less than the rows take, and the rows are those of a whole
// layout.
func TestAMostlyRenewedUpdateReusesTheRows(t *testing.T) {
	base := bigSnapshot(10000)
	m := newTestModel(t, 120, 40, Options{Initial: base})
	next := *base
	next.Sessions = slices.Clone(base.Sessions)
	for i := 1; i < len(next.Sessions); i++ { // the first is kept
		next.Sessions[i] = copySubtree(next.Sessions[i], nil)
	}
	next.ByID = indexForest(next.Sessions)
	rowsBytes := uint64(len(m.rows)) * uint64(unsafe.Sizeof(row{}))
	got := bytesOf(func() { m.Update(updateMsg{update: model.Update{Snapshot: &next}}) })
	checkLayout(t, m, "after renewing all sessions but one")
	if got >= rowsBytes {
		t.Errorf("an update renewing all sessions but one of %d rows allocated %d bytes, the rows alone take %d", len(m.rows), got, rowsBytes)
	}
}
