package actions

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// writersVisible: on Linux /proc shows which processes hold a file open.
const writersVisible = true

// opener is one descriptor of one process.
type opener struct {
	pid, fd int
}

// fdPath is where /proc shows the descriptor.
func (o opener) fdPath() string {
	return "/proc/" + strconv.Itoa(o.pid) + "/fd/" + strconv.Itoa(o.fd)
}

// writersOf lists the descriptors that hold the file target (named base
// when it was opened) open for writing, except descriptor skip of this
// process. It reads /proc: one readlink per descriptor of every process it
// may inspect, and a stat and a read of fdinfo only for those whose link
// names base. Processes it may not inspect (another user's, unless root)
// are not seen.
func writersOf(target os.FileInfo, base string, skip int) []opener {
	procs, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := procs.Readdirnames(-1)
	procs.Close()
	self := os.Getpid()
	var out []opener
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		dir, err := os.Open("/proc/" + name + "/fd")
		if err != nil {
			continue // gone, or not ours to inspect
		}
		fds, _ := dir.Readdirnames(-1)
		dir.Close()
		for _, f := range fds {
			fd, err := strconv.Atoi(f)
			if err != nil || pid == self && fd == skip {
				continue
			}
			o := opener{pid: pid, fd: fd}
			link, err := os.Readlink(o.fdPath())
			if err != nil || filepath.Base(strings.TrimSuffix(link, " (deleted)")) != base {
				continue
			}
			if o.holds(target) && o.writable() {
				out = append(out, o)
			}
		}
	}
	return out
}

// holds reports whether the descriptor (still) refers to target.
func (o opener) holds(target os.FileInfo) bool {
	st, err := os.Stat(o.fdPath())
	return err == nil && os.SameFile(st, target)
}

// writable reports whether the descriptor was opened for writing; when its
// flags cannot be read it is taken to be.
func (o opener) writable() bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(o.pid) + "/fdinfo/" + strconv.Itoa(o.fd))
	if err != nil {
		return true
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("flags:")); ok {
			flags, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 8, 64)
			if err != nil {
				return true
			}
			return flags&syscall.O_ACCMODE != syscall.O_RDONLY
		}
	}
	return true
}
