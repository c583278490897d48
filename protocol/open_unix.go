//go:build unix

package protocol

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dispatchtop/dispatchtop/internal/sysat"
)

// OpenFile is os.OpenFile for a file of the contract: it never waits (a
// FIFO opened to read does not wait for a writer; one opened to write with
// no reader fails at once) and refuses whatever is not a regular file,
// judged by fstat on what was opened. The caller adds O_NOFOLLOW where a
// symlink is refused. The file returned is in blocking mode, as any
// regular file (it may become a child's output).
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	fd, _, err := openFd(path, flag, perm)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// OpenReader opens path to read it as OpenFile does, with plain system
// calls: the scan opens tens of thousands of small files, and an os.File
// would register each with the poller (a failing epoll_ctl on Linux) and
// set a finalizer, which profiling showed to cost a tenth of a cold scan.
// The Info is fstat's; it is also returned when the file is refused for
// its type, since the mtime of whatever stands there may still count.
func OpenReader(path string) (io.ReadCloser, Info, error) {
	return OpenReaderAt(unix.AT_FDCWD, path, path)
}

// OpenReaderAt is OpenReader for name in the directory open as dirfd (path
// names the same file in errors): a scan that lists a directory opens its
// files relative to it, without walking the whole path again.
func OpenReaderAt(dirfd int, name, path string) (io.ReadCloser, Info, error) {
	fd, info, err := openFdAt(dirfd, name, pathAt{path: path}, unix.O_RDONLY, 0)
	if err != nil {
		return nil, info, err
	}
	return &rawReader{fd: fd, path: path}, info, nil
}

// ReadDocumentAt reads the single-document file name, in the directory dir
// open as dirfd, whole, opened as OpenReaderAt opens it: into buf when it
// fits (the result is then a slice of buf), else into a new slice. It is
// the scan's read of the small files of every node, without a reader
// around each, or the file's path made unless an error names it. The Info
// is fstat's, also when the file is refused for its type or for holding
// more than limit bytes (an error wrapping ErrTooLarge; nothing is read).
// A document is replaced whole, never grown in place, so the size fstat
// gave is all there is: reading exactly that much saves the read that
// would only say EOF. A size of 0 may be a file that gives none: it is
// read to EOF, capped.
func ReadDocumentAt(dirfd int, dir, name string, limit int64, buf []byte) ([]byte, Info, error) {
	at := pathAt{dir: dir, name: name}
	fd, info, err := openFdAt(dirfd, name, at, unix.O_RDONLY, 0)
	if err != nil {
		return nil, info, err
	}
	defer unix.Close(fd)
	if info.Size > limit {
		return nil, info, fmt.Errorf("%s: %w: over %d bytes", at, ErrTooLarge, limit)
	}
	want := int(info.Size)
	if want == 0 {
		want = int(limit) + 1
	}
	switch {
	case info.Size > 0 && cap(buf) < want:
		buf = make([]byte, 0, want)
	case info.Size == 0 && cap(buf) < 512:
		buf = make([]byte, 0, 512)
	}
	b := buf[:0]
	for len(b) < want {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(want-len(b), max(len(b), 512)))
		}
		n, err := unix.Read(fd, b[len(b):min(cap(b), want)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, info, fmt.Errorf("read %s: %w", at, &fs.PathError{Op: "read", Path: at.String(), Err: err})
		}
		if n == 0 {
			if info.Size > 0 {
				return nil, info, fmt.Errorf("read %s: %w", at, io.ErrUnexpectedEOF)
			}
			break
		}
		b = b[:len(b)+n]
	}
	if int64(len(b)) > limit {
		return nil, info, fmt.Errorf("%s: %w: over %d bytes", at, ErrTooLarge, limit)
	}
	return b, info, nil
}

// pathAt names a file opened relative to a directory: path when the caller
// has it, else dir and name joined, made only when an error names it.
type pathAt struct{ dir, name, path string }

func (p pathAt) String() string {
	if p.path != "" || p.name == "" {
		return p.path
	}
	return filepath.Join(p.dir, p.name)
}

// openFd opens path non-blocking and keeps the descriptor only when it is a
// regular file.
func openFd(path string, flag int, perm fs.FileMode) (int, Info, error) {
	return openFdAt(unix.AT_FDCWD, path, pathAt{path: path}, flag, perm)
}

// openFdAt is openFd for name relative to dirfd; at names it in errors.
func openFdAt(dirfd int, name string, at pathAt, flag int, perm fs.FileMode) (int, Info, error) {
	var fd int
	var err error
	for {
		fd, err = sysat.Openat(dirfd, name, flag|unix.O_NONBLOCK|unix.O_CLOEXEC, uint32(perm.Perm()))
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		// ENXIO: a FIFO without a reader, opened to write, or a socket;
		// ELOOP under O_NOFOLLOW: a symlink. Say what stands there.
		if err == unix.ENXIO || err == unix.ELOOP && flag&unix.O_NOFOLLOW != 0 {
			stat := os.Stat
			if flag&unix.O_NOFOLLOW != 0 {
				stat = os.Lstat
			}
			if fi, serr := stat(at.String()); serr == nil && !fi.Mode().IsRegular() {
				return -1, Info{}, notRegular(at.String(), fi.Mode())
			}
		}
		return -1, Info{}, &fs.PathError{Op: "open", Path: at.String(), Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, Info{}, &fs.PathError{Op: "stat", Path: at.String(), Err: err}
	}
	info := Info{Size: st.Size, ModTime: time.Unix(st.Mtim.Unix())}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return -1, info, notRegular(at.String(), fileType(uint32(st.Mode)))
	}
	return fd, info, nil
}

// fileType is the fs type bits of a stat mode.
func fileType(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}

// rawReader reads a descriptor directly; it is used by one goroutine.
type rawReader struct {
	fd   int
	path string
}

func (f *rawReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Read(f.fd, p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, &fs.PathError{Op: "read", Path: f.path, Err: err}
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f *rawReader) Close() error {
	if err := unix.Close(f.fd); err != nil {
		return &fs.PathError{Op: "close", Path: f.path, Err: err}
	}
	return nil
}
