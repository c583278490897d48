//go:build !race

package remote

// raceEnabled: the race detector is on.
const raceEnabled = false
