//go:build unix

package claudecode

import (
	"golang.org/x/sys/unix"

	"github.com/dispatchtop/dispatchtop/internal/sysat"
)

// openDirFd opens the directory at path to open files relative to it.
func openDirFd(path string) (int, bool) {
	fd, err := sysat.OpenDir(path)
	return fd, err == nil
}

func closeFd(fd int) { unix.Close(fd) }
