package claudecode

import (
	"reflect"
	"testing"

	"github.com/dispatchtop/dispatchtop/sources"
)

// The fast path decodes a record as the plain decoder does, field by field,
// or leaves it to the plain decoder: when it is taken, the plain decoder
// gives the same record and no problem.
func FuzzDecodeFastIsDecodeFields(f *testing.F) {
	for _, seed := range []string{
		`{"pid": 4242, "sessionId": "s", "procStart": "123", "status": "busy"}`,
		`{"pid": 4242, "procStart": 12, "status": "waiting", "waitingFor": "approve Bash", "statusUpdatedAt": 1.5e12}`,
		`{"procStart": null, "pid": null, "name": "a, {b} [c]", "nested": {"x": [1, {"y": "}"}]}}`,
		`{"PID": 4242, "pid": 1}`,
		`{"pid": "4242", "status": "busy"}`,
		`{"pid": 1, "pid": "x"}`,
		`{"pid": 1e100}`,
		`{"st\u0061tus": "busy"}`,
		`{"ſessionId": "s"}`,
		`{"state": "blocked", "sessionId": "s", "updatedAt": "2026-11-26T10:00:00Z"}`,
		`{"leadSessionId": "s", "members": [{"name": "a", "tmuxPaneId": "in-process", "isActive": false}]}`,
		`{"members": null}`,
		`{"name": "a", "isActive": "yes", "joinedAt": 1.7e12}`,
		`{"name": "a\\"b\\u00e9", "cwd": "/w\\/x", "startedAt": 1e400}`,
		"{\"name\": \"\xff\xfe\", \"startedAt\": \"1.7e12\"}",
		`{"name": "n", "updatedAt": -0.5E+3 , "status" : "busy" }`,
		`{"sessionId": "s", "sessionId": null, "name": "a", "name": "b", "procStart": 12, "procStart": null}`,
		`null`, `[]`, `{}`, ` { } `, `{"pid": 1} x`, `{"pid": 1,}`, `{"pid"}`, `"text"`,
	} {
		f.Add(seed)
	}
	types := []func() any{
		func() any { return new(sessionFile) },
		func() any { return new(jobFile) },
		func() any { return new(teamFile) },
		func() any { return new(teamMember) },
	}
	f.Fuzz(func(t *testing.T, content string) {
		for _, newRecord := range types {
			fast := newRecord()
			if !decodeFast([]byte(content), fast) {
				if !reflect.ValueOf(fast).Elem().IsZero() {
					t.Errorf("%T: not taken, and the record is not left zero: %+v", fast, fast)
				}
				continue
			}
			r := reader{facts: &sources.Facts{}}
			plain := newRecord()
			err := r.decodePlain("f.json", []byte(content), plain)
			if err != nil || len(r.facts.Problems) > 0 {
				t.Errorf("%T %q: the fast path took what the plain decoder refuses: %v %v", fast, content, err, r.facts.Problems)
				continue
			}
			if !reflect.DeepEqual(fast, plain) {
				t.Errorf("%T %q: fast %+v, plain %+v", fast, content, fast, plain)
			}
		}
	})
}

// Claude Code's records as it writes them take the fast path.
func TestDecodeFastTakesClaudeCodesRecords(t *testing.T) {
	for _, tc := range []struct {
		record  string
		newType func() any
	}{
		{`{"pid":4242,"procStart":"123","startedAt":1.7e12,"sessionId":"s","cwd":"/w","kind":"interactive","status":"busy","updatedAt":1.7e12,"name":"n"}`, func() any { return new(sessionFile) }},
		{`{"state":"working","sessionId":"s","name":"j","updatedAt":"2026-11-26T10:00:00Z"}`, func() any { return new(jobFile) }},
		{`{"name":"t","leadSessionId":"s","members":[{"name":"a"}]}`, func() any { return new(teamFile) }},
		{`{"agentId":"a@t","name":"a","tmuxPaneId":"in-process","backendType":"in-process","isActive":true,"joinedAt":1.7e12}`, func() any { return new(teamMember) }},
	} {
		if !decodeFast([]byte(tc.record), tc.newType()) {
			t.Errorf("%s: the fast path not taken", tc.record)
		}
	}
}
