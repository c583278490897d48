package ui

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"
)

// SPEC §3: the TUI re-evaluates ages on a 1 s tick with no file event. In a
// synctest bubble the tick fires at once on the fake clock.
func TestTickEverySecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		m := New(Options{Initial: exampleSnapshot(), Now: time.Now})
		m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		cmd := tick(m.opts.Tick)
		for i := 1; i <= 3; i++ {
			msg, ok := cmd().(tickMsg)
			if !ok {
				t.Fatalf("tick %d: not a tickMsg", i)
			}
			if got := time.Time(msg).Sub(start); got != time.Duration(i)*time.Second {
				t.Errorf("tick %d after %s, want %ds", i, got, i)
			}
			_, cmd = m.Update(msg)
			if cmd == nil {
				t.Fatalf("tick %d not re-armed", i)
			}
		}
		if !strings.Contains(stripped(m), time.Now().Format("15:04:05")) {
			t.Errorf("clock not at the fake now:\n%s", stripped(m))
		}
	})
}
