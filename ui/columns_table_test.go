package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// useColumns makes table the model's columns, as if it were treeColumns:
// the rows drawn with the old ones are drawn again.
func useColumns(m *Model, table []column) {
	m.table = table
	m.frame.cols = columns{}
	m.frame.rowEpoch++
	m.frame.dirty = true
	m.layout()
}

// withExtraColumns is treeColumns with a TEAM column and a SINCE column (the
// heartbeat's age again, moving with the clock) before REASON: columns no
// code but their row knows of.
func withExtraColumns() []column {
	team := column{head: "TEAM", width: 9, cell: func(_ *Model, rc rowCtx, _ int) string { return rc.r.node.Team() }}
	since := column{head: "SINCE", width: 6, ages: true, cell: beatCell}
	table := slices.Clone(treeColumns)
	at := slices.IndexFunc(table, func(c column) bool { return c.rest })
	return slices.Insert(table, at, team, since)
}

// Columns are data: a column added to the table alone is in the head and
// in every row, at the offset the layout gives it, and a tick draws its
// clock-moving cell again through the column's cell (the frame after the
// tick is the frame a model built at that instant draws).
func TestAColumnAddedToTheTableAloneIsShown(t *testing.T) {
	const w, h = 160, 50
	clock := &steppedClock{now: clock12}
	newModel := func() *Model {
		m := New(Options{Initial: movingReasons(demoSnapshot()), Now: clock.Now, Tick: -1})
		m.Update(tea.WindowSizeMsg{Width: w, Height: h})
		useColumns(m, withExtraColumns())
		return m
	}
	m := newModel()
	lines := strings.Split(stripped(m), "\n")
	c := m.columns(w)
	teamAt, sinceAt := c.offset("TEAM"), c.offset("SINCE")
	if teamAt < 0 || sinceAt < 0 || c.width("TEAM") != 9 {
		t.Fatalf("the layout left the new columns out: TEAM at %d (%d wide), SINCE at %d", teamAt, c.width("TEAM"), sinceAt)
	}
	head := lines[m.frame.headerH-1]
	if got := ansi.Cut(head, teamAt, teamAt+9); got != "TEAM     " {
		t.Errorf("the head has %q where TEAM's column is:\n%s", got, head)
	}
	cellAt := func(lines []string, i, at, width int) string {
		return strings.TrimRight(ansi.Cut(lines[m.frame.headerH+i], at, at+width), " ")
	}
	teams := 0
	for i := range min(len(m.rows), h-m.frame.headerH-footerLines) {
		n := m.rows[m.offset+i].node
		if got, want := cellAt(lines, i, teamAt, 9), fit(n.Team(), 9); got != strings.TrimRight(want, " ") {
			t.Errorf("row %d (%s): TEAM cell %q, want %q", i, n.ID, got, want)
		}
		if n.Team() != "" {
			teams++
		}
		if got, want := cellAt(lines, i, sinceAt, 6), beatText(n, clock.now); got != want {
			t.Errorf("row %d (%s): SINCE cell %q, want %q", i, n.ID, got, want)
		}
	}
	if teams == 0 {
		t.Fatal("no row on screen has a team: the fixture does not test the column")
	}

	clock.now = clock.now.Add(7 * time.Second)
	m.Update(tickMsg(clock.now))
	ticked := stripped(m)
	if fresh := stripped(newModel()); ticked != fresh {
		t.Fatalf("after a tick the frame is not the one drawn afresh:\n%s\nafresh:\n%s", ticked, fresh)
	}
	lines = strings.Split(ticked, "\n")
	for i := range min(len(m.rows), h-m.frame.headerH-footerLines) {
		n := m.rows[m.offset+i].node
		if got, want := cellAt(lines, i, sinceAt, 6), beatText(n, clock.now); got != want {
			t.Errorf("after the tick, row %d (%s): SINCE cell %q, want %q", i, n.ID, got, want)
		}
	}
}
