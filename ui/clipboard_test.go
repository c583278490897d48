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
		m.moveTo(m.rowIndex("B/ask/3"))
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

// SPEC §6 Keys: an open dialog takes the keys first, so y there confirms
// (or, refused, closes) and copies nothing; with no dialog open y copies.
func TestDialogKeysComeBeforeCopy(t *testing.T) {
	tests := []struct {
		name       string
		refuse     string
		wantStatus string
		wantRuns   int // requests that were not dry runs
	}{
		{name: "confirm", wantStatus: "kill done", wantRuns: 1},
		{name: "refused", refuse: "pid 4104 now belongs to another process", wantStatus: "closed kill"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runner := &fakeRunner{refuse: tt.refuse}
			m := newTestModel(t, 80, 24, Options{Runner: runner})
			m.moveTo(m.rowIndex("A/test/3"))
			run(m, press(m, "x"))
			run(m, press(m, "y"))
			runs := 0
			for _, r := range runner.requests() {
				if !r.DryRun {
					runs++
				}
			}
			if runs != tt.wantRuns || m.dialog != nil {
				t.Errorf("after y: %d runs, dialog open %v; want %d runs and the dialog closed", runs, m.dialog != nil, tt.wantRuns)
			}
			if strings.Contains(m.status, "copied") || !strings.Contains(m.status, tt.wantStatus) {
				t.Errorf("status %q: want %q, no copy", m.status, tt.wantStatus)
			}
		})
	}
}
