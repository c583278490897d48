package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §6 Detail pane: long values (reasons, paths, raw JSON) wrap under
// their label at word and path boundaries instead of losing their end or
// breaking a word at the screen's edge.
func TestDetailLinesWrapAtWords(t *testing.T) {
	tests := []struct {
		name  string
		line  string
		width int
		want  []string
	}{
		{name: "short line stays", line: "state         dead", width: 40,
			want: []string{"state         dead"}},
		{name: "reason wraps at spaces under its label", width: 40,
			line: "reason        pid 22185 gone; last beat 22s ago; its lead owns the recovery",
			want: []string{
				"reason        pid 22185 gone; last beat",
				"              22s ago; its lead owns the",
				"              recovery",
			}},
		{name: "path wraps after a slash", width: 40,
			line: "heartbeat     /tmp/fleet/.sessions/20261122-090000/testing/.heartbeat",
			want: []string{
				"heartbeat     /tmp/fleet/.sessions/",
				"              20261122-090000/testing/",
				"              .heartbeat",
			}},
		{name: "indented raw line keeps its indent", width: 30,
			line: `  line 7: {"team":"testing","status":"active"}`,
			want: []string{
				`  line 7: {"team":"testing",`,
				`  "status":"active"}`,
			}},
		{name: "a word longer than a line is cut", width: 30,
			line: "id            " + strings.Repeat("x", 40),
			want: []string{
				"id            " + strings.Repeat("x", 16),
				"              " + strings.Repeat("x", 16),
				"              " + strings.Repeat("x", 8),
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wrapIndent(tt.line, tt.width, detailIndent)
			for i, l := range got {
				if ansi.StringWidth(l) > tt.width {
					t.Errorf("line %d is %d wide, over %d: %q", i, ansi.StringWidth(l), tt.width, l)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("wrapIndent:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// SPEC §6 Detail pane: the blocked question, and since when the agent waits
// (the sentinel's mtime).
func TestDetailShowsBlockedQuestionAndSince(t *testing.T) {
	m := newTestModel(t, 120, 40, Options{})
	m.moveTo(m.rowIndex("B/ask/3"))
	press(m, "enter")
	view := stripped(m)
	for _, want := range []string{"── question", "  Ship it?", "waiting       since 2026-11-22 11:40:00 (20m"} {
		if !strings.Contains(view, want) {
			t.Errorf("details lack %q:\n%s", want, view)
		}
	}
}

// The raw heartbeat is valid JSON, which may carry C1 controls (the 8-bit
// CSI) and bidirectional overrides unescaped: the detail pane shows them
// neutralised, as everything else from disk.
func TestDetailRawHeartbeatIsTerminalText(t *testing.T) {
	specs := []spec{{id: "S", role: "lead\u009b2J\u202eevil", state: model.StateRunning, reason: "beating", pid: 5}}
	m := newTestModel(t, 120, 80, Options{Initial: buildSnapshot("/r", clock12, specs)})
	press(m, "enter")
	frame := m.View().Content
	if !strings.Contains(frame, `"role": "lead`) {
		t.Fatalf("the raw heartbeat is not shown:\n%s", ansi.Strip(frame))
	}
	for _, bad := range []string{"\u009b", "\u202e"} {
		if strings.Contains(frame, bad) {
			t.Errorf("the detail pane holds %U:\n%q", []rune(bad)[0], frame)
		}
	}
}
