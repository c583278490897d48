//go:build !linux

package protocol

import "os"

// HoldersVisible: without /proc nobody is seen holding a registry; a drain
// relies on a longer quiet window alone, and a leftover is finished at once.
const HoldersVisible = false

// Holder is one descriptor, open for writing, of one process.
type Holder struct {
	PID, FD int
	Command string
}

// Holders cannot be seen here.
func Holders(os.FileInfo) []Holder { return nil }

// Holds cannot be seen here.
func (Holder) Holds(os.FileInfo) bool { return false }
