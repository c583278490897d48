package claudecode

import (
	"encoding/json"
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
		`{"members": null}`, `{"members": []}`, `{"members": [ ]}`, `{"members": [1, "a" , [{}], null ]}`, `{"members": {}}`, `{"members": "x"}`,
		`{"name": "a", "isActive": "yes", "joinedAt": 1.7e12}`,
		`{"name": "a\\"b\\u00e9", "cwd": "/w\\/x", "startedAt": 1e400}`,
		"{\"name\": \"\xff\xfe\", \"startedAt\": \"1.7e12\"}",
		`{"name": "n", "updatedAt": -0.5E+3 , "status" : "busy" }`,
		`{"sessionId": "s", "sessionId": null, "name": "a", "name": "b", "procStart": 12, "procStart": null}`,
		`{"pid": 1.0, "procStart": [1, {"a" : " x "}] }`, `{"pid": -0, "procStart": "1"}`, `{"pid": 99999999999999999999}`, `{"pid": 1e3}`,
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

// validValue reads as JSON exactly what json.Valid takes, but for a value
// nested deeper than maxDepth, which it leaves to the plain decoder.
func FuzzValidValueIsJSONValid(f *testing.F) {
	for _, seed := range []string{
		`{"pid": 4242, "name": "a, {b} [c]", "nested": {"x": [1, {"y": "}"}]}}`,
		`[1, 2.5, -0, -0.0e+1, 1E9, true, false, null, "a\"\\\/\b\f\n\r\t\u00e9"]`,
		`01`, `1.`, `-`, `.5`, `1e`, `1e+`, `+1`, `"\x"`, `"\u12g4"`, `"a` + "\x01" + `"`, `tru`, `nul`, `[1,]`, `{"a" 1}`,
		`{"a":1,}`, `[`, `{`, `"`, `[[[[]]]]`, ` 1 `, "\xff", `"\xff"`, `{"a":1}}`, `[1]]`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, content string) {
		b := []byte(content)
		end := validValue(b, skipSpace(b, 0), 0)
		got := end >= 0 && skipSpace(b, end) == len(b)
		want := json.Valid(b)
		if got && !want {
			t.Errorf("%q: validValue takes what json.Valid refuses", content)
		}
		if want && !got && nesting(b) <= maxDepth {
			t.Errorf("%q: validValue refuses what json.Valid takes, %d deep", content, nesting(b))
		}
	})
}

// nesting is how deep the arrays and objects of the valid JSON b nest.
func nesting(b []byte) int {
	depth, most, inString := 0, 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			most = max(most, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return most
}

// A record is decoded in one pass that lists no members first: what a
// record costs in allocations is its copy as a string, its fields'
// arrays, and none for the members' list (1 KiB a record before).
func TestDecodeFastAllocatesNoMemberList(t *testing.T) {
	tests := []struct {
		name    string
		record  string
		newType func() any
		// most is the allocations a decode may make: the record's copy,
		// the strings' array, the numbers' arrays or the list of items,
		// the record itself.
		most float64
	}{
		{"a session", `{"pid":4242,"procStart":"123","startedAt":1.7e12,"sessionId":"s","cwd":"/w","kind":"interactive","status":"busy","updatedAt":1.7e12,"name":"n"}`, func() any { return new(sessionFile) }, 5},
		{"a team of four, its members' items in place", `{"name":"t","leadSessionId":"s","members":[{"agentId":"team-lead@t","name":"team-lead"},{"agentId":"m0@t","name":"m0","isActive":true}, {"agentId":"m1@t","name":"m1"} ,{"agentId":"m2@t","name":"m2","isActive":false}]}`, func() any { return new(teamFile) }, 4},
		{"a job", `{"state":"working","sessionId":"s","name":"j","intent":"run","cwd":"/w","createdAt":"2026-11-26T10:00:00Z","updatedAt":"2026-11-26T10:00:00Z","cliVersion":"2.1.278"}`, func() any { return new(jobFile) }, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := []byte(tt.record)
			var ok bool
			allocs := testing.AllocsPerRun(100, func() { ok = decodeFast(b, tt.newType()) })
			if !ok {
				t.Fatalf("%s: the fast path not taken", tt.record)
			}
			if allocs > tt.most {
				t.Errorf("a decode costs %.0f allocations, want at most %.0f", allocs, tt.most)
			}
		})
	}
}

// A key that names a field exactly, in a record whose other field's name
// is the same but for case, or a key that names one but for case, is left
// to the plain decoder: encoding/json would take either for the field it
// folds to.
func TestDecodeFastLeavesCaseFoldedKeysToThePlainDecoder(t *testing.T) {
	type twins struct {
		Lower *string `json:"name"`
		Upper *string `json:"Name"`
		Other *string `json:"other"`
	}
	for _, tc := range []struct {
		record string
		taken  bool
	}{
		{`{"other": "x"}`, true},
		{`{"OTHER": "x"}`, false},
		{`{"oTher": "x"}`, false},
		{`{"name": "x"}`, false},
		{`{"Name": "x"}`, false},
		{`{"unknown": "x"}`, true},
	} {
		if got := decodeFast([]byte(tc.record), new(twins)); got != tc.taken {
			t.Errorf("%s: taken %v, want %v", tc.record, got, tc.taken)
		}
	}
}

// A record type's fields are found by their names, whichever share a
// slot, and no other key is.
func TestFindNamesEveryFieldAndNoOther(t *testing.T) {
	type sharing struct { // "ab" and "eV" share a slot
		A *string `json:"ab"`
		B *string `json:"ab2"`
		C *string `json:"eV"`
	}
	if slotOf("ab") != slotOf("eV") {
		t.Fatal("the names meant to share a slot do not")
	}
	for _, rt := range []reflect.Type{reflect.TypeFor[sessionFile](), reflect.TypeFor[jobFile](), reflect.TypeFor[teamFile](),
		reflect.TypeFor[teamMember](), reflect.TypeFor[sharing]()} {
		tf := fieldsOf(rt)
		for i, name := range tf.names {
			if name == "" {
				continue
			}
			if got, ok := tf.find([]byte(name)); !ok || got != i {
				t.Errorf("%v: find(%q) = %d, %v, want %d", rt, name, got, ok, i)
			}
			for _, other := range []string{name + "x", "x" + name, name[:len(name)-1]} {
				if j, ok := tf.find([]byte(other)); ok && tf.names[j] != other {
					t.Errorf("%v: find(%q) = %q", rt, other, tf.names[j])
				}
			}
		}
		if _, ok := tf.find(nil); ok {
			t.Errorf("%v: the empty key found", rt)
		}
	}
}
