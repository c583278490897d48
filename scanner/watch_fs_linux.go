//go:build linux

package scanner

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Statfs f_type values (linux/magic.h) of file systems whose mtimes come
// from another host's clock and whose changes made elsewhere inotify never
// sees.
const (
	magicNFS    = 0x6969
	magicSMB    = 0x517B
	magicCIFS   = 0xFF534D42
	magicSMB2   = 0xFE534D42
	magicV9FS   = 0x01021997
	magicCeph   = 0x00C36400
	magicAFS    = 0x5346414F // OpenAFS
	magicKAFS   = 0x6B414653 // the kernel's AFS client
	magicFUSE   = 0x65735546
	magicLustre = 0x0BD00BD0
)

// networkFS names the network file system path is on, or "". FUSE is one
// magic number for every FUSE file system, most of them local (rootless
// container storage, encrypted directories), so its subtype decides.
func networkFS(path string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return ""
	}
	// f_type is a 32-bit magic; Statfs_t.Type is signed and of another
	// width on some platforms, where CIFS's value would compare negative.
	magic := uint32(st.Type)
	if magic == magicFUSE {
		if sub := fuseSubtype(path); networkFUSE[sub] {
			return "FUSE " + sub
		}
		return ""
	}
	return networkMagic(magic)
}

// networkMagic names the network file system of a statfs magic, or "".
func networkMagic(magic uint32) string {
	switch magic {
	case magicNFS:
		return "NFS"
	case magicSMB:
		return "SMB"
	case magicCIFS:
		return "CIFS"
	case magicSMB2:
		return "SMB2"
	case magicV9FS:
		return "9p"
	case magicCeph:
		return "CephFS"
	case magicAFS, magicKAFS:
		return "AFS"
	case magicLustre:
		return "Lustre"
	}
	return ""
}

// networkFUSE are the FUSE subtypes (mountinfo's "fuse.<subtype>") that
// reach another host.
var networkFUSE = map[string]bool{
	"sshfs": true, "rclone": true, "s3fs": true, "gcsfuse": true, "glusterfs": true,
	"ceph-fuse": true, "juicefs": true, "davfs": true, "curlftpfs": true,
}

// fuseSubtype is the subtype of the FUSE mount holding path, from
// /proc/self/mountinfo (read only for a FUSE path, which is rare).
func fuseSubtype(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	best, sub := "", ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		point, fstype, ok := mountinfoLine(sc.Text())
		if ok && len(point) >= len(best) && within(point, real) {
			best, sub = point, strings.TrimPrefix(fstype, "fuse.")
		}
	}
	return sub
}

// mountinfoLine takes the mount point (field 5, octal escapes undone) and
// the file system type (the first field after " - ") of a mountinfo line.
func mountinfoLine(line string) (point, fstype string, ok bool) {
	pre, post, found := strings.Cut(line, " - ")
	fields, after := strings.Fields(pre), strings.Fields(post)
	if !found || len(fields) < 5 || len(after) < 1 {
		return "", "", false
	}
	return unescapeOctal(fields[4]), after[0], true
}

// unescapeOctal undoes mountinfo's \ooo escapes (space, tab, newline, \).
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// fileIno is the inode number of fi, or 0 when unknown.
func fileIno(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// stat is the listed directory's mtime (Unix nanoseconds) and device: an
// fstat of the open directory (by path when it is not open).
func (h dirHandle) stat() (int64, uint64, error) {
	var st unix.Stat_t
	for {
		var err error
		if h.fd >= 0 {
			err = unix.Fstat(h.fd, &st)
		} else {
			err = unix.Stat(h.path, &st)
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, 0, &fs.PathError{Op: "stat", Path: h.path, Err: err}
		}
		return st.Mtim.Nano(), uint64(st.Dev), nil
	}
}

// sigs signs the files of the listed infra dir that matter (sigsOf), each
// by a stat relative to the open directory.
func (h dirHandle) sigs(entries []fs.DirEntry) fileSigs {
	return sigsOf(entries, func(name string) (fileSig, error) {
		if h.fd < 0 {
			return statSig(filepath.Join(h.path, name))
		}
		var st unix.Stat_t
		for {
			err := unix.Fstatat(h.fd, name, &st, 0)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return fileSig{}, err
			}
			return fileSig{mtime: st.Mtim.Nano(), size: st.Size, ino: st.Ino}, nil
		}
	})
}

// statSig is the signature of the file at path (following a link). It
// allocates nothing but the path's C string: polling stats every file of
// every polled node each pass.
func statSig(path string) (fileSig, error) {
	var st unix.Stat_t
	for {
		err := unix.Stat(path, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fileSig{}, &fs.PathError{Op: "stat", Path: path, Err: err}
		}
		return fileSig{mtime: st.Mtim.Nano(), size: st.Size, ino: st.Ino}, nil
	}
}
