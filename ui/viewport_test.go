package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §6 Detail pane: every key that scrolls to the end shows the last
// line of the details — the journal's last entry — not one short of it.
func TestDetailViewportReachesItsLastLine(t *testing.T) {
	tests := []struct {
		name string
		keys []string
	}{
		{name: "G jumps to the end", keys: []string{"G"}},
		{name: "end jumps to the end", keys: []string{"end"}},
		{name: "page down until it stops", keys: strings.Split(strings.Repeat("pgdown ", 40), " ")},
		{name: "down until it stops", keys: strings.Split(strings.Repeat("j ", 300), " ")},
	}
	for _, sz := range []struct{ w, h int }{{80, 24}, {120, 40}} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s_%dx%d", tt.name, sz.w, sz.h), func(t *testing.T) {
				m := newTestModel(t, sz.w, sz.h, Options{Journal: journalOf("the last journal entry")})
				m.moveTo(m.rowIndex("B/ask/3"))
				run(m, press(m, "enter"))
				for _, k := range tt.keys {
					if k != "" {
						press(m, k)
					}
				}
				frame := stripped(m)
				if !strings.Contains(frame, "the last journal entry") {
					t.Errorf("the last line is not on screen:\n%s", frame)
				}
			})
		}
	}
}

// SPEC §6 Event pane: the whole history scrolls, not only the newest that fit.
func TestEventPaneScrollsItsHistory(t *testing.T) {
	m := newTestModel(t, 80, 24, Options{})
	var ts []model.Transition
	for i := range 200 {
		ts = append(ts, model.Transition{Time: clock12, ID: fmt.Sprintf("n%03d", i), From: model.StateRunning, To: model.StateDead, Reason: "pid gone"})
	}
	m.Update(updateMsg{update: model.Update{Transitions: ts}})
	press(m, "e")
	if !strings.Contains(stripped(m), "n199") {
		t.Fatalf("the newest event is not shown first:\n%s", stripped(m))
	}
	press(m, "g")
	if frame := stripped(m); !strings.Contains(frame, "n000") {
		t.Errorf("g in the event pane does not reach the oldest event:\n%s", frame)
	}
	press(m, "G")
	if frame := stripped(m); !strings.Contains(frame, "n199") || strings.Contains(frame, "n000") {
		t.Errorf("G in the event pane does not come back to the newest:\n%s", frame)
	}
}

// SPEC §6 Event pane: E shows only the events of the selected node's subtree.
func TestEventPaneFiltersToTheSubtree(t *testing.T) {
	m := newTestModel(t, 80, 24, Options{})
	m.Update(updateMsg{update: model.Update{Transitions: []model.Transition{
		{Time: clock12, ID: "B/ask/3", From: model.StateRunning, To: model.StateDead, Reason: "in the subtree"},
		{Time: clock12, ID: "A/test/3", From: model.StateRunning, To: model.StateDead, Reason: "elsewhere"},
	}}})
	m.moveTo(m.rowIndex("B"))
	press(m, "e")
	press(m, "E")
	frame := stripped(m)
	if !strings.Contains(frame, "in the subtree") || strings.Contains(frame, "elsewhere") {
		t.Errorf("E does not keep the subtree's events alone:\n%s", frame)
	}
	press(m, "E")
	if frame := stripped(m); !strings.Contains(frame, "elsewhere") {
		t.Errorf("a second E does not show every event again:\n%s", frame)
	}
}

// SPEC §6 Keys: e in the detail pane moves the focus to the event pane,
// under the tree, where the arrows scroll the events.
func TestEventsKeyInDetailsFocusesTheEventPane(t *testing.T) {
	m := newTestModel(t, 80, 24, Options{})
	m.moveTo(m.rowIndex("B/ask/3"))
	run(m, press(m, "enter"))
	press(m, "e")
	if m.mode != modeTree || !m.eventsOpen || m.focus != focusEvents {
		t.Fatalf("after e in details: mode %d, events open %v, focus %d", m.mode, m.eventsOpen, m.focus)
	}
	cursor := m.cursor
	press(m, "j")
	if m.cursor != cursor {
		t.Errorf("j moved the tree's cursor while the event pane had the focus")
	}
}

// SPEC §6 Detail pane: scrolled to its end, the pane stays at the end as
// the output tail grows (as tail -f does); scrolled back, it stays put.
func TestDetailViewportFollowsItsEnd(t *testing.T) {
	grown := 0
	reader := func(_ context.Context, n *model.Node) (OutputTail, error) {
		grown++
		var lines []string
		for i := range 10 * grown {
			lines = append(lines, fmt.Sprintf("output line %d", i))
		}
		return OutputTail{Path: "/x/.wrap.log", Lines: lines}, nil
	}
	m := newTestModel(t, 80, 24, Options{Output: reader})
	m.moveTo(m.rowIndex("B/ask/3"))
	run(m, press(m, "enter"))
	press(m, "G")
	_, cmd := m.Update(updateMsg{update: model.Update{Snapshot: exampleSnapshot()}})
	run(m, cmd)
	if frame := stripped(m); !strings.Contains(frame, "── journal") {
		t.Errorf("the end went out of view as the output grew:\n%s", frame)
	}
	press(m, "k")
	at := m.detailVP.YOffset()
	_, cmd = m.Update(updateMsg{update: model.Update{Snapshot: exampleSnapshot()}})
	run(m, cmd)
	if m.detailVP.YOffset() != at {
		t.Errorf("scrolled back, the pane moved from %d to %d as the output grew", at, m.detailVP.YOffset())
	}
}

// SPEC §6 Event pane and Mouse: the pane keeps its place at the bottom of
// the screen when a filter leaves few rows, so the rows above it never
// move and the wheel over it scrolls the events, not the tree.
func TestEventPaneStaysUnderAShortTree(t *testing.T) {
	m := newTestModel(t, 80, 24, Options{})
	var ts []model.Transition
	for i := range 200 {
		ts = append(ts, model.Transition{Time: clock12, ID: fmt.Sprintf("n%03d", i), From: model.StateRunning, To: model.StateDead, Reason: "pid gone"})
	}
	m.Update(updateMsg{update: model.Update{Transitions: ts}})
	press(m, "e")
	full := strings.Split(stripped(m), "\n")
	press(m, "/")
	for _, r := range "flag:legacy" {
		press(m, string(r))
	}
	press(m, "enter")
	if len(m.rows) != 1 {
		t.Fatalf("the filter left %d rows, want 1", len(m.rows))
	}
	lines := strings.Split(stripped(m), "\n")
	title := m.frame.headerH + m.treeHeight()
	for name, frame := range map[string][]string{"all rows": full, "one row": lines} {
		if !strings.HasPrefix(frame[title], "── events") {
			t.Errorf("%s: line %d is %q, not the event pane's title", name, title, frame[title])
		}
	}
	before := m.eventsVP.YOffset()
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp, Y: title + 1})
	if m.eventsVP.YOffset() >= before {
		t.Errorf("the wheel over the event pane left it at offset %d (was %d)", m.eventsVP.YOffset(), before)
	}
}
