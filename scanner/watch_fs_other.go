//go:build !linux

package scanner

import (
	"io/fs"
	"os"
	"path/filepath"
)

// networkFS is not detected on this platform.
func networkFS(string) string { return "" }

// fileIno is unknown on this platform: compaction is then seen as a shrink
// (compaction only removes lines).
func fileIno(os.FileInfo) uint64 { return 0 }

// fileDev is unknown on this platform: no mount point below a root is seen.
func fileDev(os.FileInfo) uint64 { return 0 }

// stat is the listed directory's mtime (Unix nanoseconds) and device.
func (h dirHandle) stat() (int64, uint64, error) {
	fi, err := os.Stat(h.path)
	if err != nil {
		return 0, 0, err
	}
	return fi.ModTime().UnixNano(), fileDev(fi), nil
}

// sigs signs the files of the listed infra dir that matter (sigsOf).
func (h dirHandle) sigs(entries []fs.DirEntry) fileSigs {
	return sigsOf(entries, func(name string) (fileSig, error) {
		return statSig(filepath.Join(h.path, name))
	})
}

// statSig is the signature of the file at path (following a link).
func statSig(path string) (fileSig, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileSig{}, err
	}
	return sigOf(fi), nil
}
