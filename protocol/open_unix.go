//go:build unix

package protocol

import (
	"io"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
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
	fd, info, err := openFdAt(dirfd, name, path, unix.O_RDONLY, 0)
	if err != nil {
		return nil, info, err
	}
	return &rawReader{fd: fd, path: path}, info, nil
}

// openFd opens path non-blocking and keeps the descriptor only when it is a
// regular file.
func openFd(path string, flag int, perm fs.FileMode) (int, Info, error) {
	return openFdAt(unix.AT_FDCWD, path, path, flag, perm)
}

// openFdAt is openFd for name relative to dirfd.
func openFdAt(dirfd int, name, path string, flag int, perm fs.FileMode) (int, Info, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Openat(dirfd, name, flag|unix.O_NONBLOCK|unix.O_CLOEXEC, uint32(perm.Perm()))
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
			if fi, serr := stat(path); serr == nil && !fi.Mode().IsRegular() {
				return -1, Info{}, notRegular(path, fi.Mode())
			}
		}
		return -1, Info{}, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, Info{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	info := Info{Size: st.Size, ModTime: time.Unix(st.Mtim.Unix())}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return -1, info, notRegular(path, fileType(uint32(st.Mode)))
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
