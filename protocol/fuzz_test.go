package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
)

// The fuzz targets check that no input panics and that the parsers keep
// their promises; the committed seed corpus under testdata/fuzz runs as a
// plain test.

func FuzzHeartbeat(f *testing.F) {
	f.Add([]byte(`{"pid": 42, "parent_heartbeat": "", "role": "lead", "started": 1.5, "status": "running"}`))
	f.Add([]byte(`{"pid": 42, "pid": 43}`))
	f.Add([]byte(`{"pid": 2147483648, "task_id": 12.50}`))
	f.Add([]byte(`{"pid": -0, "started": 1e400}`))
	f.Add([]byte(`{"parent_heartbeat": "x", "parent_heartbeat": null}`))
	f.Add([]byte(`{"Pid": 1}`))
	f.Add([]byte(`{"role": "l\u0065ad", "team": "t", "worktree": "/w", "task_id": null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		hb, err := ParseHeartbeat(b)
		if hb.PID < 0 {
			t.Fatalf("negative pid %d accepted (err %v)", hb.PID, err)
		}
		var bad *BadFieldsError
		if err != nil && !errors.As(err, &bad) && !reflect.DeepEqual(hb, model.Heartbeat{}) {
			t.Fatalf("document error %v with fields %+v", err, hb)
		}
		// The fast reading must agree with the plain one.
		if fast, ok := heartbeatFast(b); ok {
			plain, err := parseHeartbeatPlain(b)
			if err != nil || !reflect.DeepEqual(fast, plain) {
				t.Fatalf("fast %+v, plain %+v (%v)", fast, plain, err)
			}
		}
	})
}

func FuzzRegistry(f *testing.F) {
	f.Add([]byte("{\"heartbeat\":\"a/.heartbeat\",\"status\":\"active\"}\n{\"heart"))
	f.Add([]byte(`{"heartbeat":"a","task_id":7,"Team":"x","extra":[{}],"team":null}`))
	f.Add([]byte(`{"heartbeat":"a","heartbeat":"b"}`))
	f.Add([]byte(`{"heart\u0062eat":"a","task_id":"\u0041"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		// The fast reading must agree with the plain one.
		if body := bytes.TrimSpace(b); len(body) > 0 {
			if fast, ok := childEntryFast(body); ok {
				if plain, err := parseChildEntryPlain(body); err != nil || !reflect.DeepEqual(fast, plain) {
					t.Fatalf("fast %+v, plain %+v (%v)", fast, plain, err)
				}
			}
		}
		lines := ParseRegistry(b)
		// Read whole (the size known) or streamed (no size), with a budget
		// that may stop either: the same lines and the same stop.
		budget := int64(len(b)) * 2 / 3
		whole, werr := ReadRegistry(bytes.NewReader(b), int64(len(b)), budget)
		streamed, serr := ReadRegistry(bytes.NewReader(b), -1, budget)
		if !reflect.DeepEqual(whole, streamed) || fmt.Sprint(werr) != fmt.Sprint(serr) {
			t.Fatalf("whole %+v (%v), streamed %+v (%v)", whole, werr, streamed, serr)
		}
		for _, l := range lines {
			body := bytes.TrimSpace(l.Raw)
			if l.Entry == nil || len(body) == 0 {
				continue
			}
			// Whichever reading read it, the plain one reads the same.
			if plain, err := parseChildEntryPlain(body); err != nil || !reflect.DeepEqual(l.Entry, plain) {
				t.Fatalf("line %d: %+v, plain %+v (%v)", l.Number, *l.Entry, plain, err)
			}
		}
		// Raw bytes plus newlines rebuild the input when no line was capped.
		var rebuilt []byte
		for i, l := range lines {
			if int(l.Number) != i+1 {
				t.Fatalf("line %d numbered %d", i+1, l.Number)
			}
			if l.Torn && i != len(lines)-1 {
				t.Fatalf("torn line %d is not the last", l.Number)
			}
			if (l.Entry == nil) == (l.Err == "") {
				t.Fatalf("line %d: entry %v with err %q", l.Number, l.Entry, l.Err)
			}
			rebuilt = append(rebuilt, l.Raw...)
			if !l.Torn {
				rebuilt = append(rebuilt, '\n')
			}
		}
		if len(b) < MaxRegistryLine && !bytes.Equal(rebuilt, b) {
			t.Fatalf("raw lines rebuild %q, want %q", rebuilt, b)
		}
	})
}

func FuzzCfa(f *testing.F) {
	f.Add([]byte(`{"state":"DONE","history":[],"backtrack_count":0,"task_id":"x"}`))
	for _, seed := range cfaSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCfa(b)
		if err != nil && c.State != "" {
			t.Fatalf("error %v with a state %q", err, c.State)
		}
		// Without the history, the same state, and no history.
		if p, perr := ParseCfaState(b, false); (perr == nil) != (err == nil) {
			t.Fatalf("without the history: error %v, with it %v", perr, err)
		} else if perr == nil && (p.State != c.State || p.BacktrackCount != c.BacktrackCount || p.TaskID != c.TaskID || p.CfaDetail != nil && p.History != nil) {
			t.Fatalf("without the history %+v, with it %+v", *p, c)
		}
		// Either reading, with its history, is encoding/json's reading
		// of a model.CfaState.
		if err == nil {
			var want model.CfaState
			if jerr := json.Unmarshal(b, &want); jerr != nil || !reflect.DeepEqual(c, want) {
				t.Fatalf("read %+v, encoding/json %+v (%v)", c, want, jerr)
			}
		}
		// The fast reading must agree with the plain one, with the history
		// and without.
		for _, keep := range []bool{true, false} {
			if fast, ok := cfaFast(b, keep); ok {
				plain, err := cfaPlain(b, keep)
				if err != nil || !reflect.DeepEqual(fast, plain) {
					t.Fatalf("keep history %v: fast %+v, plain %+v (%v)", keep, fast, plain, err)
				}
			}
		}
	})
}

