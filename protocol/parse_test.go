package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
)

// A heartbeat holds what some writers add (team, task_id, worktree, fields
// no one names) only when its file has some: the five fields every writer
// writes make no HeartbeatOptional, by the fast reading or the plain one.
func TestParseHeartbeatHoldsOptionalFieldsOnlyWhenWritten(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want *model.HeartbeatOptional
	}{
		{"the five fields", `{"pid": 7, "parent_heartbeat": "", "role": "lead", "started": 1.5, "status": "running"}`, nil},
		{"the five, by the plain reading", `{"pid": 7, "parent_heartbeat": "", "role": "lead", "started": 1.5, "status": "r\u0075nning"}`, nil},
		{"empty optional fields", `{"pid": 7, "team": "", "task_id": null, "worktree": ""}`, nil},
		{"a team", `{"pid": 7, "team": "t1"}`, &model.HeartbeatOptional{Team: "t1"}},
		{"a task id and a worktree, by the plain reading", `{"pid": 7, "task_id": 12, "worktree": "/w", "x": 1}`,
			&model.HeartbeatOptional{TaskID: "12", Worktree: "/w", Extra: map[string]json.RawMessage{"x": json.RawMessage("1")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hb, err := ParseHeartbeat([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(hb.HeartbeatOptional, tt.want) {
				t.Errorf("optional fields %+v, want %+v", hb.HeartbeatOptional, tt.want)
			}
		})
	}
}

func TestParseHeartbeat(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string // substring; "" means no error
		check   func(t *testing.T, got model.Heartbeat)
	}{
		{name: "full heartbeat", in: `{"pid": 4242, "parent_heartbeat": "/r/a/.heartbeat", "role": "coder", "started": 1700000000.25, "status": "running"}`,
			check: func(t *testing.T, got model.Heartbeat) {
				if got.PID != 4242 || got.ParentHeartbeat != "/r/a/.heartbeat" || got.Role != "coder" || got.Started != 1700000000.25 || got.Status != "running" {
					t.Errorf("fields = %+v", got)
				}
			}},
		{name: "unknown fields kept in Extra", in: `{"pid": 1, "model": "opus", "cost": {"usd": 2}}`,
			check: func(t *testing.T, got model.Heartbeat) {
				if string(got.Optional().Extra["model"]) != `"opus"` || string(got.Optional().Extra["cost"]) != `{"usd": 2}` {
					t.Errorf("Extra = %q", got.Optional().Extra)
				}
			}},
		{name: "null fields mean unset", in: `{"pid": null, "parent_heartbeat": null, "task_id": null}`,
			check: func(t *testing.T, got model.Heartbeat) {
				if got.PID != 0 || got.ParentHeartbeat != "" {
					t.Errorf("fields = %+v", got)
				}
			}},
		{name: "integral float pid accepted", in: `{"pid": 77.0}`,
			check: func(t *testing.T, got model.Heartbeat) {
				if got.PID != 77 {
					t.Errorf("pid = %d", got.PID)
				}
			}},
		{name: "numeric task id kept as text", in: `{"task_id": 12}`,
			check: func(t *testing.T, got model.Heartbeat) {
				if got.Optional().TaskID != "12" {
					t.Errorf("task_id = %q", got.Optional().TaskID)
				}
			}},
		{name: "pid 0 parses (no pid)", in: `{"pid": 0}`},
		{name: "pid 1 parses (never signalled, probed as any pid)", in: `{"pid": 1}`},
		{name: "empty file", in: ``, wantErr: "empty file"},
		{name: "empty object parses", in: `{}`},
		{name: "truncated", in: `{"pid": 12, "sta`, wantErr: "not a JSON object"},
		{name: "binary", in: "\x00\xff\xfe\x01", wantErr: "not a JSON object"},
		{name: "array", in: `[1,2]`, wantErr: "not a JSON object"},
		{name: "null document", in: `null`, wantErr: "not a JSON object"},
		{name: "wrong type pid names the field", in: `{"pid": "abc"}`, wantErr: `field "pid": want an integer`},
		{name: "wrong type status names the field", in: `{"status": 3}`, wantErr: `field "status": want a string`},
		{name: "wrong type started names the field", in: `{"started": "yesterday"}`, wantErr: `field "started": want a number`},
		{name: "fractional pid", in: `{"pid": 1.5}`, wantErr: `field "pid"`},
		{name: "huge pid", in: `{"pid": 1e30}`, wantErr: `field "pid"`},
		{name: "negative pid is an error", in: `{"pid": -5}`, wantErr: "negative pid -5"},

		// One bad field does not throw the rest away (SPEC §3 unreadable:
		// the state comes from what could be read).
		{name: "bad field kept apart: negative pid, status still read", in: `{"pid": -1, "status": "completed", "role": "coder"}`,
			wantErr: `field "pid": negative pid -1`,
			check: func(t *testing.T, got model.Heartbeat) {
				if got.PID != 0 || got.Status != "completed" || got.Role != "coder" {
					t.Errorf("fields = %+v", got)
				}
			}},
		{name: "bad field kept apart: started not a number, the rest read", in: `{"pid": 7, "started": "yesterday", "status": "running", "parent_heartbeat": "/r/A/.heartbeat", "model": "x"}`,
			wantErr: `field "started": want a number`,
			check: func(t *testing.T, got model.Heartbeat) {
				if got.PID != 7 || got.Started != 0 || got.Status != "running" || got.ParentHeartbeat != "/r/A/.heartbeat" || string(got.Optional().Extra["model"]) != `"x"` {
					t.Errorf("fields = %+v", got)
				}
			}},
		{name: "bad field kept apart: task id an object, the rest read", in: `{"task_id": {"x": 1}, "status": "paused", "team": "t"}`,
			wantErr: `field "task_id"`,
			check: func(t *testing.T, got model.Heartbeat) {
				if got.Optional().TaskID != "" || got.Status != "paused" || got.Optional().Team != "t" {
					t.Errorf("fields = %+v", got)
				}
			}},
		{name: "bad field kept apart: every bad field named, in name order", in: `{"status": 3, "pid": "abc", "role": "r"}`,
			wantErr: `field "pid": want an integer, got "abc"; field "status": want a string, got 3`,
			check: func(t *testing.T, got model.Heartbeat) {
				if got.PID != 0 || got.Status != "" || got.Role != "r" {
					t.Errorf("fields = %+v", got)
				}
			}},
		{name: "not an object: nothing is kept", in: `[{"status": "running"}]`, wantErr: "not a JSON object",
			check: func(t *testing.T, got model.Heartbeat) {
				if got.Status != "" || got.Optional().Extra != nil {
					t.Errorf("fields = %+v", got)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hb, err := ParseHeartbeat([]byte(tt.in))
			switch {
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			}
			if tt.check != nil {
				tt.check(t, hb)
			}
		})
	}
}

// SPEC §1: `parent_heartbeat: ""` declares a session lead; a heartbeat
// without the field (or with null) declares nothing. Both parse paths (the
// fast one for known keys, the field-by-field one for the rest) agree.
func TestParseHeartbeatSessionLead(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		sessionLead bool
		hasField    bool
	}{
		{name: "empty parent_heartbeat: a session lead", in: `{"pid": 1, "parent_heartbeat": ""}`, sessionLead: true, hasField: true},
		{name: "a parent path: not a lead", in: `{"pid": 1, "parent_heartbeat": "/r/a/.heartbeat"}`, hasField: true},
		{name: "no parent_heartbeat field: declares nothing", in: `{"pid": 1}`},
		{name: "null parent_heartbeat: declares nothing", in: `{"pid": 1, "parent_heartbeat": null}`},
		{name: "wrong type: declares nothing", in: `{"pid": 1, "parent_heartbeat": 5}`},
		{name: "empty, with an unknown field (the plain reading)", in: `{"pid": 1, "parent_heartbeat": "", "host": "h"}`, sessionLead: true, hasField: true},
		{name: "absent, with an unknown field (the plain reading)", in: `{"pid": 1, "host": "h"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hb, _ := ParseHeartbeat([]byte(tt.in))
			if hb.SessionLead() != tt.sessionLead || hb.HasParentField != tt.hasField {
				t.Errorf("session lead %v, has field %v; want %v, %v", hb.SessionLead(), hb.HasParentField, tt.sessionLead, tt.hasField)
			}
		})
	}
}

// SPEC §4.1 reports the status as written, or null: the parse says whether
// a status string was written at all, so an empty one is told from none
// without the file's bytes. Both parse paths agree.
func TestParseHeartbeatTellsAnEmptyStatusFromNone(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		hasField bool
	}{
		{name: "a status", in: `{"pid": 1, "status": "running"}`, hasField: true},
		{name: "an empty status", in: `{"pid": 1, "status": ""}`, hasField: true},
		{name: "an empty status, with an unknown field (the plain reading)", in: `{"pid": 1, "status": "", "host": "h"}`, hasField: true},
		{name: "no status", in: `{"pid": 1}`},
		{name: "null status", in: `{"pid": 1, "status": null}`},
		{name: "null status, with an unknown field (the plain reading)", in: `{"status": null, "host": "h"}`},
		{name: "a status of another type", in: `{"pid": 1, "status": 3}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hb, _ := ParseHeartbeat([]byte(tt.in))
			if hb.HasStatusField != tt.hasField {
				t.Errorf("has status field %v, want %v", hb.HasStatusField, tt.hasField)
			}
		})
	}
}

