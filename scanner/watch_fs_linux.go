//go:build linux

package scanner

import (
	"os"
	"syscall"
)

// networkFS names the network file system path is on, or "": their mtimes
// come from another clock and inotify sees only local changes. The magic
// numbers are statfs f_type values (linux/magic.h).
func networkFS(path string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return ""
	}
	switch int64(st.Type) {
	case 0x6969:
		return "NFS"
	case 0x517B:
		return "SMB"
	case 0xFF534D42:
		return "CIFS"
	case 0xFE534D42:
		return "SMB2"
	}
	return ""
}

// fileIno is the inode number of fi, or 0 when unknown.
func fileIno(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}
