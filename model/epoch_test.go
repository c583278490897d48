package model

import (
	"math"
	"testing"
	"time"
)

// A time as float seconds since the epoch, and back, for any time and any
// value: float64(t.UnixNano()) wraps outside 1678-2262 (a startedAt in
// 2611 read as a time 2^64 ns earlier), and int64 of a float beyond its
// range is whatever the machine makes of it.
func TestEpochSecondsNeverWraps(t *testing.T) {
	wrapped := time.Unix(1_750_000_000, 0).Add(math.MaxInt64).Add(math.MaxInt64).Add(2) // + 2^64 ns
	tests := []struct {
		name string
		at   time.Time
		want float64
	}{
		{name: "now-ish", at: time.Unix(1_750_000_000, 250_000_000), want: 1_750_000_000.25},
		{name: "2^64 ns after a real create time is in 2611, not that create time", at: wrapped,
			want: 1_750_000_000 + 18_446_744_073.709551616},
		{name: "the year 1", at: time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC), want: -62_135_596_800 + 86_400},
		{name: "the zero time is no time", at: time.Time{}, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := EpochSeconds(tc.at); math.Abs(got-tc.want) > 1e-3*math.Max(1, math.Abs(tc.want)/1e12) {
				t.Errorf("EpochSeconds(%s) = %f, want %f", tc.at, got, tc.want)
			}
		})
	}
}

func TestTimeOfEpochSecondsNeverWraps(t *testing.T) {
	tests := []struct {
		name    string
		seconds float64
		want    func(time.Time) bool
	}{
		{name: "seconds", seconds: 1_750_000_000.25,
			want: func(t time.Time) bool { return t.Equal(time.Unix(1_750_000_000, 250_000_000)) }},
		{name: "beyond int64 seconds stays far in the future", seconds: 1e300,
			want: func(t time.Time) bool { return t.After(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)) }},
		{name: "beyond int64 seconds before the epoch stays far in the past", seconds: -1e300,
			want: func(t time.Time) bool { return t.Before(time.Date(-9999, 1, 1, 0, 0, 0, 0, time.UTC)) }},
		{name: "not a number is no time", seconds: math.NaN(), want: time.Time.IsZero},
		{name: "infinity is no time", seconds: math.Inf(1), want: time.Time.IsZero},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := TimeOfEpochSeconds(tc.seconds); !tc.want(got) {
				t.Errorf("TimeOfEpochSeconds(%g) = %s", tc.seconds, got)
			}
		})
	}
	if got := (Heartbeat{Started: 1e300}).StartedTime(); !got.After(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("StartedTime of 1e300 = %s, want far in the future", got)
	}
}
