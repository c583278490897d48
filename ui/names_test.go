package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
)

// operatorSizes are the terminals the dashboard is looked at in.
var operatorSizes = []struct {
	name string
	w, h int
}{{"160x50", 160, 50}, {"120x40", 120, 40}, {"80x24", 80, 24}, {"60x20", 60, 20}}

// rowLine is the stripped line of node id's row on screen ("" when none).
func rowLine(m *Model, id string) string {
	i, ok := m.rowOf(id)
	if !ok || i < m.offset || i >= m.offset+m.treeHeight() {
		return ""
	}
	lines := strings.Split(stripped(m), "\n")
	at := m.frame.headerH + i - m.offset
	if at >= len(lines) {
		return ""
	}
	return lines[at]
}

// SPEC §6 Columns: a name that does not fit keeps its role whole; the id's
// tail gives way first. The README sends the reader to the `testing` node.
func TestNameKeepsTheRoleBeforeTheIDTail(t *testing.T) {
	for _, sz := range operatorSizes {
		t.Run(sz.name, func(t *testing.T) {
			m := newTestModel(t, sz.w, sz.h, Options{Initial: demoSnapshot()})
			checkFrame(t, m.View().Content, sz.w, sz.h)
			for _, n := range m.snap.Nodes() {
				_, role, _ := labelPartsShort(n)
				line := rowLine(m, n.ID)
				if role == "" || line == "" {
					continue
				}
				// Within the NODE cell, whole (the reason may say "lead" too).
				if cell := ansi.Cut(line, 0, markWidth+m.columns(sz.w).width("NODE")); !strings.Contains(cell, role) || strings.Contains(cell, role+"…") {
					t.Errorf("%s: row %q does not show its role %q", n.ID, line, role)
				}
			}
		})
	}
}

// The demo's main screen at each operator size.
func TestGoldenOperatorSizes(t *testing.T) {
	for _, sz := range operatorSizes {
		t.Run("main_"+sz.name, func(t *testing.T) {
			m := newTestModel(t, sz.w, sz.h, Options{Initial: demoSnapshot()})
			m.moveTo(m.rowIndex("20261122-090000/testing/20261122-090110"))
			frame := m.View().Content
			checkFrame(t, frame, sz.w, sz.h)
			golden.RequireEqual(t, ansi.Strip(frame))
		})
	}
}
