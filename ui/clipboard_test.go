package ui

import (
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// SPEC §6 Keys: y copies the selected node's id to the clipboard through
// the terminal (OSC 52), on the tree and in the details, and says so.
func TestCopyNodeID(t *testing.T) {
	for _, details := range []bool{false, true} {
		m := newTestModel(t, 80, 24, Options{})
		m.moveTo(m.index["B/ask/3"])
		if details {
			run(m, press(m, "enter"))
		}
		cmd := press(m, "y")
		if cmd == nil {
			t.Fatalf("details %v: y gives no command", details)
		}
		if got, want := cmd(), tea.SetClipboard("B/ask/3")(); !reflect.DeepEqual(got, want) {
			t.Errorf("details %v: y sends %#v, want %#v", details, got, want)
		}
		if !strings.Contains(stripped(m), "copied B/ask/3") {
			t.Errorf("details %v: no confirmation on the status line:\n%s", details, stripped(m))
		}
	}
}
