//go:build unix

package sysat

import "golang.org/x/sys/unix"

// OpenDir opens the directory at path to open and stat names relative to
// it (close it with unix.Close), again when a signal interrupts the open.
func OpenDir(path string) (int, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}
