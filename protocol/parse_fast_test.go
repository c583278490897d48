package protocol

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
)

// The fast reading (parse_fast.go) answers for the usual document or gives it
// up; what it answers must be what the plain reading (parse_*.go, the
// definition) answers. These tests, and the fuzz targets, hold the two
// equal; the ones below also say which documents the fast reading takes,
// so a budget of SPEC §8 does not quietly fall back to the plain one.

// heartbeatFast is ParseHeartbeat's fast reading alone.
func heartbeatFast(b []byte) (model.Heartbeat, bool) {
	var vals [hbRows]fieldValue
	present, ok := readFast(b, heartbeatFields[:], refuseUnknown, vals[:])
	if !ok {
		return model.Heartbeat{}, false
	}
	return heartbeatOf(&vals, present, nil), true
}

// childEntryFast is a registry line's fast reading alone.
func childEntryFast(b []byte) (*model.ChildEntry, bool) {
	var vals [ceRows]fieldValue
	present, ok := readFast(b, childEntryFields[:], skipUnknown, vals[:])
	if !ok || vals[ceHeartbeat].text == "" {
		return nil, false
	}
	return childEntryOf(&vals, present), true
}

// cfaFast and cfaPlain are ParseCfaState's two readings, each alone.
func cfaFast(b []byte, keepHistory bool) (*model.CfaState, bool) {
	var f cfaFile
	present, ok := readCfaFast(b, keepHistory, &f)
	if !ok {
		return nil, false
	}
	if !keepHistory {
		present &^= 1 << cfaHistory
	}
	return cfaStateOf(&f, present), true
}

func cfaPlain(b []byte, keepHistory bool) (*model.CfaState, error) {
	f, present, err := parseCfaPlain(b)
	if err != nil {
		return nil, err
	}
	if !keepHistory {
		f.History, present = nil, present&^(1<<cfaHistory)
	}
	return cfaStateOf(&f, present), nil
}

