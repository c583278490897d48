package ui

import (
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §3 "re-evaluate ages on a tick": between snapshots the screen keeps
// the beat age a reason quotes current from the node's beat mtime.
func TestLiveReasonBeatAge(t *testing.T) {
	now := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		reason string
		beat   time.Duration // how long before now the beat mtime is; 0 means none
		want   string
	}{
		{"last beat advances", "pid 7 alive; last beat 12s ago", 40 * time.Second, "pid 7 alive; last beat 40s ago"},
		{"stalled for advances", "alive but not beating for 2m00s", 3*time.Minute + 5*time.Second, "alive but not beating for 3m05s"},
		{"unverified suffix kept", "alive but not beating for 2m00s (pid 7 unverified)", 4 * time.Minute, "alive but not beating for 4m00s (pid 7 unverified)"},
		{"legacy sentinel", "legacy .running written 5s ago, pid alive", 2 * time.Hour, "legacy .running written 2h00m ago, pid alive"},
		{"only the classifier's phrase", "waiting for a human: last beat 1s ago?; last beat 10s ago", 31 * time.Second, "waiting for a human: last beat 1s ago?; last beat 31s ago"},
		{"same age other spelling kept", "alive but not beating for 6m", 6 * time.Minute, "alive but not beating for 6m"},
		{"no beat mtime", "pid 7 gone; last beat 12s ago", 0, "pid 7 gone; last beat 12s ago"},
		{"no phrase", "status completed", time.Minute, "status completed"},
		{"phrase without an age", "last beat unknown", time.Minute, "last beat unknown"},
		{"empty", "", time.Minute, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &model.Node{Reason: tt.reason}
			if tt.beat > 0 {
				n.BeatMtime = now.Add(-tt.beat)
			}
			if got := liveReason(n, now); got != tt.want {
				t.Errorf("liveReason(%q) = %q, want %q", tt.reason, got, tt.want)
			}
		})
	}
}

func TestAgeToken(t *testing.T) {
	tests := []struct {
		in      string
		wantLen int
		want    time.Duration
	}{
		{"12s ago", 3, 12 * time.Second},
		{"3m12s", 5, 3*time.Minute + 12*time.Second},
		{"2h5m ago", 4, 2*time.Hour + 5*time.Minute},
		{"3d4h", 4, 76 * time.Hour},
		{"12", 0, 0},
		{"x12s", 0, 0},
		{"12x", 0, 0},
	}
	for _, tt := range tests {
		n, d := ageToken(tt.in)
		if n != tt.wantLen || d != tt.want {
			t.Errorf("ageToken(%q) = %d, %v; want %d, %v", tt.in, n, d, tt.wantLen, tt.want)
		}
	}
}
