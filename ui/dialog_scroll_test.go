package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
)

// subtreePlan is a kill of the demo's lead and everything under it: a
// step a node, the lead's own and the blocked review's among the last.
func subtreePlan() []string {
	var plan []string
	for _, s := range demoSpecs() {
		if strings.HasPrefix(s.id, "20261122-090000/") {
			plan = append(plan, fmt.Sprintf("send SIGTERM to pid %d (%s), SIGKILL after 10s", s.pid, s.id))
		}
	}
	return append(plan, "send SIGTERM to pid 15962 (20261122-090000, the lead itself), SIGKILL after 10s")
}

// dialogRunnerReqs counts the requests that were not dry runs.
func ranFor(r *fakeRunner) int {
	n := 0
	for _, req := range r.requests() {
		if !req.DryRun {
			n++
		}
	}
	return n
}

// SPEC §6 Confirmation: a dialog hides no step. It scrolls; its buttons
// stay on screen; y and Y confirm only once every step has been on screen.
func TestDialogShowsEveryStepBeforeItConfirms(t *testing.T) {
	for _, sz := range operatorSizes {
		t.Run(sz.name, func(t *testing.T) {
			runner := &fakeRunner{plan: subtreePlan()}
			m := newTestModel(t, sz.w, sz.h, Options{Initial: demoSnapshot(), Runner: runner})
			m.moveTo(m.rowIndex("20261122-090000"))
			run(m, press(m, "X"))
			frame := stripped(m)
			checkFrame(t, m.View().Content, sz.w, sz.h)
			golden.RequireEqual(t, ansi.Strip(m.View().Content))
			if !strings.Contains(frame, "[ Cancel ]") {
				t.Fatalf("the buttons are off screen:\n%s", frame)
			}
			seen := frame
			if !strings.Contains(frame, "the lead itself") {
				// Not all on screen: neither y nor Y runs it yet.
				run(m, press(m, "Y"))
				run(m, press(m, "y"))
				if ranFor(runner) != 0 || m.dialog == nil {
					t.Fatalf("confirmed with steps never shown:\n%s", frame)
				}
				for range 60 {
					press(m, "j")
					f := stripped(m)
					checkFrame(t, m.View().Content, sz.w, sz.h)
					if !strings.Contains(f, "[ Cancel ]") {
						t.Fatalf("scrolled, the buttons went off screen:\n%s", f)
					}
					seen += f
				}
			}
			for _, step := range subtreePlan() {
				// A step may wrap; its start is on one line.
				if !strings.Contains(seen, step[:40]) {
					t.Errorf("step %q never on screen", step)
				}
			}
			run(m, press(m, "Y")) // a blocked node below: only Y
			if ranFor(runner) != 1 {
				t.Errorf("every step shown, Y ran %d requests, want 1", ranFor(runner))
			}
		})
	}
}
