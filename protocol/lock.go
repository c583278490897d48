package protocol

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// LockDir takes an exclusive flock on dir, waiting for it. Compactions,
// resumes and merges of the node in dir take it; appenders never lock and
// are not slowed.
func LockDir(dir string) (unlock func(), err error) {
	unlock, _, err = lockDir(dir, true)
	return unlock, err
}

// TryLockDir is LockDir without waiting: ok is false when another holds it.
func TryLockDir(dir string) (unlock func(), ok bool, err error) {
	return lockDir(dir, false)
}

func lockDir(dir string, wait bool) (func(), bool, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, false, fmt.Errorf("open %s: %w", dir, err)
	}
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	if err := syscall.Flock(int(d.Fd()), how); err != nil {
		d.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() {
		_ = syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
		d.Close()
	}, true, nil
}

// SyncDir flushes dir's entries (a rename, a link) to disk, as far as the
// file system lets it.
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
