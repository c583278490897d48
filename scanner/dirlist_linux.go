package scanner

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dispatchtop/dispatchtop/internal/sysat"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// openDir lists dir and keeps it open: the node's files are then opened
// relative to it (openat), which saves the open and close that listing
// alone costs and a walk of the whole path for every file. The entries are
// in name order, as os.ReadDir gives them; errors read as os.ReadDir's.
func openDir(dir string) (dirHandle, []fs.DirEntry, error) {
	return openDirAt(dirHandle{fd: unix.AT_FDCWD}, dir, dir, nil)
}

// openDirAt lists the directory name in the open directory parent, and
// keeps it open, as openDir does for path, which names the same directory
// (in errors, and as the handle's path). The entries are made in l (see
// listing); nil gives them memory of their own.
func openDirAt(parent dirHandle, name, path string, l *listing) (dirHandle, []fs.DirEntry, error) {
	var fd int
	var err error
	for {
		fd, err = sysat.Openat(parent.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return dirHandle{fd: -1}, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	h := dirHandle{path: path, fd: fd}
	entries, err := readDirents(h, l)
	if err != nil {
		h.close()
		return dirHandle{fd: -1}, nil, err
	}
	return h, entries, nil
}

// direntBufs are getdents buffers, one per worker at a time.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// listing holds the entries of one directory at a time: a walk's worker
// lists every directory it visits into its own, so a listing costs no
// allocation once the listing has grown to the directories' size (at
// 10,000 nodes, 19,000 directories made two allocations each: a sixth of
// a cold scan's). The entries of a listing are valid until the next
// listing made in it.
type listing struct {
	ents    []direntry
	entries []fs.DirEntry
}

// readDirents lists the open directory h into l (nil: memory of its own).
// The listing costs no allocation an entry: the entries are values of one
// slice, and the names every node dir holds are the contract's own strings.
func readDirents(h dirHandle, l *listing) ([]fs.DirEntry, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	if l == nil {
		l = &listing{}
	}
	ents := l.ents[:0]
	for {
		n, err := unix.Getdents(h.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: h.path, Err: err}
		}
		if n <= 0 {
			break
		}
		if cap(ents) == 0 {
			// A record is at least 24 bytes: room for every entry of the
			// first read, which is all of a small directory.
			ents = make([]direntry, 0, n/24)
		}
		for off := 0; off < n; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			rec := buf[off:n]
			reclen := int(*(*uint16)(unsafe.Pointer(&rec[16])))
			if reclen == 0 || reclen > len(rec) {
				break
			}
			typ := rec[18]
			name := rec[19:reclen]
			if i := slices.Index(name, 0); i >= 0 {
				name = name[:i]
			}
			off += reclen
			if string(name) == "." || string(name) == ".." {
				continue
			}
			e := direntry{dir: h.path, name: entryName(name)}
			switch typ {
			case unix.DT_DIR:
				e.typ = fs.ModeDir
			case unix.DT_REG:
			case unix.DT_LNK:
				e.typ = fs.ModeSymlink
			case unix.DT_FIFO:
				e.typ = fs.ModeNamedPipe
			case unix.DT_SOCK:
				e.typ = fs.ModeSocket
			case unix.DT_CHR:
				e.typ = fs.ModeDevice | fs.ModeCharDevice
			case unix.DT_BLK:
				e.typ = fs.ModeDevice
			default: // DT_UNKNOWN: the file system does not say; lstat does
				var st unix.Stat_t
				if err := sysat.Fstatat(h.fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
					continue // gone since the listing, as os.ReadDir skips it
				}
				e.typ = statType(st.Mode)
			}
			ents = append(ents, e)
		}
	}
	slices.SortFunc(ents, func(a, b direntry) int { return strings.Compare(a.name, b.name) })
	entries := l.entries[:0]
	if cap(entries) < len(ents) {
		entries = make([]fs.DirEntry, 0, max(len(ents), 2*cap(entries)))
	}
	for i := range ents {
		entries = append(entries, &ents[i])
	}
	l.ents, l.entries = ents, entries
	return entries, nil
}

// entryName is the string of a listed name: the contract's own for the
// names every node dir holds, a copy for any other.
func entryName(name []byte) string {
	switch string(name) {
	case protocol.HeartbeatFile:
		return protocol.HeartbeatFile
	case protocol.RegistryFile:
		return protocol.RegistryFile
	case protocol.CfaFile:
		return protocol.CfaFile
	case protocol.RunningFile:
		return protocol.RunningFile
	case protocol.RetryCountFile:
		return protocol.RetryCountFile
	case protocol.BlockedFile:
		return protocol.BlockedFile
	case protocol.MergedFile:
		return protocol.MergedFile
	case protocol.MiddleDir:
		return protocol.MiddleDir
	case execStream:
		return execStream
	}
	return string(name)
}

// execStream is the event stream nearly every node writes.
const execStream = ".exec" + protocol.StreamSuffix

func statType(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFREG:
		return 0
	}
	return fs.ModeIrregular
}

// direntry is one listed name; Info is an lstat, as os.DirEntry's.
type direntry struct {
	dir  string
	name string
	typ  fs.FileMode
}

func (e *direntry) Name() string               { return e.name }
func (e *direntry) IsDir() bool                { return e.typ.IsDir() }
func (e *direntry) Type() fs.FileMode          { return e.typ }
func (e *direntry) Info() (fs.FileInfo, error) { return os.Lstat(filepath.Join(e.dir, e.name)) }
func (e *direntry) String() string             { return fs.FormatDirEntry(e) }

// dirHandle is a listed directory, open while its files are read.
type dirHandle struct {
	path string
	fd   int
	// unclean: path is not clean, so its files' paths are joined with
	// filepath.Join, which cleans them, as before the fast join.
	unclean bool
	// heartbeat is the path of its heartbeat when the walk made it with
	// the directory's own ("" when not): one string holds both.
	heartbeat string
	// above is the heartbeat path of the nearest node above it when the
	// walk knows it ("" when not), which its parent_heartbeat then shares.
	above string
}

func (h dirHandle) close() {
	if h.fd >= 0 {
		unix.Close(h.fd)
	}
}

// lstatMtime is the mtime of the entry name of the directory (not
// following a symlink, as DirEntry.Info).
func (h dirHandle) lstatMtime(name string) (time.Time, bool) {
	if h.fd < 0 {
		fi, err := os.Lstat(h.file(name))
		if err != nil {
			return time.Time{}, false
		}
		return fi.ModTime(), true
	}
	var st unix.Stat_t
	for {
		err := sysat.Fstatat(h.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return time.Time{}, false
		}
		return time.Unix(st.Mtim.Unix()), true
	}
}

// readDocument reads the directory's entry name whole (see
// protocol.ReadDocumentAt), relative to the open directory when there is
// one.
func (h dirHandle) readDocument(name string, limit int64, buf []byte) ([]byte, protocol.Info, error) {
	if h.fd < 0 {
		return protocol.ReadDocumentAt(unix.AT_FDCWD, "", h.file(name), limit, buf)
	}
	return protocol.ReadDocumentAt(h.fd, h.path, name, limit, buf)
}
