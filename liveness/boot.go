package liveness

import (
	"os"
	"strconv"
	"sync"
	"time"
)

// simulatedBoot, when set at link time, replaces the host's last boot in
// SystemProbe.BootTime: the check of a `started` against the boot (SPEC §3,
// a record older than the boot names another boot's process) can then be
// run as on a host that booted a moment ago, which a fresh CI runner is.
// Create times are still read against the real boot. Two forms:
//
//	go test -ldflags=-X=github.com/dispatchtop/dispatchtop/liveness.simulatedBoot=1m ./...
//	    (a duration: the host booted that long before this process started)
//	go build -ldflags=-X=github.com/dispatchtop/dispatchtop/liveness.simulatedBoot=1764160000
//	    (Unix seconds: the instant itself, to hand a test's boot to a binary it runs)
//
// A release build leaves it empty. A value that is neither form is ignored.
var simulatedBoot string

// simulated is simulatedBoot read once: the instant, and whether it is set.
var simulated = sync.OnceValues(func() (time.Time, bool) {
	return parseSimulatedBoot(simulatedBoot, ownStart)
})

// parseSimulatedBoot reads v (a duration before start, or Unix seconds);
// start is asked only for a duration.
func parseSimulatedBoot(v string, start func() time.Time) (time.Time, bool) {
	if v == "" {
		return time.Time{}, false
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		s := start()
		if s.IsZero() {
			return time.Time{}, false
		}
		return s.Add(-d), true
	}
	if sec, err := strconv.ParseInt(v, 10, 64); err == nil && sec > 0 {
		return time.Unix(sec, 0), true
	}
	return time.Time{}, false
}

// ownStart is this process's create time (zero when unreadable).
func ownStart() time.Time {
	return SystemProbe{}.Lookup(os.Getpid()).CreateTime
}
