package liveness

// Identity (SPEC §3 "same process", §5.1): is a live pid still the process
// a heartbeat names? The classifier and kill both ask VerifyWithin (Verify
// where a record has no start slack), so the two cannot disagree, and no
// value a heartbeat or a source's traits carry can overflow the comparison.

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// Verify compares what the probe found with the `started` a heartbeat
// carries (float seconds since the epoch; 0 when the writer left it out),
// on a host that booted at boot (zero: unknown), at now:
//
//   - ProcessGone: no such pid.
//   - ProcessAlive: the pid exists and its create time is within tolerance
//     of started (the same process).
//   - ProcessReused: the pid exists but was created at another time.
//   - ProcessUnverified: the pid exists but the comparison cannot be made:
//     the create time is unreadable, started is zero, or started is not a
//     time a process of this host can have been created at (CheckStarted;
//     the error says why, and is nil for the other causes). All are treated
//     as alive: without a create time to compare, a reused pid cannot be
//     told from the original, and dispatchtop never declares dead what it
//     cannot prove gone.
func Verify(info ProcessInfo, started float64, tolerance time.Duration, boot, now time.Time) (model.ProcessStatus, error) {
	return VerifyWithin(info, started, 0, tolerance, boot, now)
}

// VerifyWithin is Verify for a record whose started is stamped up to slack
// after its process was created (Traits.StartSlack, SPEC §10): the same
// process is one created within [started − slack − tolerance, started +
// tolerance]. Created later, or earlier than that, the pid was reused. A
// negative slack counts as none; no slack or tolerance, however large,
// wraps the window round. Verify is VerifyWithin with no slack;
// the classifier passes the node's, and so must kill.
func VerifyWithin(info ProcessInfo, started float64, slack, tolerance time.Duration, boot, now time.Time) (model.ProcessStatus, error) {
	switch {
	case !info.Exists:
		return model.ProcessGone, nil
	case started == 0:
		return model.ProcessUnverified, nil
	}
	if err := CheckStarted(started, boot, now, tolerance); err != nil {
		return model.ProcessUnverified, err
	}
	if info.CreateTimeErr != nil || info.CreateTime.IsZero() {
		return model.ProcessUnverified, nil
	}
	// Compared as times, which hold any started and any Duration exactly:
	// differences of Durations can saturate, and a saturated distance
	// would equal a saturated window.
	st := startedTime(started)
	earliest := st.Add(-max(slack, 0)).Add(-tolerance)
	if tolerance >= 0 && !info.CreateTime.Before(earliest) && !info.CreateTime.After(st.Add(tolerance)) {
		return model.ProcessAlive, nil
	}
	return model.ProcessReused, nil
}

// CheckStarted says why started (float seconds since the epoch, as a
// heartbeat carries it) cannot be the create time of a process running on
// this host at now, or returns nil when it can: a running process was
// created after the last boot (zero: unknown, not checked) and not after
// now, each edge widened by tolerance as the identity check is. A value
// outside is a writer's mistake (milliseconds, a monotonic clock) or
// another boot's process: it proves nothing about whoever has the pid now.
func CheckStarted(started float64, boot, now time.Time, tolerance time.Duration) error {
	slack := tolerance.Seconds()
	switch {
	case math.IsNaN(started) || math.IsInf(started, 0):
		return fmt.Errorf("started %s is not a number of seconds", formatStarted(started))
	case started > epochSeconds(now)+slack:
		return fmt.Errorf("started %s is in the future%s", formatStarted(started), unitHint(started, boot, now, slack))
	case !boot.IsZero() && started < epochSeconds(boot)-slack:
		return fmt.Errorf("started %s predates the last boot (%s)", formatStarted(started), clock(boot, now))
	case boot.IsZero() && started < 0:
		return fmt.Errorf("started %s predates the epoch", formatStarted(started))
	}
	return nil
}

// unitHint guesses the unit of a started too large to be seconds: the
// writer's clock in milliseconds (Date.now(), time.time()*1000) is the
// usual mistake.
func unitHint(started float64, boot, now time.Time, slack float64) string {
	for _, u := range []struct {
		per  float64
		name string
	}{{1e3, "milliseconds"}, {1e6, "microseconds"}, {1e9, "nanoseconds"}} {
		s := started / u.per
		if s <= epochSeconds(now)+slack && (boot.IsZero() || s >= epochSeconds(boot)-slack) && s > 0 {
			return " (in " + u.name + "?)"
		}
	}
	return ""
}

// formatStarted names a started value in a reason: in full while it reads
// as seconds, in exponent form beyond (1.7e+12).
func formatStarted(s float64) string {
	if a := math.Abs(s); a >= 1e-3 && a < 1e11 {
		return strconv.FormatFloat(s, 'f', -1, 64)
	}
	return strconv.FormatFloat(s, 'g', -1, 64)
}

// TimeDistance is |a − b|; when that does not fit a Duration (292 years)
// it is the largest Duration. time.Time.Sub saturates at the smallest
// Duration when b is far after a, and negating that overflows back to
// itself: a negative "distance" that passes every `<= tolerance` check.
// Sub may saturate up to a second before the true distance reaches the
// largest Duration; no tolerance comes near either.
func TimeDistance(a, b time.Time) time.Duration {
	d := a.Sub(b)
	switch {
	case d >= 0:
		return d
	case d == math.MinInt64:
		return math.MaxInt64
	}
	return -d
}

// epochSeconds is t as float seconds since the epoch, the unit of started.
func epochSeconds(t time.Time) float64 { return model.EpochSeconds(t) }

// startedTime converts a started that CheckStarted accepted to a time,
// never wrapped.
func startedTime(s float64) time.Time { return model.TimeOfEpochSeconds(s) }
