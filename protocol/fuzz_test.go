package protocol

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
)

// The fuzz targets check that no input panics and that the parsers keep
// their promises; the committed seed corpus under testdata/fuzz runs as a
// plain test.

func FuzzHeartbeat(f *testing.F) {
	f.Add([]byte(`{"pid": 42, "parent_heartbeat": "", "role": "lead", "started": 1.5, "status": "running"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		hb, err := ParseHeartbeat(b)
		if hb.PID < 0 {
			t.Fatalf("negative pid %d accepted (err %v)", hb.PID, err)
		}
		var bad *BadFieldsError
		if err != nil && !errors.As(err, &bad) && !reflect.DeepEqual(hb, model.Heartbeat{}) {
			t.Fatalf("document error %v with fields %+v", err, hb)
		}
		// The fast path must agree with the field-by-field one.
		if fast, ok := parseHeartbeatFast(b); ok {
			slow, err := parseHeartbeatSlow(b)
			if err != nil || !reflect.DeepEqual(fast, slow) {
				t.Fatalf("fast %+v, slow %+v (%v)", fast, slow, err)
			}
		}
	})
}

func FuzzRegistry(f *testing.F) {
	f.Add([]byte("{\"heartbeat\":\"a/.heartbeat\",\"status\":\"active\"}\n{\"heart"))
	f.Fuzz(func(t *testing.T, b []byte) {
		lines := ParseRegistry(b)
		for _, l := range lines {
			body := bytes.TrimSpace(l.Raw)
			if l.Entry == nil || len(body) == 0 {
				continue
			}
			// The fast path must agree with the field-by-field one.
			if slow, err := parseChildEntrySlow(body); err != nil || !reflect.DeepEqual(*l.Entry, slow) {
				t.Fatalf("line %d: fast %+v, slow %+v (%v)", l.Number, *l.Entry, slow, err)
			}
		}
		// Raw bytes plus newlines rebuild the input when no line was capped.
		var rebuilt []byte
		for i, l := range lines {
			if l.Number != i+1 {
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
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCfa(b)
		if err != nil && c.State != "" {
			t.Fatalf("error %v with a state %q", err, c.State)
		}
	})
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
