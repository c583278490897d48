package liveness

import (
	"testing"
	"time"
)

// A build for tests may say the host booted a moment ago (simulatedBoot):
// a duration is taken before this process's start, Unix seconds as the
// instant; anything else, or nothing, leaves the real boot.
func TestSimulatedBootIsADurationBeforeThisProcessOrAnInstant(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		name string
		v    string
		want time.Time
		ok   bool
	}{
		{"unset", "", time.Time{}, false},
		{"a minute before this process", "1m", start.Add(-time.Minute), true},
		{"zero: booted as this process started", "0s", start, true},
		{"unix seconds", "1764160000", time.Unix(1764160000, 0), true},
		{"negative duration", "-1m", time.Time{}, false},
		{"word", "recently", time.Time{}, false},
		{"bare zero is a duration", "0", start, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseSimulatedBoot(tc.v, func() time.Time { return start })
			if ok != tc.ok || !got.Equal(tc.want) {
				t.Errorf("parseSimulatedBoot(%q) = %v, %v; want %v, %v", tc.v, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// The probe answers with the simulated boot when a build sets one.
func TestSystemProbeBootTimeIsTheSimulatedOne(t *testing.T) {
	real := SystemProbe{}.BootTime()
	if simulatedBoot == "" {
		if real.IsZero() || real.After(time.Now()) {
			t.Fatalf("boot time %v: want a past instant", real)
		}
		return
	}
	want, _ := parseSimulatedBoot(simulatedBoot, ownStart)
	if !real.Equal(want) {
		t.Errorf("BootTime() = %v under simulatedBoot=%q, want %v", real, simulatedBoot, want)
	}
}
