package procowner

import (
	"bytes"
	"os"

	"golang.org/x/sys/unix"

	"github.com/dispatchtop/dispatchtop/internal/sysat"
)

// lister names the processes of /proc as programOf does, at a fraction of
// its cost: each file is opened relative to the open procDir, the comm is
// read in one read into a buffer kept for the whole lookup (no stat, no
// second read that only says EOF), and the executable's link is read only
// when the comm does not name the program already. A host runs hundreds
// of processes and every read of a home looks at each; programOf is the
// definition this is held to (TestIdentifyAnswersAsProgramOf).
type lister struct {
	procDir string
	fd      int
	buf     [256]byte
}

func newLister(procDir string) (*lister, error) {
	fd, err := sysat.OpenDir(procDir)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: procDir, Err: err}
	}
	return &lister{procDir: procDir, fd: fd}, nil
}

func (l *lister) close() { unix.Close(l.fd) }

// programOf is programOf(procDir/pid, names).
func (l *lister) programOf(pid string, names []string) (string, bool) {
	comm, ok := l.read(pid + "/comm")
	if !ok {
		return "", false
	}
	comm = bytes.TrimSpace(comm)
	for _, n := range names {
		// comm is cut at 15 bytes.
		if string(comm) == n || (len(n) > 15 && string(comm) == n[:15]) {
			return n, true
		}
	}
	n, err := unix.Readlinkat(l.fd, pid+"/exe", l.buf[:])
	if err != nil {
		return "", false
	}
	if n == len(l.buf) {
		// Longer than the buffer: the plain read, whole.
		return programOf(l.procDir+"/"+pid, names)
	}
	exe := l.buf[:n]
	exe = bytes.TrimSuffix(exe[bytes.LastIndexByte(exe, '/')+1:], []byte(" (deleted)"))
	for _, name := range names {
		if string(exe) == name {
			return name, true
		}
	}
	return "", false
}

// read reads the small file name (under procDir) in one read, into the
// lister's buffer: good until its next read.
func (l *lister) read(name string) ([]byte, bool) {
	fd, err := sysat.Openat(l.fd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Read(fd, l.buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == len(l.buf) {
			return nil, false
		}
		return l.buf[:n], true
	}
}