// FuzzFlatObject holds the reader of the fast reading to encoding/json: an
// object it reads whole is valid JSON, and its members are the ones
// encoding/json finds, with the same values (the last of a key given
// twice).
func FuzzFlatObject(f *testing.F) {
	for _, seed := range append(append([]string{}, cfaSeeds...), flatSeeds...) {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := map[string]flatValue{}
		o := openObject(b)
		for {
			key, v, ok := o.next()
			if !ok {
				break
			}
			got[string(key)] = v
		}
		if !o.done() {
			return
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(b, &want); err != nil || want == nil {
			t.Fatalf("read as an object, but encoding/json says %v (%v)", err, want)
		}
		if len(got) != len(want) {
			t.Fatalf("members %d, encoding/json %d", len(got), len(want))
		}
		for k, v := range got {
			raw, ok := want[k]
			if !ok {
				t.Fatalf("member %q not in encoding/json's", k)
			}
			switch {
			case v.kind == kindString && !v.escaped:
				var s string
				if err := json.Unmarshal(raw, &s); err != nil || s != string(v.raw) {
					t.Fatalf("member %q = %q, encoding/json %q (%v)", k, v.raw, s, err)
				}
			default: // the text itself: numbers, literals, containers, escaped strings
				if !bytes.Equal(v.raw, raw) {
					t.Fatalf("member %q = %s, encoding/json %s", k, v.raw, raw)
				}
			}
		}
	})
}

// cfaSeeds and flatSeeds are inputs at the edges of the fast reading: keys in
// another case (encoding/json matches them to fields), escapes, invalid
// UTF-8, keys given twice, odd numbers and nesting.
var cfaSeeds = []string{
	`{"State":"DONE"}`,
	`{"\u017ftate":"DONE"}`,
	"{\"\u017ftate\":\"DONE\"}",
	"{\"\xc5\xbftate\":\"DONE\"}",
	`{"state":"DONE","state":"FAILURE"}`,
	`{"state":"D\u004fNE","history":[1, "two", {"three": [3]}, null, true]}`,
	`{"history":[ ],"backtrack_count":1e2}`,
	`{"history":null,"depth":-0,"backtrack_count":9223372036854775807}`,
	`{"backtrack_count":9223372036854775808}`,
	`{"backtrack_count":1.0}`,
	`{"state":null,"task_id":null,"phase":"p","actor":"a","parent_id":"x","team_id":"y"}`,
	`{"state":"DONE"} x`,
	`{"state":"DONE"}` + "\n\t ",
	`{"other":{"nested":[{"a":1}]},"state":"EXECUTE"}`,
	"{\"state\":\"\xff\"}",
	// Keys encoding/json matches to a field by Unicode's folding (a
	// Kelvin sign) or does not (a dotless i): the plain reading's detail
	// follows it.
	"{\"h\u0131story\":[1],\"state\":\"DONE\"}",
	"{\"h\u0131story\":null}",
	"{\"bac\u212atrack_count\":1,\"\u212aey\":2,\"depth\":null}",
	"{\"PHASE\":null,\"x\u0041\":1}",
	"{\"state\":\"a\x01\"}",
}

var flatSeeds = []string{
	`{}`,
	` { } `,
	`{"a":1,}`,
	`{"a" 1}`,
	`{"a":01}`,
	`{"a":-}`,
	`{"a":1.}`,
	`{"a":1e}`,
	`{"a":"\x"}`,
	`{"a":"\u12"}`,
	`{"a":"\ud800"}`,
	`{"a":[1,2,]}`,
	`{"a":{"b":}}`,
	`{"a":tru}`,
	`{"a":nul`,
	`{"a":true,"b":false,"c":null,"a":"again"}`,
	`[1]`,
	`{"a":1}{}`,
	`{"pid": 42, "parent_heartbeat": "", "role": "lead", "started": 1.5, "status": "running"}`,
}

func FuzzRetryCount(f *testing.F) {
	f.Add([]byte(`{"total": 2, "by_phase": {"EXECUTE": 2}}`))
	f.Add([]byte("3"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rc, err := ParseRetryCount(b)
		if err == nil && rc.Total < 0 {
			t.Fatalf("negative total %d accepted", rc.Total)
		}
	})
}

func FuzzBlocked(f *testing.F) {
	f.Add([]byte(`{"question":"Which DB?","context":"ctx","kind":"choice"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		bl, err := ParseBlocked(b)
		if err != nil && bl.Question != "" {
			t.Fatalf("error %v with a question %q", err, bl.Question)
		}
	})
}
