//go:build unix

package claudecode

import "golang.org/x/sys/unix"

// openDirFd opens the directory at path to open files relative to it.
func openDirFd(path string) (int, bool) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		return fd, err == nil
	}
}

func closeFd(fd int) { unix.Close(fd) }
