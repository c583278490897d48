package model

import (
	"testing"
	"time"
)

// An Instant keeps a time.Time's moment exactly, over the years a
// time.Time holds, and the zero Instant is the zero time: an age measured
// from it is the age measured from the time it was made of.
func TestInstantKeepsTheMoment(t *testing.T) {
	kiritimati := time.FixedZone("LINT", 14*3600)
	now := time.Now()
	tests := []struct {
		name string
		t    time.Time
	}{
		{"the zero time", time.Time{}},
		{"a file's mtime, to the nanosecond", time.Date(2026, 3, 8, 12, 0, 1, 123456789, time.Local)},
		{"the Unix epoch", time.Unix(0, 0)},
		{"a nanosecond before the Unix epoch", time.Unix(0, -1)},
		{"a nanosecond after the zero time", time.Time{}.Add(time.Nanosecond)},
		{"before year 1", time.Date(-40, 1, 1, 0, 0, 0, 7, time.UTC)},
		{"past the years of Unix nanoseconds", time.Date(3000, 1, 1, 0, 0, 0, 999999999, time.UTC)},
		{"far past them", time.Date(200000, 6, 1, 0, 0, 0, 0, time.UTC)},
		{"in a zone fourteen hours from UTC", time.Date(2026, 3, 9, 2, 0, 0, 0, kiritimati)},
		{"the clock now, its monotonic reading too", now},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := InstantOf(tt.t)
			got := i.Time()
			if !got.Equal(tt.t) {
				t.Errorf("InstantOf(%v).Time() = %v", tt.t, got)
			}
			if i.IsZero() != tt.t.IsZero() || got.IsZero() != tt.t.IsZero() {
				t.Errorf("zero: Instant %v, its time %v, want %v", i.IsZero(), got.IsZero(), tt.t.IsZero())
			}
			later := time.Date(2026, 3, 8, 13, 0, 0, 0, time.UTC)
			if a, b := later.Sub(got), later.Round(0).Sub(tt.t.Round(0)); a != b {
				t.Errorf("age at %v: %v, want %v", later, a, b)
			}
		})
	}
}