func TestParseRegistry(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		check func(t *testing.T, lines []model.RegistryLine)
	}{
		{name: "empty file has no lines", in: "", check: func(t *testing.T, l []model.RegistryLine) {
			if len(l) != 0 {
				t.Errorf("lines = %+v", l)
			}
		}},
		{name: "two lines parse with null task id", in: "{\"heartbeat\":\"/a/.heartbeat\",\"team\":\"t\",\"task_id\":null,\"status\":\"active\"}\n{\"heartbeat\":\"b/.heartbeat\",\"task_id\":\"7\",\"status\":\"completed\"}\n",
			check: func(t *testing.T, l []model.RegistryLine) {
				if len(l) != 2 || l[0].Entry == nil || l[1].Entry == nil {
					t.Fatalf("lines = %+v", l)
				}
				if l[0].Entry.TaskID != nil || *l[1].Entry.TaskID != "7" || l[1].Number != 2 || l[0].Torn || l[1].Torn {
					t.Errorf("lines = %+v", l)
				}
			}},
		{name: "CRLF lines tolerated, CR kept in raw", in: "{\"heartbeat\":\"a/.heartbeat\"}\r\n{\"heartbeat\":\"b/.heartbeat\"}\r\n",
			check: func(t *testing.T, l []model.RegistryLine) {
				if len(l) != 2 || l[0].Entry == nil || l[1].Entry == nil {
					t.Fatalf("lines = %+v", l)
				}
				if !bytes.HasSuffix(l[0].Raw, []byte("\r")) {
					t.Errorf("raw = %q, want CR kept", l[0].Raw)
				}
			}},
		{name: "torn last line is an append in flight", in: "{\"heartbeat\":\"a/.heartbeat\"}\n{\"heartbeat\":\"b/.hea",
			check: func(t *testing.T, l []model.RegistryLine) {
				if len(l) != 2 || !l[1].Torn || l[0].Torn || l[1].Entry != nil {
					t.Fatalf("lines = %+v", l)
				}
				if string(l[1].Raw) != `{"heartbeat":"b/.hea` {
					t.Errorf("raw = %q", l[1].Raw)
				}
			}},
		{name: "unparseable line kept with error", in: "garbage\n{\"heartbeat\":\"a/.heartbeat\"}\n",
			check: func(t *testing.T, l []model.RegistryLine) {
				if len(l) != 2 || l[0].Entry != nil || l[0].Err == "" || string(l[0].Raw) != "garbage" || l[1].Entry == nil {
					t.Fatalf("lines = %+v", l)
				}
			}},
		{name: "line without heartbeat is an error", in: "{\"team\":\"x\"}\n",
			check: func(t *testing.T, l []model.RegistryLine) {
				if len(l) != 1 || !strings.Contains(l[0].Err, `"heartbeat"`) {
					t.Fatalf("lines = %+v", l)
				}
			}},
		{name: "wrong type names the field", in: "{\"heartbeat\":5}\n",
			check: func(t *testing.T, l []model.RegistryLine) {
				if len(l) != 1 || !strings.Contains(l[0].Err, `field "heartbeat"`) {
					t.Fatalf("lines = %+v", l)
				}
			}},
		{name: "over-long line kept truncated with error", in: `{"heartbeat":"` + strings.Repeat("x", 70<<10) + "\"}\n{\"heartbeat\":\"a/.heartbeat\"}\n",
			check: func(t *testing.T, l []model.RegistryLine) {
				if len(l) != 2 || !strings.Contains(l[0].Err, "longer than 64 KiB") || len(l[0].Raw) != MaxRegistryLine || l[0].Torn {
					t.Fatalf("line 1: err %q raw %d torn %v", l[0].Err, len(l[0].Raw), l[0].Torn)
				}
				if l[1].Entry == nil || l[1].Number != 2 {
					t.Errorf("line 2 = %+v", l[1])
				}
			}},
		{name: "of several fields at fault, the first the line's fields list is named", in: "{\"team\":5,\"status\":[],\"heartbeat\":6,\"task_id\":{}}\n",
			check: func(t *testing.T, l []model.RegistryLine) {
				if len(l) != 1 || l[0].Err != `field "heartbeat": want a string, got 6` {
					t.Fatalf("lines = %+v", l)
				}
			}},
		{name: "blank line kept, not an entry", in: "\n{\"heartbeat\":\"a/.heartbeat\"}\n",
			check: func(t *testing.T, l []model.RegistryLine) {
				if len(l) != 2 || l[0].Err != "empty line" || l[1].Entry == nil {
					t.Fatalf("lines = %+v", l)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 20 { // the same lines every time, whatever the map order
				lines := ParseRegistry([]byte(tt.in))
				tt.check(t, lines)
			}
		})
	}
}

