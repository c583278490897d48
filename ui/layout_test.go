package ui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// layoutState is what the shape of a frame depends on.
type layoutState struct {
	headerH, offset, cursor, detailOffset int
}

func layoutOf(m *Model) layoutState {
	return layoutState{headerH: m.frame.headerH, offset: m.offset, cursor: m.cursor, detailOffset: m.detailVP.YOffset()}
}

// STYLE "No IO and nothing slow in Update or View": View only draws. The
// header's height, the scroll of the tree and of the detail pane are
// settled by Update, so drawing the same model twice changes nothing, and
// what a click or a key finds (headerH, offset) is what the screen shows.
func TestViewLeavesTheLayoutAlone(t *testing.T) {
	tests := []struct {
		name  string
		w, h  int
		setup func(m *Model)
	}{
		{name: "a header taller than usual, the cursor on the last row", w: 28, h: 14, setup: func(m *Model) {
			press(m, "G")
		}},
		{name: "the event pane open, the cursor on the last row", w: 80, h: 16, setup: func(m *Model) {
			press(m, "e")
			press(m, "G")
		}},
		{name: "details scrolled past their end", w: 80, h: 24, setup: func(m *Model) {
			press(m, "enter")
			for range 300 {
				press(m, "j")
			}
		}},
		{name: "a resize to a smaller screen", w: 120, h: 40, setup: func(m *Model) {
			press(m, "G")
			m.Update(tea.WindowSizeMsg{Width: 40, Height: 10})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestModel(t, tt.w, tt.h, Options{Initial: bigSnapshot(60)})
			tt.setup(m)
			before := layoutOf(m)
			first := m.View().Content
			m.frame.dirty = true // draw again from scratch
			second := m.View().Content
			if after := layoutOf(m); after != before {
				t.Errorf("View changed the layout: %+v -> %+v", before, after)
			}
			if first != second {
				t.Error("the same model drew two different frames")
			}
			checkFrame(t, first, tt.w, tt.h)
		})
	}
}
