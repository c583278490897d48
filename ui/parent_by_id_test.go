package ui

import (
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
)

// byIDAlone is snap with no parent pointers: each node knows its parent by
// ParentID alone, as a watched host's nodes do.
func byIDAlone(snap *model.Snapshot) *model.Snapshot {
	for _, s := range snap.Sessions {
		s.Walk(func(n *model.Node) { n.Parent = nil })
	}
	return snap
}

// The tree keys that climb from a node (← to its parent, F's expanded
// ancestors, n's, - to the session) find its parent by id when the node
// holds no pointer to it (SPEC §6; a watched host's nodes).
func TestTreeKeysClimbToAParentKnownByIDAlone(t *testing.T) {
	const (
		session = "20260000"
		team    = "20260000/team1/01"
		worker  = "20260000/team1/01/w/00"
	)
	for _, tc := range []struct {
		name string
		act  func(t *testing.T, m *Model)
	}{
		{"left on a leaf selects its parent", func(t *testing.T, m *Model) {
			press(m, "left")
			if got := m.selected; got != team {
				t.Errorf("selected %q, want %q", got, team)
			}
		}},
		{"a followed node's collapsed ancestors open", func(t *testing.T, m *Model) {
			press(m, "F")
			m.collapsed[session], m.collapsed[team] = true, true
			m.reflow()
			if _, ok := m.rowOf(worker); !ok {
				t.Errorf("followed %s not shown: rows %v", worker, rowIDs(m))
			}
		}},
		{"n opens the ancestors of the node it lands on", func(t *testing.T, m *Model) {
			m.snap.Node(worker).Action = model.ActionKill
			m.moveTo(0)
			m.collapsed[session], m.collapsed[team] = true, true
			m.reflow()
			press(m, "n")
			if got := m.selected; got != worker {
				t.Fatalf("n selected %q, want %q", got, worker)
			}
			if _, ok := m.rowOf(worker); !ok {
				t.Errorf("%s not shown after n: rows %v", worker, rowIDs(m))
			}
		}},
		{"- selects the session", func(t *testing.T, m *Model) {
			press(m, "-")
			if got := m.selected; got != session {
				t.Errorf("selected %q, want %q", got, session)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := byIDAlone(bigSnapshot(40))
			if n := snap.Node(worker); n == nil || n.ParentID != team {
				t.Fatalf("fixture: %s not under %s", worker, team)
			}
			m := newTestModel(t, 100, 60, Options{Initial: snap})
			m.moveTo(m.rowIndex(worker))
			if m.selected != worker {
				t.Fatalf("fixture: selected %q", m.selected)
			}
			tc.act(t, m)
		})
	}
}
