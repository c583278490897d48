package main

import (
	"math"
	"testing"
)

// The per-client figure is the least-squares slope of a serve's CPU over
// its clients, with how far the worst count lies off that line.
func TestFitLineIsTheLeastSquaresSlope(t *testing.T) {
	for _, tc := range []struct {
		name          string
		xs, ys        []float64
		slope, spread float64
		ok            bool
	}{
		{"on a line", []float64{0, 1, 5, 10}, []float64{4, 4.5, 6.5, 9}, 0.5, 0, true},
		{"one count off", []float64{0, 1, 2}, []float64{1, 3, 3}, 1, 2.0 / 3, true},
		{"one count", []float64{5}, []float64{3}, 0, 0, false},
		{"the same count twice", []float64{1, 1}, []float64{2, 3}, 0, 0, false},
	} {
		slope, spread, ok := fitLine(tc.xs, tc.ys)
		if ok != tc.ok || math.Abs(slope-tc.slope) > 1e-9 || math.Abs(spread-tc.spread) > 1e-9 {
			t.Errorf("%s: slope %v spread %v ok %v, want %v %v %v", tc.name, slope, spread, ok, tc.slope, tc.spread, tc.ok)
		}
	}
}
