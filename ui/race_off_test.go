//go:build !race

package ui

// raceEnabled: the race detector is on (timings mean little then).
const raceEnabled = false
