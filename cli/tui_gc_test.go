package cli

import (
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// The dashboard collects at dashboardGCPercent (SPEC §8: memory at 10,000
// nodes ≤ 100 MiB RSS), and GOGC or GOMEMLIMIT in the environment win.
func TestDashboardPacingYieldsToTheEnvironment(t *testing.T) {
	tests := []struct {
		name, gogc, memlimit string
		paced                bool
	}{
		{"no setting in the environment", "", "", true},
		{"GOGC set", "200", "", false},
		{"GOMEMLIMIT set", "", "1GiB", false},
		{"both set", "off", "512MiB", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOGC", tt.gogc)
			t.Setenv("GOMEMLIMIT", tt.memlimit)
			const outside = 137 // what the process runs at before
			defer debug.SetGCPercent(debug.SetGCPercent(outside))
			restore := paceDashboardCollection()
			want := outside
			if tt.paced {
				want = dashboardGCPercent
			}
			if got := debug.SetGCPercent(want); got != want {
				t.Errorf("collector percent %d while the dashboard runs, want %d", got, want)
			}
			restore()
			if got := debug.SetGCPercent(outside); got != outside {
				t.Errorf("collector percent %d after the dashboard, want %d back", got, outside)
			}
		})
	}
}

// The dashboard collects once its ui has let go of a forest (SPEC §8:
// 100,000 nodes ≤ 300 MiB RSS), unless GOGC or GOMEMLIMIT in the
// environment says how to collect.
func TestDashboardCollectsAReleasedForest(t *testing.T) {
	tests := []struct {
		name, gogc, memlimit string
		collects             bool
	}{
		{"no setting in the environment", "", "", true},
		{"GOGC set", "200", "", false},
		{"GOMEMLIMIT set", "", "1GiB", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"GOGC": tt.gogc, "GOMEMLIMIT": tt.memlimit}
			release := collectReleasedForests(func(k string) string { return env[k] })
			if (release != nil) != tt.collects {
				t.Fatalf("a collection on release: %v, want %v", release != nil, tt.collects)
			}
			if release == nil {
				return
			}
			before := forcedCycles()
			release()
			if after := forcedCycles(); after <= before {
				t.Errorf("no collection ran on release (%d forced cycles before, %d after)", before, after)
			}
		})
	}
}

// forcedCycles counts the collections runtime.GC ran.
func forcedCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
