package model

import (
	"math"
	"time"
)

// maxEpochSeconds bounds the seconds TimeOfEpochSeconds converts: beyond
// any real time, and within what int64 seconds and time.Unix hold.
const maxEpochSeconds = 1 << 62

// EpochSeconds is t as float seconds since the epoch, the unit of a
// heartbeat's `started`, for any t; 0 for the zero time. Never
// float64(t.UnixNano()): UnixNano wraps outside the years 1678-2262, and a
// time 2^64 ns after a process's create time would read as that create time.
func EpochSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// TimeOfEpochSeconds is the time s float seconds after the epoch; the zero
// time for a value that is not a number. A value beyond ±2^62 s is held
// there, far beyond any real time, instead of wrapping.
func TimeOfEpochSeconds(s float64) time.Time {
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return time.Time{}
	}
	sec, frac := math.Modf(s)
	if math.Abs(sec) >= maxEpochSeconds {
		return time.Unix(int64(math.Copysign(maxEpochSeconds, sec)), 0)
	}
	return time.Unix(int64(sec), int64(frac*1e9))
}
