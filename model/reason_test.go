package model

import (
	"strings"
	"testing"
	"time"
)

func TestFormatAge(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-3 * time.Second, "0s"},
		{0, "0s"},
		{999 * time.Millisecond, "0s"},
		{4 * time.Second, "4s"},
		{12 * time.Second, "12s"},
		{59*time.Second + 900*time.Millisecond, "59s"},
		{time.Minute, "1m00s"},
		{2*time.Minute + 5*time.Second, "2m05s"},
		{3*time.Minute + 12*time.Second, "3m12s"},
		{59*time.Minute + 59*time.Second, "59m59s"},
		{time.Hour + 2*time.Minute, "1h02m"},
		{2*time.Hour + 5*time.Minute + 59*time.Second, "2h05m"},
		{27 * time.Hour, "1d03h"},
		{76 * time.Hour, "3d04h"},
		{400 * 24 * time.Hour, "400d00h"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := FormatAge(tt.d); got != tt.want {
				t.Errorf("FormatAge(%v) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}

// agedNode is a node whose reason is before+age+after, the age the
// classifier wrote at classified for a beat that far back.
func agedNode(before string, beat time.Duration, classified time.Time, after string) *Node {
	age := FormatAge(beat)
	return &Node{
		Reason:    before + age + after,
		ReasonAge: ReasonAge{Since: InstantOf(classified.Add(-beat)), At: int32(len(before)), Len: int32(len(age))},
	}
}

// SPEC §3 "re-evaluate ages on a tick": a reason's beat age is measured
// when it is shown; everything else in it stays as the classifier wrote it.
func TestReasonAtMeasuresItsAgeWhenShown(t *testing.T) {
	classified := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		node  *Node
		later time.Duration // how long after the classification it is shown
		want  string
	}{
		{"as classified, at the classification", agedNode("beating; last beat ", 10*time.Second, classified, " ago"), 0,
			"beating; last beat 10s ago"},
		{"last beat advances", agedNode("pid 7 alive; last beat ", 12*time.Second, classified, " ago"), 28 * time.Second,
			"pid 7 alive; last beat 40s ago"},
		{"minutes", agedNode("beating; last beat ", 10*time.Second, classified, " ago"), time.Minute,
			"beating; last beat 1m10s ago"},
		{"stalled for advances", agedNode("alive but not beating for ", 2*time.Minute, classified, ""), time.Minute + 5*time.Second,
			"alive but not beating for 3m05s"},
		{"what follows the age is kept", agedNode("alive but not beating for ", 2*time.Minute, classified, " (pid 7 unverified)"), 2 * time.Minute,
			"alive but not beating for 4m00s (pid 7 unverified)"},
		{"a note after it is kept", agedNode("alive but not beating for ", 6*time.Minute, classified, "; kill candidate"), 2*time.Hour - 6*time.Minute,
			"alive but not beating for 2h00m; kill candidate"},
		{"legacy sentinel", agedNode("legacy .running written ", 5*time.Second, classified, " ago, pid alive"), 2*time.Hour - 5*time.Second,
			"legacy .running written 2h00m ago, pid alive"},
		{"days", agedNode(".running written ", 5*time.Second, classified, " ago"), 3*24*time.Hour - 5*time.Second,
			".running written 3d00h ago"},
		{"only its own age: an age a question quotes is text", agedNode("waiting for a human: last beat 1s ago?; last beat ", 10*time.Second, classified, " ago"), 21 * time.Second,
			"waiting for a human: last beat 1s ago?; last beat 31s ago"},
		{"only its own age: a phrase after it is text", agedNode("pid 4 gone; last beat ", time.Hour, classified, " ago; waiting for a human: last beat 3s ago?"), time.Minute,
			"pid 4 gone; last beat 1h01m ago; waiting for a human: last beat 3s ago?"},
		{"shown before it was written: 0s", agedNode("beating; last beat ", 0, classified, " ago"), -time.Minute,
			"beating; last beat 0s ago"},
		{"no moving age: as written", &Node{Reason: "alive but not beating for 6m"}, time.Hour,
			"alive but not beating for 6m"},
		{"no moving age: a wall-clock time stays", &Node{Reason: "lead dead since 08:55:01 (2m00s ago); beating"}, time.Hour,
			"lead dead since 08:55:01 (2m00s ago); beating"},
		{"no reason", &Node{}, time.Minute, ""},
		{"an age past the text's end is ignored", &Node{Reason: "last beat 5s ago",
			ReasonAge: ReasonAge{Since: InstantOf(classified), At: 10, Len: 40}}, time.Minute, "last beat 5s ago"},
		{"an age without its moment is ignored", &Node{Reason: "last beat 5s ago",
			ReasonAge: ReasonAge{At: 10, Len: 2}}, time.Minute, "last beat 5s ago"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.node.ReasonAt(classified.Add(tt.later)); got != tt.want {
				t.Errorf("ReasonAt = %q, want %q", got, tt.want)
			}
		})
	}
}

// Rendering never writes to the node: a snapshot is read by many views.
func TestReasonAtLeavesTheNode(t *testing.T) {
	classified := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
	n := agedNode("beating; last beat ", 10*time.Second, classified, " ago")
	before := *n
	if got := n.ReasonAt(classified.Add(time.Hour)); !strings.Contains(got, "1h00m") {
		t.Fatalf("ReasonAt = %q", got)
	}
	if n.Reason != before.Reason || n.ReasonAge != before.ReasonAge {
		t.Errorf("node changed: %+v -> %+v", before, *n)
	}
}
