package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §6: the reason takes what the other columns do not need. A typical
// reason is whole on a row at 120 columns, with every column shown; at 80
// the columns are as they were.
func TestReasonGetsWhatTheOtherColumnsDoNotNeed(t *testing.T) {
	const reason = "heartbeat 12m old, pid 4242 gone"
	specs := append(exampleSpecs(), spec{id: "D", role: "lead", state: model.StateDead, action: model.ActionResume,
		reason: reason, pid: 4242, beat: 12 * time.Minute, cfa: "EXECUTE"})
	m := newTestModel(t, 120, 40, Options{Initial: buildSnapshot("/srv/fleet/.sessions", clock12, specs)})
	frame := stripped(m)
	checkFrame(t, frame, 120, 40)
	if !strings.Contains(frame, reason) {
		t.Errorf("the reason %q is cut at 120 columns (%d cells for it):\n%s", reason, m.columns(120).restWidth(), frame)
	}
	if c := layoutColumns(treeColumns, 80); c.width("NODE") != 20 || c.width("STATE") != 18 || c.restWidth() != 14 {
		t.Errorf("at 80 columns: name %d, state %d, reason %d; want 20, 18, 14 as before", c.width("NODE"), c.width("STATE"), c.restWidth())
	}
}

// The columns fill the row exactly at every width; NODE and STATE never
// shrink as the screen widens, nor fall below what they have at 80; and
// past 110 the reason never has less than at 110.
func TestColumnsFillTheWidthAndOnlyGrow(t *testing.T) {
	prev := layoutColumns(treeColumns, 64)
	reasonAt110 := layoutColumns(treeColumns, 110).restWidth()
	for w := 64; w <= 300; w++ {
		c := layoutColumns(treeColumns, w)
		if got := c.fixed() + 1 + c.restWidth(); got != w {
			t.Fatalf("width %d: the columns take %d cells", w, got)
		}
		if c.restWidth() < reasonMin {
			t.Fatalf("width %d: the reason has %d cells, less than %d", w, c.restWidth(), reasonMin)
		}
		if w >= 80 && (c.width("NODE") < 20 || c.width("STATE") < 18) {
			t.Fatalf("width %d: name %d, state %d, less than at 80", w, c.width("NODE"), c.width("STATE"))
		}
		if w > 80 && (c.width("NODE") < prev.width("NODE") || c.width("STATE") < prev.width("STATE")) {
			t.Fatalf("width %d: name %d, state %d, narrower than at %d (%d, %d)", w, c.width("NODE"), c.width("STATE"), w-1, prev.width("NODE"), prev.width("STATE"))
		}
		if w >= 110 && c.restWidth() < reasonAt110 {
			t.Fatalf("width %d: the reason has %d cells, less than at 110 (%d)", w, c.restWidth(), reasonAt110)
		}
		prev = c
	}
}