func TestTheFastReadingIsThePlainOneOrGivesUp(t *testing.T) {
	tests := []struct {
		name   string
		format string // heartbeat, line, cfa
		in     string
		fast   bool // the fast reading takes it
	}{
		{"heartbeat: the five fields", "heartbeat", `{"pid": 7, "parent_heartbeat": "/r/.heartbeat", "role": "lead", "started": 1.5, "status": "running"}`, true},
		{"heartbeat: every field, nulls", "heartbeat", `{"pid": null, "parent_heartbeat": null, "role": null, "started": null, "status": null, "team": null, "task_id": null, "worktree": null}`, true},
		{"heartbeat: a numeric task id, as written", "heartbeat", `{"task_id": 12.50, "team": "t", "worktree": "/w"}`, true},
		{"heartbeat: an unknown field goes to Extra", "heartbeat", `{"pid": 7, "host": "h"}`, false},
		{"heartbeat: an escaped string", "heartbeat", `{"status": "r\u0075nning"}`, false},
		{"heartbeat: a pid written 77.0", "heartbeat", `{"pid": 77.0}`, false},
		{"heartbeat: a pid past 32 bits", "heartbeat", `{"pid": 2147483648}`, false},
		{"heartbeat: a negative pid", "heartbeat", `{"pid": -1, "status": "running"}`, false},
		{"heartbeat: a key given twice", "heartbeat", `{"pid": 1, "pid": 2}`, false},
		{"heartbeat: a key in another case is another key", "heartbeat", `{"Pid": 1}`, false},
		{"heartbeat: a start out of range", "heartbeat", `{"started": 1e400}`, false},
		{"line: the usual", "line", `{"heartbeat": "a/.heartbeat", "team": "t", "task_id": 7, "status": "active", "worktree": "/w"}`, true},
		{"line: others skipped, as the plain reading skips them", "line", `{"heartbeat": "a", "Team": "x", "extra": [{}], "team": null}`, true},
		{"line: a null task id", "line", `{"heartbeat": "a", "task_id": null}`, true},
		{"line: no heartbeat", "line", `{"team": "t"}`, false},
		{"line: a null heartbeat", "line", `{"heartbeat": null}`, false},
		{"line: a key given twice", "line", `{"heartbeat": "a", "heartbeat": "b"}`, false},
		{"line: an escaped key", "line", `{"heart\u0062eat": "a"}`, false},
		{"cfa: the usual", "cfa", `{"state": "EXECUTE", "history": [{"state": "PLAN"}, 2], "backtrack_count": 1, "task_id": "t"}`, true},
		{"cfa: an older writer's fields", "cfa", `{"state": "EXECUTE", "phase": "p", "actor": "a", "parent_id": "x", "team_id": null, "depth": 2}`, true},
		{"cfa: a null history", "cfa", `{"state": "DONE", "history": null}`, true},
		{"cfa: an empty history", "cfa", `{"state": "DONE", "history": [ ]}`, true},
		{"cfa: an unknown key skipped", "cfa", `{"state": "DONE", "other": {"nested": [1]}}`, true},
		{"cfa: a key in another case", "cfa", `{"State": "DONE"}`, false},
		{"cfa: a key Unicode folds to one", "cfa", "{\"\u017ftate\": \"DONE\"}", false},
		{"cfa: a count written 1e2", "cfa", `{"backtrack_count": 1e2}`, false},
		{"cfa: a count past 64 bits", "cfa", `{"backtrack_count": 9223372036854775808}`, false},
		{"cfa: a history of another type", "cfa", `{"history": "x"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := []byte(tt.in)
			var fast, plain any
			var ok bool
			var err error
			switch tt.format {
			case "heartbeat":
				fast, ok = heartbeatFast(b)
				plain, err = parseHeartbeatPlain(b)
			case "line":
				fast, ok = childEntryFast(b)
				plain, err = parseChildEntryPlain(b)
			case "cfa":
				for _, keep := range []bool{false, true} {
					f, fok := cfaFast(b, keep)
					p, perr := cfaPlain(b, keep)
					if fok && (perr != nil || !reflect.DeepEqual(f, p)) {
						t.Errorf("keep history %v: fast %+v, plain %+v (%v)", keep, f, p, perr)
					}
					fast, ok, plain, err = f, fok, p, perr
				}
			}
			if ok != tt.fast {
				t.Errorf("the fast reading took it: %v, want %v", ok, tt.fast)
			}
			if ok && (err != nil || !reflect.DeepEqual(fast, plain)) {
				t.Errorf("fast %+v, plain %+v (%v)", fast, plain, err)
			}
		})
	}
}

// TestTheCfaTableIsTheStructThePlainReadingDecodes: a CfA field is one row
// of cfaFields and one field of cfaFile, in the same order, of the same
// kind; a row without its field (or the reverse) fails here.
func TestTheCfaTableIsTheStructThePlainReadingDecodes(t *testing.T) {
	kinds := map[reflect.Type]fieldKind{
		reflect.TypeFor[string]():            text,
		reflect.TypeFor[int]():               integer,
		reflect.TypeFor[[]json.RawMessage](): list,
	}
	st := reflect.TypeFor[cfaFile]()
	if st.NumField() != len(cfaFields) {
		t.Fatalf("cfaFile has %d fields, the table %d rows", st.NumField(), len(cfaFields))
	}
	for i, row := range cfaFields {
		sf := st.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name != row.name || kinds[sf.Type] != row.kind {
			t.Errorf("row %d is %q of kind %d, the struct's field %s is %q of type %s", i, row.name, row.kind, sf.Name, name, sf.Type)
		}
	}
}

// Every table fits the fast reading's mask of given rows.
func TestTheTablesFitTheMaskOfGivenRows(t *testing.T) {
	for name, n := range map[string]int{"heartbeat": len(heartbeatFields), "registry line": len(childEntryFields), "cfa": len(cfaFields), "blocked": len(blockedFields)} {
		if n > 32 {
			t.Errorf("%s: %d rows, more than 32", name, n)
		}
	}
}