// TestParseCfa: SPEC §1's `.cfa-state.json`. What the classifier does not
// read (model.CfaDetail: the history, what older writers also wrote) is
// held only by the files that name it, as encoding/json holds it: made for
// a key given, even a null one. Without the history (a scan that keeps no
// file bytes), the history makes none.
func TestParseCfa(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		wantState   string
		wantOutcome string
		wantDetail  *model.CfaDetail
		wantErr     string
		// wantOmitted is the detail without the history, when not wantDetail.
		wantOmitted *model.CfaDetail
		omitted     bool
	}{
		{name: "terminal success", in: `{"state":"DONE","history":[{"s":"PLAN"}],"backtrack_count":1,"task_id":"t1"}`, wantState: "DONE", wantOutcome: "success",
			wantDetail: &model.CfaDetail{History: []json.RawMessage{json.RawMessage(`{"s":"PLAN"}`)}}, omitted: true},
		{name: "a history and an older writer's field", in: `{"state":"DONE","history":[],"depth":1}`, wantState: "DONE", wantOutcome: "success",
			wantDetail: &model.CfaDetail{History: []json.RawMessage{}, Depth: 1}, wantOmitted: &model.CfaDetail{Depth: 1}, omitted: true},
		{name: "a null history", in: `{"state":"DONE","history":null}`, wantState: "DONE", wantOutcome: "success",
			wantDetail: &model.CfaDetail{}, omitted: true},
		{name: "terminal failure", in: `{"state":"WITHDRAWN"}`, wantState: "WITHDRAWN", wantOutcome: "failure"},
		{name: "older writer fields", in: `{"state":"EXECUTE","phase":"exec","actor":"lead","parent_id":"p","team_id":"t","depth":2}`, wantState: "EXECUTE", wantOutcome: "working",
			wantDetail: &model.CfaDetail{Phase: "exec", Actor: "lead", ParentID: "p", TeamID: "t", Depth: 2}},
		{name: "an older writer's key, null", in: `{"state":"EXECUTE","team_id":null}`, wantState: "EXECUTE", wantOutcome: "working", wantDetail: &model.CfaDetail{}},
		{name: "an older writer's key, another case", in: `{"state":"EXECUTE","Phase":"exec"}`, wantState: "EXECUTE", wantOutcome: "working", wantDetail: &model.CfaDetail{Phase: "exec"}},
		// The plain reading (an escaped key, a key in another case) makes
		// the detail as the fast one does: for a key given, even null.
		{name: "an older writer's key, null, beside an escaped key", in: `{"state":"EXECUTE","team_id":null,"o\u0074her":1}`, wantState: "EXECUTE", wantOutcome: "working", wantDetail: &model.CfaDetail{}},
		{name: "a null history beside a key in another case", in: `{"State":"DONE","history":null}`, wantState: "DONE", wantOutcome: "success",
			wantDetail: &model.CfaDetail{}, omitted: true},
		{name: "an older writer's key in another case, null", in: `{"state":"EXECUTE","DEPTH":null}`, wantState: "EXECUTE", wantOutcome: "working", wantDetail: &model.CfaDetail{}},
		{name: "empty", in: "", wantErr: "empty file"},
		{name: "wrong type names the field", in: `{"state": 5}`, wantErr: `field "state"`},
		{name: "history not a list", in: `{"state":"DONE","history":"x"}`, wantErr: `field "history"`},
		// A problem names the file's field, not where this program keeps it.
		{name: "history not a list, said as before", in: `{"state":"DONE","history":"x"}`,
			wantErr: `field "history": want []json.RawMessage, got string: json: cannot unmarshal string into Go struct field CfaState.history of type []json.RawMessage`},
		{name: "an older writer's field of another type, said as before", in: `{"state":"DONE","phase":5}`,
			wantErr: `field "phase": want string, got number: json: cannot unmarshal number into Go struct field CfaState.phase of type string`},
		{name: "truncated", in: `{"state":"DO`, wantErr: "invalid JSON"},
		{name: "null", in: `null`, wantErr: "null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseCfa([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || c.State != tt.wantState || c.Outcome() != tt.wantOutcome {
				t.Fatalf("got %+v (%s), %v", c, c.Outcome(), err)
			}
			if !reflect.DeepEqual(c.CfaDetail, tt.wantDetail) {
				t.Errorf("detail %+v, want %+v", c.CfaDetail, tt.wantDetail)
			}
			if kept, err := ParseCfaState([]byte(tt.in), true); err != nil || !reflect.DeepEqual(*kept, c) {
				t.Errorf("with the history: %+v, %v; want %+v", kept, err, c)
			}
			wantOmitted := tt.wantDetail
			if tt.omitted {
				wantOmitted = tt.wantOmitted
			}
			if p, err := ParseCfaState([]byte(tt.in), false); err != nil || p.State != c.State || !reflect.DeepEqual(p.CfaDetail, wantOmitted) {
				t.Errorf("without the history: %+v, %v; want the detail %+v", p, err, wantOmitted)
			}
		})
	}
}

