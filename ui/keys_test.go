package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/themes"
)

// rowIDs lists the ids of the rows as shown.
func rowIDs(m *Model) []string {
	ids := make([]string, len(m.rows))
	for i, r := range m.rows {
		ids[i] = r.node.ID
	}
	return ids
}

// SPEC §6 Keys: movement, collapse/expand, filters.
func TestKeys(t *testing.T) {
	tests := []struct {
		name     string
		keys     []string
		selected string
		rows     []string // nil: not checked
	}{
		{name: "start on the first session", selected: "A"},
		{name: "j moves down", keys: []string{"j", "j"}, selected: "A/docs/4"},
		{name: "down arrow moves down", keys: []string{"down"}, selected: "A/code/2"},
		{name: "k stops at the top", keys: []string{"j", "k", "k"}, selected: "A"},
		{name: "G goes to the last row, g back", keys: []string{"G"}, selected: "C"},
		{name: "g after G", keys: []string{"G", "g"}, selected: "A"},
		{name: "h collapses a session", keys: []string{"h"}, selected: "A",
			rows: []string{"A", "B", "B/ask/3", "B/code/1", "B/test/2", "C"}},
		{name: "l expands it again", keys: []string{"h", "l"}, selected: "A",
			rows: []string{"A", "A/code/2", "A/docs/4", "A/plan/1", "A/test/3", "B", "B/ask/3", "B/code/1", "B/test/2", "C"}},
		{name: "h on a leaf goes to its parent", keys: []string{"j", "j", "h"}, selected: "A"},
		{name: "space toggles", keys: []string{"space"}, selected: "A",
			rows: []string{"A", "B", "B/ask/3", "B/code/1", "B/test/2", "C"}},
		{name: "collapse all keeps the selection's session", keys: []string{"G", "k", "-"}, selected: "B",
			rows: []string{"A", "B", "C"}},
		{name: "expand all", keys: []string{"-", "+"}, selected: "A",
			rows: []string{"A", "A/code/2", "A/docs/4", "A/plan/1", "A/test/3", "B", "B/ask/3", "B/code/1", "B/test/2", "C"}},
		{name: "f once shows problems with their ancestors", keys: []string{"f"}, selected: "A",
			rows: []string{"A", "A/code/2", "A/docs/4", "A/test/3", "B", "B/ask/3", "B/code/1", "B/test/2"}},
		{name: "f twice shows running", keys: []string{"f", "f"},
			rows: []string{"A", "A/test/3", "B", "B/ask/3", "B/code/1", "C"}},
		{name: "f three times shows dead", keys: []string{"f", "f", "f"},
			rows: []string{"A", "A/code/2", "B", "B/test/2"}},
		{name: "f cycles back to all", keys: []string{"f", "f", "f", "f", "f", "f"},
			rows: []string{"A", "A/code/2", "A/docs/4", "A/plan/1", "A/test/3", "B", "B/ask/3", "B/code/1", "B/test/2", "C"}},
		{name: "text filter by role", keys: []string{"/", "t", "e", "s", "t", "e", "r", "enter"},
			rows: []string{"A", "A/test/3", "B", "B/test/2"}},
		{name: "text filter ignores case", keys: []string{"/", "T", "E", "S", "T", "E", "R"},
			rows: []string{"A", "A/test/3", "B", "B/test/2"}},
		{name: "backspace widens the filter", keys: []string{"/", "d", "o", "c", "x", "backspace"},
			rows: []string{"A", "A/docs/4"}},
		{name: "esc in the prompt clears the filter", keys: []string{"/", "d", "o", "c", "esc"},
			rows: []string{"A", "A/code/2", "A/docs/4", "A/plan/1", "A/test/3", "B", "B/ask/3", "B/code/1", "B/test/2", "C"}},
		{name: "esc clears a kept filter", keys: []string{"f", "f", "f", "esc"},
			rows: []string{"A", "A/code/2", "A/docs/4", "A/plan/1", "A/test/3", "B", "B/ask/3", "B/code/1", "B/test/2", "C"}},
		{name: "filter keys do not act while typing", keys: []string{"/", "x", "q", "j"},
			rows: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestModel(t, 80, 24, Options{Runner: &fakeRunner{}})
			for _, k := range tt.keys {
				if cmd := press(m, k); cmd != nil && k != "enter" {
					if _, quit := cmd().(tea.QuitMsg); quit {
						t.Fatalf("key %q quit", k)
					}
				}
			}
			if m.dialog != nil {
				t.Fatalf("a dialog opened")
			}
			if tt.selected != "" && m.selected != tt.selected {
				t.Errorf("selected %q, want %q", m.selected, tt.selected)
			}
			if tt.rows != nil && strings.Join(rowIDs(m), " ") != strings.Join(tt.rows, " ") {
				t.Errorf("rows %v, want %v", rowIDs(m), tt.rows)
			}
		})
	}
}

