package protocol

// The `.heartbeat` (SPEC §1): its fields, its plain reading (the
// definition) and what a heartbeat keeps of each.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dispatchtop/dispatchtop/model"
)

// The heartbeat's fields, one row each.
const (
	hbPID = iota
	hbParent
	hbRole
	hbStarted
	hbStatus
	hbTeam
	hbTaskID
	hbWorktree
	hbRows
)

var heartbeatFields = [hbRows]fieldSpec{
	hbPID:      {"pid", pid},
	hbParent:   {"parent_heartbeat", text},
	hbRole:     {"role", text},
	hbStarted:  {"started", number},
	hbStatus:   {"status", text},
	hbTeam:     {"team", text},
	hbTaskID:   {"task_id", id},
	hbWorktree: {"worktree", text},
}

// heartbeatOf keeps what was read of each field: a field not read (absent,
// null or at fault) is left zero.
func heartbeatOf(vals *[hbRows]fieldValue, present uint32, extra map[string]json.RawMessage) model.Heartbeat {
	has := func(row int) bool { return present&(1<<row) != 0 && !vals[row].null }
	hb := model.Heartbeat{
		PID:             vals[hbPID].n,
		ParentHeartbeat: vals[hbParent].text,
		Role:            vals[hbRole].text,
		Started:         vals[hbStarted].f,
		Status:          vals[hbStatus].text,
		HasParentField:  has(hbParent),
		HasStatusField:  has(hbStatus),
	}
	hb.SetOptional(model.HeartbeatOptional{
		Team:     vals[hbTeam].text,
		TaskID:   vals[hbTaskID].text,
		Worktree: vals[hbWorktree].text,
		Extra:    extra,
	})
	return hb
}

// ParseHeartbeat parses a `.heartbeat`. Unknown fields are kept verbatim in
// Extra; null is accepted for every field and means "not set". A document
// that is not a JSON object is an error and gives a zero heartbeat. A known
// field of the wrong type (`"pid": "abc"`), or a negative pid, is left zero
// and named in a *BadFieldsError, returned beside a heartbeat that holds
// every other field: one bad field must not hide the status, role and parent
// that were written correctly (SPEC §3 `unreadable`: the state comes from
// what could be read), and no negative pid ever reaches the probe or the
// kill path.
func ParseHeartbeat(b []byte) (model.Heartbeat, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return model.Heartbeat{}, errEmpty
	}
	var vals [hbRows]fieldValue
	if present, ok := readFast(b, heartbeatFields[:], refuseUnknown, vals[:]); ok {
		return heartbeatOf(&vals, present, nil), nil
	}
	return parseHeartbeatPlain(b)
}

// BadFieldsError names the heartbeat fields that could not be read, in name
// order; the heartbeat returned with it holds the others.
type BadFieldsError struct {
	Fields []error // each says `field "name": why`
}

func (e *BadFieldsError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Error()
	}
	return strings.Join(parts, "; ")
}

// parseHeartbeatPlain is the heartbeat's definition: encoding/json's
// reading of each field by its row, every other field kept in Extra, and a
// field at fault named in a *BadFieldsError.
func parseHeartbeatPlain(b []byte) (model.Heartbeat, error) {
	var vals [hbRows]fieldValue
	present, bad, members, err := readPlain(b, heartbeatFields[:], vals[:])
	if err != nil {
		return model.Heartbeat{}, err
	}
	var extra map[string]json.RawMessage
	for name, raw := range members {
		if fieldIndex(heartbeatFields[:], []byte(name)) < 0 {
			if extra == nil {
				extra = map[string]json.RawMessage{}
			}
			extra[name] = raw
		}
	}
	hb := heartbeatOf(&vals, present, extra)
	if len(bad) == 0 {
		return hb, nil
	}
	slices.SortFunc(bad, func(a, b fieldError) int { return strings.Compare(a.name, b.name) })
	e := &BadFieldsError{Fields: make([]error, len(bad))}
	for i, f := range bad {
		e.Fields[i] = fmt.Errorf("field %q: %w", f.name, f.err)
	}
	return hb, e
}
