package ui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// statusLine is the stripped status line of m's frame.
func statusLine(m *Model) string {
	lines := strings.Split(stripped(m), "\n")
	return lines[len(lines)-footerLines]
}

// SPEC §6: the status line leads with the selected node's reason, so it is
// readable where the REASON column is narrow or gone.
func TestStatusLineLeadsWithTheReason(t *testing.T) {
	for _, sz := range operatorSizes {
		t.Run(sz.name, func(t *testing.T) {
			m := newTestModel(t, sz.w, sz.h, Options{Initial: demoSnapshot()})
			m.moveTo(m.rowIndex("20261122-090000/testing/20261122-090110"))
			if got, want := statusLine(m), "alive but not beating for 11s"; !strings.HasPrefix(got, want) {
				t.Errorf("status line %q does not lead with %q", got, want)
			}
		})
	}
}

// SPEC §6: a message on the status line fades after statusFade; the
// selected node's reason is shown again without the selection moving.
func TestStatusMessageFades(t *testing.T) {
	clock := &steppedClock{now: clock12}
	m := New(Options{Initial: demoSnapshot(), Now: clock.Now, Tick: -1})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.moveTo(m.rowIndex("20261122-090000/testing/20261122-090110"))
	m.setStatus("closed kill", false)
	m.Update(tickMsg(clock.now))
	if got := statusLine(m); !strings.HasPrefix(got, "closed kill") {
		t.Fatalf("a fresh message is not shown: %q", got)
	}
	clock.now = clock.now.Add(statusFade - time.Second)
	m.Update(tickMsg(clock.now))
	if got := statusLine(m); !strings.HasPrefix(got, "closed kill") {
		t.Errorf("the message is gone before %v: %q", statusFade, got)
	}
	clock.now = clock.now.Add(2 * time.Second)
	m.Update(tickMsg(clock.now))
	if got := statusLine(m); !strings.HasPrefix(got, "alive but not beating") {
		t.Errorf("after %v the message still covers the reason: %q", statusFade, got)
	}
}