func TestQuitKeys(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		t.Run(k, func(t *testing.T) {
			m := newTestModel(t, 80, 24, Options{})
			cmd := press(m, k)
			if cmd == nil {
				t.Fatal("no command")
			}
			if _, ok := cmd().(tea.QuitMsg); !ok {
				t.Errorf("%s did not quit", k)
			}
		})
	}
}

// SPEC §6: disabled bindings vanish from help; --readonly disables actions.
func TestReadonlyHidesActions(t *testing.T) {
	tests := []struct {
		name     string
		readonly bool
	}{{"actions enabled", false}, {"readonly", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runner := &fakeRunner{}
			m := newTestModel(t, 120, 40, Options{Readonly: tt.readonly, Runner: runner})
			press(m, "?")
			help := ansi.Strip(m.View().Content)
			// The keys, not the legend below them, which names every action.
			help, _, _ = strings.Cut(help, "Legend")
			for _, word := range []string{"kill subtree", "resume", "compact", "merge"} {
				if got := strings.Contains(help, word); got == tt.readonly {
					t.Errorf("help shows %q: %v, readonly %v", word, got, tt.readonly)
				}
			}
			press(m, "?")
			m.moveTo(m.rowIndex("A/test/3"))
			for _, k := range []string{"x", "X", "r", "c", "m"} {
				run(m, press(m, k))
				if (m.dialog != nil) == tt.readonly {
					t.Errorf("key %s: dialog open %v with readonly %v", k, m.dialog != nil, tt.readonly)
				}
				press(m, "esc")
			}
			if tt.readonly && len(runner.requests()) > 0 {
				t.Errorf("readonly ran %v", runner.requests())
			}
		})
	}
}

// SPEC §2: order is stable; a state change does not move rows.
func TestRowsKeepIDOrderAcrossStateChanges(t *testing.T) {
	m := newTestModel(t, 80, 24, Options{})
	before := rowIDs(m)
	specs := exampleSpecs()
	for i := range specs {
		specs[i].state = model.StateDead
		specs[i].flags = nil
	}
	m.Update(updateMsg{update: model.Update{Snapshot: buildSnapshot("/srv/fleet/.sessions", clock12, specs)}})
	if strings.Join(rowIDs(m), " ") != strings.Join(before, " ") {
		t.Errorf("rows moved: %v, was %v", rowIDs(m), before)
	}
}

// The selection stays on its node when rows are inserted above it.
func TestSelectionFollowsNodeID(t *testing.T) {
	m := newTestModel(t, 80, 24, Options{})
	m.moveTo(m.rowIndex("B/code/1"))
	specs := append([]spec{{id: "0-first", state: model.StateRunning, pid: 1}}, exampleSpecs()...)
	m.Update(updateMsg{update: model.Update{Snapshot: buildSnapshot("/srv/fleet/.sessions", clock12, specs)}})
	if got := m.selectedNode().ID; got != "B/code/1" {
		t.Errorf("selected %q after an insert, want B/code/1", got)
	}
}

// F follows the selected node: it stays selected and visible even when a
// filter would hide it and its session is collapsed.
func TestFollow(t *testing.T) {
	m := newTestModel(t, 80, 24, Options{})
	m.moveTo(m.rowIndex("A/plan/1"))
	press(m, "F")
	if m.following != "A/plan/1" {
		t.Fatalf("following %q", m.following)
	}
	m.collapsed["A"] = true
	press(m, "f") // problems: a finished node is not one
	press(m, "f")
	press(m, "f") // dead
	if n := m.selectedNode(); n == nil || n.ID != "A/plan/1" {
		t.Errorf("followed node not selected: rows %v", rowIDs(m))
	}
	press(m, "F")
	if m.following != "" {
		t.Errorf("F again did not stop following")
	}
}

