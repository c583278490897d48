package ui

import (
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/demo"
)

// The demo's fixture (demoSpecs, drawn by TestGoldenDemoFixture; the
// README's screenshot itself is drawn from the live demo) has every
// node the demo's scenario lays out and no other, each with the role, team
// and the state it settles at that the demo gives it; ids are as a view of
// each root shows them (`.sessions/` and `.teaparty/jobs/` left out).
func TestReadmeScreenshotIsTheDemo(t *testing.T) {
	fixture := map[string]spec{}
	for _, s := range demoSpecs() {
		fixture[s.id] = s
	}
	layout := demo.Layout()
	for _, n := range layout {
		id := strings.TrimPrefix(strings.TrimPrefix(n.ID, ".sessions/"), ".teaparty/jobs/")
		s, ok := fixture[id]
		if !ok {
			t.Errorf("the demo's %s is not in the screenshot", id)
			continue
		}
		role := n.Role
		if n.Legacy {
			role = "" // no heartbeat: no role shown
		}
		if s.role != role || s.team != n.Team {
			t.Errorf("%s: the screenshot has role %q team %q, the demo %q %q", id, s.role, s.team, role, n.Team)
		}
		if s.state != n.State {
			t.Errorf("%s: the screenshot has it %s, the demo settles it %s", id, s.state, n.State)
		}
	}
	if len(fixture) != len(layout) {
		t.Errorf("the screenshot has %d nodes, the demo %d", len(fixture), len(layout))
	}
}
