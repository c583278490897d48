package ui

import (
	"strings"
	"testing"
	"time"
)

// The detail pane shows every time in the screen clock's zone: a started
// (read from epoch seconds in the local zone) and a beat (an mtime) of the
// same instant read the same, in any time zone (TZ=Pacific/Kiritimati is
// fourteen hours from the clock's UTC).
func TestDetailTimesShareTheClocksZone(t *testing.T) {
	local := time.Local
	time.Local = time.FixedZone("UTC+14", 14*3600)
	t.Cleanup(func() { time.Local = local })
	m := newTestModel(t, 120, 40, Options{})
	n := m.snap.Sessions[0]
	if n.Heartbeat == nil || n.Heartbeat.StartedTime().IsZero() {
		t.Fatalf("the example's first session has no started")
	}
	want := n.Heartbeat.StartedTime().In(fixedNow().Location()).Format("2006-01-02 15:04:05")
	lines := m.detailLines(n)
	for _, l := range lines {
		if strings.HasPrefix(l, "started ") {
			if !strings.Contains(l, want) {
				t.Errorf("%q: want the started in the clock's zone, %s", l, want)
			}
			return
		}
	}
	t.Fatalf("no started line in:\n%s", strings.Join(lines, "\n"))
}