func TestParseRetryCount(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantTotal int
		wantPhase map[string]int
		wantErr   string
	}{
		{name: "object", in: `{"total": 4, "by_phase": {"EXECUTE": 3, "PLAN": 1}}`, wantTotal: 4, wantPhase: map[string]int{"EXECUTE": 3, "PLAN": 1}},
		{name: "bare integer means total", in: "2\n", wantTotal: 2},
		{name: "empty", in: "", wantErr: "empty file"},
		{name: "garbage", in: "two", wantErr: "neither an object nor an integer"},
		{name: "negative", in: "-1", wantErr: "negative"},
		{name: "wrong type names the field", in: `{"total": "3"}`, wantErr: `field "total"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, err := ParseRetryCount([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || rc.Total != tt.wantTotal || len(rc.ByPhase) != len(tt.wantPhase) {
				t.Fatalf("got %+v, %v", rc, err)
			}
			for k, v := range tt.wantPhase {
				if rc.ByPhase[k] != v {
					t.Errorf("by_phase[%s] = %d, want %d", k, rc.ByPhase[k], v)
				}
			}
		})
	}
}

func TestParseBlocked(t *testing.T) {
	tests := []struct {
		name         string
		in           string
		wantQuestion string
		wantContext  string
		wantErr      string
	}{
		{name: "question and kind", in: `{"question":"Which DB?","kind":"choice"}`, wantQuestion: "Which DB?"},
		{name: "object context kept as JSON text", in: `{"question":"q","context":{"a":1}}`, wantQuestion: "q", wantContext: `{"a":1}`},
		{name: "empty", in: "", wantErr: "empty file"},
		{name: "wrong type names the field", in: `{"question": 1}`, wantErr: `field "question"`},
		{name: "not JSON", in: "please help", wantErr: "not a JSON object"},
		{name: "of two fields at fault, the question is named", in: `{"kind": 2, "question": 1}`, wantErr: `field "question": want a string, got 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ParseBlocked([]byte(tt.in))
			if tt.wantErr != "" {
				for range 20 { // the same error every time, whatever the map order
					if _, err := ParseBlocked([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("err = %v, want %q", err, tt.wantErr)
					}
				}
				return
			}
			if err != nil || b.Question != tt.wantQuestion || b.Context != tt.wantContext {
				t.Fatalf("got %+v, %v", b, err)
			}
		})
	}
}

