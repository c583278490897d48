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
		t.Errorf("the reason %q is cut at 120 columns (%d cells for it):\n%s", reason, m.columns(120).reasonWidth(120), frame)
	}
	if c := layoutColumns(80); c.name != 20 || c.state != 18 || c.reasonWidth(80) != 14 {
		t.Errorf("at 80 columns: name %d, state %d, reason %d; want 20, 18, 14 as before", c.name, c.state, c.reasonWidth(80))
	}
}

// The columns fill the row exactly at every width; NODE and STATE never
// shrink as the screen widens, nor fall below what they have at 80; and
// past 110 the reason never has less than at 110.
func TestColumnsFillTheWidthAndOnlyGrow(t *testing.T) {
	prev := layoutColumns(64)
	reasonAt110 := layoutColumns(110).reasonWidth(110)
	for w := 64; w <= 300; w++ {
		c := layoutColumns(w)
		if got := c.fixed() + 1 + c.reasonWidth(w); got != w {
			t.Fatalf("width %d: the columns take %d cells", w, got)
		}
		if c.reasonWidth(w) < reasonMin {
			t.Fatalf("width %d: the reason has %d cells, less than %d", w, c.reasonWidth(w), reasonMin)
		}
		if w >= 80 && (c.name < 20 || c.state < 18) {
			t.Fatalf("width %d: name %d, state %d, less than at 80", w, c.name, c.state)
		}
		if w > 80 && (c.name < prev.name || c.state < prev.state) {
			t.Fatalf("width %d: name %d, state %d, narrower than at %d (%d, %d)", w, c.name, c.state, w-1, prev.name, prev.state)
		}
		if w >= 110 && c.reasonWidth(w) < reasonAt110 {
			t.Fatalf("width %d: the reason has %d cells, less than at 110 (%d)", w, c.reasonWidth(w), reasonAt110)
		}
		prev = c
	}
}
