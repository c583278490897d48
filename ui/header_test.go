package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/internal/glyph"
	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §6 Header: roots, counts as glyph-number-word, watch mode and why,
// the NFS/SMB warning, the --no-pid-check note, the clock.
func TestHeader(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(s *model.Snapshot)
		opts  Options
		wants []string
	}{
		{name: "counts and clock", wants: []string{"/srv/fleet/.sessions", "12:00:00", "● 5 running", "✖ 3 dead", "✔ 1 finished", "○ 1 missing", "◆ 1 kill_candidate", "⧗ 1 blocked", "watch: fsnotify"}},
		{name: "polling and why", edit: func(s *model.Snapshot) {
			s.Watch = model.WatchInfo{Mode: "polling", Interval: 2 * time.Second, Reason: "inotify watch limit reached"}
		}, wants: []string{"watch: polling every 2s (inotify watch limit reached)"}},
		{name: "NFS warning", edit: func(s *model.Snapshot) {
			s.Watch.Warnings = []string{"/srv/fleet is on nfs: mtime liveness unreliable"}
		}, wants: []string{"⚠ /srv/fleet is on nfs: mtime liveness unreliable"}},
		{name: "no pid check", edit: func(s *model.Snapshot) { s.Thresholds.NoPidCheck = true },
			wants: []string{"--no-pid-check: liveness from mtimes alone"}},
		{name: "overflows", edit: func(s *model.Snapshot) { s.Watch.Overflows = 2 },
			wants: []string{"2 event overflows re-stated"}},
		{name: "readonly and notes", opts: Options{Readonly: true, Notes: []string{"unknown theme \"neon\""}},
			wants: []string{"read-only", `unknown theme "neon"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := exampleSnapshot()
			if tt.edit != nil {
				tt.edit(snap)
			}
			opts := tt.opts
			opts.Initial = snap
			m := newTestModel(t, 160, 30, opts)
			header := strings.Join(strings.Split(stripped(m), "\n")[:m.frame.headerH], "\n")
			for _, w := range tt.wants {
				if !strings.Contains(header, w) {
					t.Errorf("header lacks %q:\n%s", w, header)
				}
			}
		})
	}
}

// SPEC §6 Header: the header is the same lines whatever comes and goes —
// every flag present or none, a filter, a pause, a follow — so no row
// moves; counts that do not fit a line end it with "+N more", worst flags
// first.
func TestHeaderHasAFixedHeight(t *testing.T) {
	for _, width := range []int{120, 80, 60, 40} {
		t.Run(fmt.Sprintf("%d columns", width), func(t *testing.T) {
			plain := newTestModel(t, width, 24, Options{})
			want := plain.frame.headerH
			if want != 5 {
				t.Errorf("header is %d lines, want 5 (title, states, flags, notes, column head)", want)
			}
			snap := exampleSnapshot()
			snap.ByID["A/test/3"].Flags = append([]model.Flag(nil), model.Flags...)
			snap.Watch.Warnings = []string{"/srv/fleet is on nfs: mtime liveness unreliable"}
			snap.Thresholds.NoPidCheck = true
			busy := newTestModel(t, width, 24, Options{Initial: snap, Readonly: true, Notes: []string{"a note"}})
			for _, k := range []string{"f", "p", "F", "s"} {
				press(busy, k)
			}
			if busy.frame.headerH != want {
				t.Errorf("with every flag, a filter, a pause and a follow the header is %d lines, want %d", busy.frame.headerH, want)
			}
			lines := strings.Split(stripped(busy), "\n")[:busy.frame.headerH]
			if width < 120 && !strings.Contains(lines[2], " more") {
				t.Errorf("the flags line does not say what is hidden: %q", lines[2])
			}
			if !strings.Contains(lines[2], "kill_candidate") && width >= 60 {
				t.Errorf("the worst flag is not first on the flags line: %q", lines[2])
			}
			// Every state's count stays, in words or, narrower, by glyph.
			for _, s := range []string{"● 5", "✖ 3", "✔ 1", "○ 1"} {
				if !strings.Contains(lines[1], s) {
					t.Errorf("the states line lacks %q: %q", s, lines[1])
				}
			}
			for i, line := range lines {
				if w := ansi.StringWidth(line); w > width {
					t.Errorf("header line %d is %d wide, over %d: %q", i, w, width, line)
				}
			}
		})
	}
}

// SPEC §6: every flag reads from its glyph and word alone (mono), so each
// flag the classifier sets has a glyph of its own, one cell wide; clock_skew
// (an mtime in the future, SPEC §3) is also one an operator must look at.
func TestClockSkewHasItsOwnGlyphAndIsAProblem(t *testing.T) {
	seen := map[string]model.Flag{}
	for _, f := range model.Flags {
		g := glyph.Flag(f)
		if w := ansi.StringWidth(g); w != 1 {
			t.Errorf("flag %s: glyph %q is %d cells wide", f, g, w)
		}
		if other, dup := seen[g]; dup && g != glyph.Flag("") {
			t.Errorf("flags %s and %s share the glyph %q", other, f, g)
		}
		seen[g] = f
	}
	if glyph.Flag(model.FlagClockSkew) == glyph.Flag("") {
		t.Errorf("clock_skew has no glyph of its own")
	}
	n := &model.Node{State: model.StateRunning, Flags: []model.Flag{model.FlagClockSkew}, Action: model.ActionNone}
	if !isProblem(n) {
		t.Errorf("a running node flagged clock_skew is not in the problems filter")
	}
}

// SPEC §6 Header: the counts follow every update — a state, a flag alone, a
// width, a theme — and a beat that moves no count leaves them as they are.
// The dashboard keeps the count lines between updates (countsMemo); after
// each step they must be the lines a dashboard drawn afresh shows.
func TestHeaderCountsFollowEveryUpdate(t *testing.T) {
	specs := exampleSpecs()
	edit := func(id string, f func(*spec)) *model.Snapshot {
		for i := range specs {
			if specs[i].id == id {
				f(&specs[i])
			}
		}
		return buildSnapshot("/srv/fleet/.sessions", clock12, specs)
	}
	steps := []struct {
		name string
		do   func(m *Model)
	}{
		{"a beat, no count moves", func(m *Model) {
			m.Update(updateMsg{update: model.Update{Snapshot: edit("C", func(s *spec) { s.beat = time.Second })}})
		}},
		{"a state", func(m *Model) {
			m.Update(updateMsg{update: model.Update{Snapshot: edit("A/code/2", func(s *spec) { s.state = model.StateRunning })}})
		}},
		{"a flag alone", func(m *Model) {
			m.Update(updateMsg{update: model.Update{Snapshot: edit("B/code/1", func(s *spec) { s.flags = nil })}})
		}},
		{"a width", func(m *Model) { m.Update(tea.WindowSizeMsg{Width: 60, Height: 30}) }},
		{"a theme", func(m *Model) { press(m, "t") }},
	}
	m := newTestModel(t, 160, 30, Options{})
	for _, st := range steps {
		st.do(m)
		set := m.themes
		set.Start = m.theme // drawn in this theme from the first frame
		fresh := newTestModel(t, m.width, m.height, Options{Initial: buildSnapshot("/srv/fleet/.sessions", clock12, specs), Themes: set})
		got := strings.Split(m.View().Content, "\n")[1:3]
		want := strings.Split(fresh.View().Content, "\n")[1:3]
		if !slices.Equal(got, want) {
			t.Errorf("after %s the count lines are\n%q\nwant (drawn afresh)\n%q", st.name, got, want)
		}
	}
}
