//go:build !linux

package codex

import "time"

// rolloutStats stats each rollout by its path.
type rolloutStats struct{}

func newRolloutStats() *rolloutStats { return &rolloutStats{} }

func (*rolloutStats) modTime(path string) (time.Time, error) { return statPlain(path) }

func (*rolloutStats) close() {}
