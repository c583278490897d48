package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

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
			header := strings.Join(strings.Split(stripped(m), "\n")[:m.headerH], "\n")
			for _, w := range tt.wants {
				if !strings.Contains(header, w) {
					t.Errorf("header lacks %q:\n%s", w, header)
				}
			}
		})
	}
}

// SPEC §6 Header: counts per state and flag. A narrow screen wraps the
// counts onto more lines rather than dropping a flag an operator must see.
func TestHeaderCountsEveryFlagWhenNarrow(t *testing.T) {
	for _, width := range []int{80, 60} {
		t.Run(fmt.Sprintf("%d columns", width), func(t *testing.T) {
			snap := exampleSnapshot()
			// One node carries every flag, so the header must count them all.
			snap.ByID["A/test/3"].Flags = append([]model.Flag(nil), model.Flags...)
			m := newTestModel(t, width, 24, Options{Initial: snap})
			header := strings.Join(strings.Split(stripped(m), "\n")[:m.headerH], "\n")
			for _, f := range model.Flags {
				if !strings.Contains(header, " "+string(f)) {
					t.Errorf("header at %d columns lacks flag %q:\n%s", width, f, header)
				}
			}
			for i, line := range strings.Split(header, "\n") {
				if w := ansi.StringWidth(line); w > width {
					t.Errorf("header line %d is %d wide, over %d: %q", i, w, width, line)
				}
			}
		})
	}
}

// On a screen too small for every count, the last count line says how many
// are not shown instead of cutting them off unannounced.
func TestHeaderCountsSayWhatDoesNotFit(t *testing.T) {
	snap := exampleSnapshot()
	snap.ByID["A/test/3"].Flags = append([]model.Flag(nil), model.Flags...)
	m := newTestModel(t, 40, 24, Options{Initial: snap})
	lines := strings.Split(stripped(m), "\n")[:m.headerH]
	if counts := len(lines) - 3; counts != maxCountLines { // title, watch line, column head
		t.Fatalf("want %d count lines at 40 columns, got %d:\n%s", maxCountLines, counts, strings.Join(lines, "\n"))
	}
	last := lines[len(lines)-3]
	if !strings.Contains(last, " more") {
		t.Errorf("last count line does not say what is hidden: %q", last)
	}
	for i, line := range lines {
		if w := ansi.StringWidth(line); w > 40 {
			t.Errorf("header line %d is %d wide, over 40: %q", i, w, line)
		}
	}
}

// SPEC §6: every flag reads from its glyph and word alone (mono), so each
// flag the classifier sets has a glyph of its own, one cell wide; clock_skew
// (an mtime in the future, SPEC §3) is also one an operator must look at.
func TestClockSkewHasItsOwnGlyphAndIsAProblem(t *testing.T) {
	seen := map[string]model.Flag{}
	for _, f := range model.Flags {
		g := flagGlyph(f)
		if w := ansi.StringWidth(g); w != 1 {
			t.Errorf("flag %s: glyph %q is %d cells wide", f, g, w)
		}
		if other, dup := seen[g]; dup && g != flagGlyph("") {
			t.Errorf("flags %s and %s share the glyph %q", other, f, g)
		}
		seen[g] = f
	}
	if flagGlyph(model.FlagClockSkew) == flagGlyph("") {
		t.Errorf("clock_skew has no glyph of its own")
	}
	n := &model.Node{State: model.StateRunning, Flags: []model.Flag{model.FlagClockSkew}, Action: model.ActionNone}
	if !isProblem(n) {
		t.Errorf("a running node flagged clock_skew is not in the problems filter")
	}
}
