//go:build race

package remote

// raceEnabled: the race detector is on (it allocates beside what it
// watches, so a count of bytes allocated means little then).
const raceEnabled = true