// A registry is streamed: its lines are read up to a budget of bytes (each
// line also charged what holding it costs), and what lies beyond is not read.
func TestReadRegistryStopsAtItsBudget(t *testing.T) {
	line := `{"heartbeat": "c/1/.heartbeat", "team": "t", "task_id": null, "status": "active"}` + "\n"
	tests := []struct {
		name      string
		in        string
		budget    int64
		wantLines int  // lines returned
		wantStop  bool // the budget stopped the read
	}{
		{name: "within the budget every line is read", in: strings.Repeat(line, 100), budget: 1 << 20, wantLines: 100},
		{name: "past the budget the rest is not read", in: strings.Repeat(line, 100_000), budget: 1 << 20,
			wantLines: (1 << 20) / (len(line) + registryLineCost), wantStop: true},
		{name: "one endless line stops at the budget", in: strings.Repeat("x", 10<<20), budget: 1 << 20, wantLines: 0, wantStop: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, err := ReadRegistry(strings.NewReader(tt.in), int64(len(tt.in)), tt.budget)
			var stop *registryBudgetError
			if stopped := errors.As(err, &stop); stopped != tt.wantStop {
				t.Fatalf("err = %v, want stopped %v", err, tt.wantStop)
			}
			if len(lines) != tt.wantLines {
				t.Errorf("%d lines, want %d", len(lines), tt.wantLines)
			}
			if tt.wantStop && (stop.Lines != len(lines) || !strings.Contains(err.Error(), "the rest is not read")) {
				t.Errorf("err = %v after %d lines", err, len(lines))
			}
		})
	}
}

