package model

import (
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"
)

// TestCfaStateFitsItsSizeClass: nearly every node holds a CfaState (SPEC
// §8's budget). What the classifier does not read is behind
// CfaState.CfaDetail: the history, which only a scan that keeps the files'
// bytes keeps, and what older writers also wrote, which few files name. It
// was 136 bytes, in the 144-byte size class; it is 48.
func TestCfaStateFitsItsSizeClass(t *testing.T) {
	const sizeClass = 48
	if got := unsafe.Sizeof(CfaState{}); got > sizeClass {
		t.Errorf("a CfaState is %d bytes, past the %d-byte size class", got, sizeClass)
	}
}

// TestHeartbeatFitsItsSizeClass: every node holds its Heartbeat (SPEC §8's
// budget), and most heartbeats have only the five fields every writer
// writes: what some add is behind Heartbeat.HeartbeatOptional. It was 128
// bytes; it is 80.
func TestHeartbeatFitsItsSizeClass(t *testing.T) {
	const sizeClass = 80
	if got := unsafe.Sizeof(Heartbeat{}); got > sizeClass {
		t.Errorf("a Heartbeat is %d bytes, past the %d-byte size class", got, sizeClass)
	}
}

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

// TestRegistryLineIs56Bytes: every registered node has its line in its
// parent's registry (SPEC §8's budget); a line's number and its torn mark
// share a word, so a line is 56 bytes, not 64.
func TestRegistryLineIs56Bytes(t *testing.T) {
	if got := unsafe.Sizeof(RegistryLine{}); got > 56 {
		t.Errorf("a registry line is %d bytes, past 56", got)
	}
}