// SPEC §6 `t` cycles the themes.
func TestThemeCycle(t *testing.T) {
	m := newTestModel(t, 80, 24, Options{})
	seen := []string{m.themes.Themes[m.theme].Name}
	for range 4 {
		press(m, "t")
		seen = append(seen, m.themes.Themes[m.theme].Name)
	}
	if got := strings.Join(seen, ","); got != "dark,light,high-contrast,mono,dark" {
		t.Errorf("theme cycle %s", got)
	}
}

// Text from disk cannot smuggle escape sequences onto the screen.
func TestHostileTextIsCleaned(t *testing.T) {
	specs := []spec{{id: "S", role: "lead\x1b[2J\x1b]0;pwned\x07", state: model.StateRunning, reason: "bad\x1b[31m", pid: 5}}
	m := newTestModel(t, 80, 24, Options{Initial: buildSnapshot("/r", clock12, specs)})
	frame := m.View().Content
	if strings.Contains(frame, "\x1b[2J") || strings.Contains(frame, "\x1b]0;") || strings.Contains(frame, "\x07") {
		t.Errorf("escape sequence from disk reached the frame: %q", frame)
	}
	if !strings.Contains(ansi.Strip(frame), "lead�[2J") {
		t.Errorf("cleaned role not shown: %q", ansi.Strip(frame))
	}
}

// SPEC §6: p pauses updates; they apply on resume.
func TestPauseHoldsUpdates(t *testing.T) {
	m := newTestModel(t, 80, 24, Options{})
	press(m, "p")
	specs := exampleSpecs()[:1]
	m.Update(updateMsg{update: model.Update{Snapshot: buildSnapshot("/srv/fleet/.sessions", clock12, specs),
		Transitions: []model.Transition{{Time: clock12, ID: "A/code/2", From: model.StateDead}}}})
	if len(m.rows) != 10 || len(m.events) != 0 {
		t.Fatalf("paused view changed: %d rows, %d events", len(m.rows), len(m.events))
	}
	if !strings.Contains(stripped(m), "PAUSED") {
		t.Errorf("header does not say paused")
	}
	press(m, "p")
	if len(m.rows) != 1 || len(m.events) != 1 {
		t.Errorf("after resume: %d rows, %d events, want 1 and 1", len(m.rows), len(m.events))
	}
}

// The status line is terminal text whatever it reports: a user theme's
// name comes from a file.
func TestStatusLineIsCleaned(t *testing.T) {
	hostile := themes.Builtins()[0]
	hostile.Name = "x\x1b]0;pwned\x07"
	set := themes.Set{Themes: []themes.Theme{themes.Builtins()[0], hostile}}
	m := newTestModel(t, 80, 24, Options{Themes: set})
	press(m, "t")
	frame := m.View().Content
	if strings.Contains(frame, "\x1b]0;") || strings.Contains(frame, "\x07") {
		t.Errorf("an escape sequence reached the status line: %q", frame)
	}
	if !strings.Contains(ansi.Strip(frame), "theme x\uFFFD]0;pwned\uFFFD") {
		t.Errorf("the status line does not name the theme:\n%s", ansi.Strip(frame))
	}
}

// SPEC §6 Keys: `?` shows every key; at 80×24, the smallest terminal the
// spec names, every binding and the notes under them are on screen, none
// cut, and no key is bound twice.
func TestHelpShowsEveryKeyAt80x24(t *testing.T) {
	m := newTestModel(t, 80, 24, Options{})
	press(m, "?")
	view := stripped(m)
	seen := map[string]string{}
	for _, column := range m.keys.FullHelp() {
		for _, b := range column {
			if want := b.Help().Key + " "; !strings.Contains(view, want) {
				t.Errorf("help lacks the key %q", want)
			}
			if !strings.Contains(view, b.Help().Desc) {
				t.Errorf("help lacks %q (%s)", b.Help().Desc, b.Help().Key)
			}
			for _, k := range b.Keys() {
				if other, ok := seen[k]; ok {
					t.Errorf("key %q is bound to %q and %q", k, other, b.Help().Desc)
				}
				seen[k] = b.Help().Desc
			}
		}
	}
	for _, note := range []string{"y confirms", "marked (v)", "theme: dark (t cycles)"} {
		if !strings.Contains(view, note) {
			t.Errorf("help lacks the note %q:\n%s", note, view)
		}
	}
	for _, line := range strings.Split(view, "\n") {
		if strings.HasSuffix(line, "…") {
			t.Errorf("help line is cut: %q", line)
		}
	}
}
