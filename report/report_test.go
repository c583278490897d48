package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

func sampleSnapshot() *model.Snapshot {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	lead := &model.Node{
		ID: "A", Root: "/r", InfraDir: "/r/A", HeartbeatPath: "/r/A/.heartbeat", HasHeartbeat: true,
		Heartbeat: &model.Heartbeat{PID: 4121, Role: "lead", Started: 1700000000.5, Status: "running",
			HeartbeatOptional: &model.HeartbeatOptional{Extra: map[string]json.RawMessage{"host": json.RawMessage(`"box"`)}}},
		BeatMtime: now.Add(-10 * time.Second),
		Cfa:       &model.CfaState{State: "EXECUTE"},
		Retries:   model.RetryCount{Total: 8, ByPhase: map[string]int{"EXECUTE": 1}},
		State:     model.StateRunning, Action: model.ActionNone, Reason: "beating",
	}
	missing := &model.Node{
		ID: "A/docs/4", Root: "/r", InfraDir: "/r/A/docs/4", HeartbeatPath: "/r/A/docs/4/.heartbeat",
		Entry: &model.ChildEntry{Team: "docs", Status: "active"},
		State: model.StateMissing, Action: model.ActionWait, Reason: "registered but never started",
		Parent: lead, ParentID: "A",
	}
	lead.Children = []*model.Node{missing}
	return &model.Snapshot{
		GeneratedAt: now, Roots: []string{"/r"}, Thresholds: model.DefaultThresholds(),
		Sessions: []*model.Node{lead}, ByID: map[string]*model.Node{"A": lead, "A/docs/4": missing},
	}
}

