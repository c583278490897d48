package cli

import (
	"runtime/debug"
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
