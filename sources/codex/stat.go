package codex

import (
	"os"
	"time"
)

// statPlain is rolloutStats.modTime's definition: the rollout's mtime as
// os.Stat gives it, and os.Stat's error.
func statPlain(path string) (time.Time, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}, err
	}
	return fi.ModTime(), nil
}
