package model

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A heartbeat without optional fields reads zero ones, holds none, and is
// given none for zero ones; given some, it holds them.
func TestHeartbeatOptionalFieldsAreHeldOnlyWhenGiven(t *testing.T) {
	var hb Heartbeat
	if o := hb.Optional(); o.Team != "" || o.TaskID != "" || o.Worktree != "" || o.Extra != nil {
		t.Errorf("a heartbeat without optional fields reads %+v", *o)
	}
	hb.SetOptional(HeartbeatOptional{})
	if hb.HeartbeatOptional != nil {
		t.Errorf("zero optional fields are held: %+v", *hb.HeartbeatOptional)
	}
	want := HeartbeatOptional{Team: "t", TaskID: "7", Worktree: "/w", Extra: map[string]json.RawMessage{"host": json.RawMessage(`"box"`)}}
	hb.SetOptional(want)
	if got := hb.Optional(); !reflect.DeepEqual(*got, want) {
		t.Errorf("optional fields %+v, want %+v", *got, want)
	}
}
