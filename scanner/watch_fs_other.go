//go:build !linux

package scanner

import "os"

// networkFS is not detected on this platform.
func networkFS(string) string { return "" }

// fileIno is unknown on this platform: compaction is then seen as a shrink
// (compaction only removes lines).
func fileIno(os.FileInfo) uint64 { return 0 }

// fileDev is unknown on this platform: no mount point below a root is seen.
func fileDev(os.FileInfo) uint64 { return 0 }