// TestReadRegistryHoldsNoSpareLines: a registry read whole is held as long
// as its node (one per parent at 100,000 nodes), so its slice of lines is
// as long as its lines, a torn last one included.
func TestReadRegistryHoldsNoSpareLines(t *testing.T) {
	line := `{"heartbeat": "c/1/.heartbeat", "team": "t", "task_id": null, "status": "active"}`
	tests := []struct {
		name string
		in   string
		want int
	}{
		{name: "one line", in: line + "\n", want: 1},
		{name: "every line ends", in: strings.Repeat(line+"\n", 10), want: 10},
		{name: "the last line is torn", in: strings.Repeat(line+"\n", 9) + line, want: 10},
		{name: "a blank line", in: line + "\n\n" + line + "\n", want: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, err := ReadRegistry(strings.NewReader(tt.in), int64(len(tt.in)), MaxRegistryRead)
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) != tt.want || cap(lines) != tt.want {
				t.Errorf("%d lines in room for %d, want %d in room for %d", len(lines), cap(lines), tt.want, tt.want)
			}
		})
	}
}

// TestParsersAllocateOnlyForWhatTheyKeep: a scan parses a heartbeat, a CfA
// state and the registry lines of every node; the usual document costs an
// allocation for each value kept (a path, a task id, the history), none for
// the words every node repeats (status, role, team, CfA state) and none for
// reading the document itself.
func TestParsersAllocateOnlyForWhatTheyKeep(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		parse func([]byte) error
		max   float64
	}{
		{name: "heartbeat: the parent's path", max: 1,
			in:    `{"pid": 4242, "parent_heartbeat": "/r/s/.heartbeat", "role": "worker", "started": 1700000000.25, "status": "running"}`,
			parse: func(b []byte) error { _, err := ParseHeartbeat(b); return err }},
		{name: "CfA state: the state with its detail, and its history", max: 3,
			in:    `{"state": "EXECUTE", "history": [{"state": "PLAN"}], "backtrack_count": 0, "task_id": ""}`,
			parse: func(b []byte) error { _, err := ParseCfaState(b, true); return err }},
		{name: "CfA state without its history: the state alone", max: 1,
			in:    `{"state": "EXECUTE", "history": [{"state": "PLAN"}], "backtrack_count": 0, "task_id": ""}`,
			parse: func(b []byte) error { _, err := ParseCfaState(b, false); return err }},
		{name: "registry: one buffer and the list of lines, then each line's entry, path, task id and team", max: 2 + 3*4,
			in: `{"heartbeat": "/r/s/team1/a/.heartbeat", "team": "team1", "task_id": "task-1", "status": "active"}` + "\n" +
				`{"heartbeat": "/r/s/team1/b/.heartbeat", "team": "team1", "task_id": "task-2", "status": "active"}` + "\n" +
				`{"heartbeat": "/r/s/team2/c/.heartbeat", "team": "team2", "task_id": null, "status": "active"}` + "\n",
			parse: func(b []byte) error { ParseRegistry(b); return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := []byte(tt.in)
			if err := tt.parse(b); err != nil {
				t.Fatal(err)
			}
			if got := testing.AllocsPerRun(100, func() { _ = tt.parse(b) }); got > tt.max {
				t.Errorf("%v allocations a parse, want at most %v", got, tt.max)
			}
		})
	}
}