func TestJSONNodeFieldsFollowTheSchema(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, sampleSnapshot()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema   string           `json:"schema"`
		Problems []model.Problem  `json:"problems"`
		Sessions []map[string]any `json:"sessions"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != Schema || doc.Problems == nil {
		t.Fatalf("schema %q, problems %v: want %q and an empty list, not null", doc.Schema, doc.Problems, Schema)
	}
	lead := doc.Sessions[0]
	child := lead["children"].([]any)[0].(map[string]any)
	tests := []struct {
		name string
		node map[string]any
		key  string
		want any
	}{
		{"beat age in seconds", lead, "beat_age_s", 10.0},
		{"no stream file: activity age null", lead, "activity_age_s", nil},
		{"started kept as float", lead, "started", 1700000000.5},
		{"unknown heartbeat fields under extra", lead, "extra", map[string]any{"host": "box"}},
		{"a session has no parent", lead, "parent", nil},
		{"missing node: heartbeat path still named", child, "heartbeat", "/r/A/docs/4/.heartbeat"},
		{"missing node: status null", child, "status", nil},
		{"missing node: pid null", child, "pid", nil},
		{"missing node: beat age null", child, "beat_age_s", nil},
		{"missing node: cfa null", child, "cfa", nil},
		{"missing node: parent id", child, "parent", "A"},
		{"missing node: team from the registry", child, "team", "docs"},
		{"flags are a list, never null", child, "flags", []any{}},
		{"children are a list, never null", child, "children", []any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.node[tt.key]
			if !ok {
				t.Fatalf("key %q absent", tt.key)
			}
			if g, _ := json.Marshal(got); string(g) != mustJSON(tt.want) {
				t.Errorf("%s = %s, want %s", tt.key, g, mustJSON(tt.want))
			}
		})
	}
	retries := lead["retries"].(map[string]any)
	if retries["total"] != 8.0 || retries["phase"] != 1.0 || retries["left"] != 1.0 {
		t.Errorf("retries = %v, want total 8, phase 1, left 1 (9 per node caps it)", retries)
	}
	if cfa := lead["cfa"].(map[string]any); cfa["outcome"] != "working" {
		t.Errorf("cfa = %v", cfa)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestTextTreeIndentsByDepthNotByID(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, sampleSnapshot(), nil); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("want a summary and two rows, got:\n%s", buf.String())
	}
	if !strings.HasPrefix(lines[1], "● running") {
		t.Errorf("the session starts at the margin: %q", lines[1])
	}
	if !strings.HasPrefix(lines[2], "  ○ missing") {
		t.Errorf("its child is indented one level: %q", lines[2])
	}
	for _, want := range []string{"pid 4121", "beat 10s", "wait", "registered but never started"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q", want)
		}
	}
}

func TestPainterOnlyColoursWhenGiven(t *testing.T) {
	var buf bytes.Buffer
	paint := func(s model.State, text string) string { return "<" + string(s) + ">" + text }
	if err := WriteText(&buf, sampleSnapshot(), paint); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "<running>● running") || !strings.Contains(buf.String(), "<missing>") {
		t.Errorf("painter not applied per row:\n%s", buf.String())
	}
}

// Every string an agent (or a directory name) supplies reaches the text
// output on one line, without terminal escapes: one node a line must hold.
func TestTextSanitisesAgentWrittenStrings(t *testing.T) {
	const nasty = "a\x1b]0;owned\x07b\x1b[2J\nc\r\td\u0085e"
	tests := []struct {
		name string
		edit func(snap *model.Snapshot)
	}{
		{"role", func(s *model.Snapshot) { s.Sessions[0].Heartbeat.Role = nasty }},
		{"team", func(s *model.Snapshot) { s.Sessions[0].Children[0].Entry.Team = nasty }},
		{"id", func(s *model.Snapshot) { s.Sessions[0].Children[0].ID = "A/" + nasty }},
		{"reason", func(s *model.Snapshot) { s.Sessions[0].Reason = nasty }},
		{"problem path and error", func(s *model.Snapshot) {
			s.Problems = []model.Problem{{Path: "/r/" + nasty + "/.heartbeat", Error: "parse heartbeat: " + nasty}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := sampleSnapshot()
			tt.edit(snap)
			var buf bytes.Buffer
			if err := WriteText(&buf, snap, nil); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			wantLines := 3 // the summary and two nodes
			if len(snap.Problems) > 0 {
				wantLines += 2 + len(snap.Problems) // a blank line, the heading, one a problem
			}
			if got := strings.Count(out, "\n"); got != wantLines {
				t.Errorf("%d lines, want %d:\n%q", got, wantLines, out)
			}
			for _, bad := range []string{"\x1b", "\x07", "\r", "\t", "\u0085"} {
				if strings.Contains(out, bad) {
					t.Errorf("output holds %q:\n%q", bad, out)
				}
			}
			if !strings.Contains(out, "a\uFFFD]0;owned\uFFFDb\uFFFD[2J c d e") {
				t.Errorf("the text around the controls is lost:\n%q", out)
			}
		})
	}
}

// SPEC §4.1: status is the raw heartbeat status, or null. Null means the
// file has no status string; a status written as "" is "".
func TestJSONStatusIsNullOnlyWhenAbsent(t *testing.T) {
	tests := []struct {
		name string
		raw  string // the heartbeat file; "" for one built in memory
		hb   model.Heartbeat
		// parsed: the heartbeat file, parsed, its bytes not kept (as a
		// one-shot scan keeps none).
		parsed string
		want   any
	}{
		{name: "status written", raw: `{"pid": 1, "status": "running"}`, hb: model.Heartbeat{PID: 1, Status: "running"}, want: "running"},
		{name: "no status field: null", raw: `{"pid": 1}`, hb: model.Heartbeat{PID: 1}, want: nil},
		{name: "status null: null", raw: `{"pid": 1, "status": null}`, hb: model.Heartbeat{PID: 1}, want: nil},
		{name: "status not a string (unreadable field): null", raw: `{"pid": 1, "status": 3}`, hb: model.Heartbeat{PID: 1}, want: nil},
		{name: "status written empty: empty", raw: `{"pid": 1, "status": ""}`, hb: model.Heartbeat{PID: 1}, want: ""},
		{name: "a status key nested elsewhere does not count", raw: `{"pid": 1, "meta": {"status": "x"}}`, hb: model.Heartbeat{PID: 1}, want: nil},
		{name: "no raw bytes (decoded from another host's document): empty is null", hb: model.Heartbeat{PID: 1}, want: nil},
		{name: "no raw bytes, a status: the status", hb: model.Heartbeat{PID: 1, Status: "paused"}, want: "paused"},
		{name: "read from its file, the bytes not kept: empty is empty", parsed: `{"pid": 1, "status": ""}`, want: ""},
		{name: "read from its file, the bytes not kept: null is null", parsed: `{"pid": 1, "status": null}`, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := sampleSnapshot()
			lead := snap.Sessions[0]
			hb := tt.hb
			if tt.parsed != "" {
				var err error
				if hb, err = protocol.ParseHeartbeat([]byte(tt.parsed)); err != nil {
					t.Fatal(err)
				}
			}
			lead.Heartbeat = &hb
			lead.EditRare(func(r *model.Rare) {
				r.HeartbeatRaw = nil
				if tt.raw != "" {
					r.HeartbeatRaw = []byte(tt.raw)
				}
			})
			var buf bytes.Buffer
			if err := WriteJSON(&buf, snap); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Sessions []map[string]any `json:"sessions"`
			}
			if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			got, ok := doc.Sessions[0]["status"]
			if !ok || mustJSON(got) != mustJSON(tt.want) {
				t.Errorf("status = %s (present %v), want %s", mustJSON(got), ok, mustJSON(tt.want))
			}
		})
	}
}

// The text tree's columns line up in terminal cells, as the dashboard's do:
// an id of wide characters (two cells a rune) shifts no column after it.
func TestTextColumnsAlignInCellsNotRunes(t *testing.T) {
	snap := sampleSnapshot()
	snap.Sessions[0].Children[0].ID = "A/日本語"
	var buf bytes.Buffer
	if err := WriteText(&buf, snap, nil); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")[1:]
	var at []int
	for _, l := range lines {
		i := strings.Index(l, "pid ")
		if i < 0 {
			i = strings.Index(l, " - ") + 1 // the missing node has no pid
		}
		at = append(at, ansi.StringWidth(l[:i]))
	}
	if len(at) != 2 || at[0] != at[1] {
		t.Errorf("the pid column starts at cells %v:\n%s", at, buf.String())
	}
}

// SPEC §4: the --once text names each agent as its own system does (an
// opencode-teams agent's `name`, middle's Epic), the role elsewhere, so a
// uuid or a row id is never all a line says of it.
func TestTextNamesTheAgentAsItsSystemDoes(t *testing.T) {
	tests := []struct {
		name   string
		source string
		fields []model.Field
		role   string
		want   string
	}{
		{"opencode-teams: the agent's name", "opencode-teams", []model.Field{{Name: "name", Value: "oc-scribe"}}, "general", "oc-scribe"},
		{"middle: its Epic", "middle", []model.Field{{Name: "epic", Value: "42"}, {Name: "repo", Value: "acme/api"}}, "", "epic 42"},
		{"native: the role", "", nil, "coder", "coder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := sampleSnapshot()
			n := snap.Sessions[0]
			n.Source = tt.source
			n.Heartbeat.Role = tt.role
			if tt.fields != nil {
				fields := tt.fields
				n.EditRare(func(r *model.Rare) { r.SourceFields = fields })
			}
			var buf bytes.Buffer
			if err := WriteText(&buf, snap, nil); err != nil {
				t.Fatal(err)
			}
			var line string
			for _, l := range strings.Split(buf.String(), "\n") {
				if strings.Contains(l, n.ID+" ") {
					line = l
				}
			}
			if !strings.Contains(line, "  "+tt.want+"  ") {
				t.Errorf("the line of %s does not name %q:\n%s", n.ID, tt.want, buf.String())
			}
		})
	}
}
