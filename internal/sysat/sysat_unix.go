//go:build unix && !(linux && (amd64 || arm64))

package sysat

import "golang.org/x/sys/unix"

// Openat is unix.Openat(dirfd, name, flags, mode).
func Openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	return unix.Openat(dirfd, name, flags, mode)
}

// Fstatat is unix.Fstatat(dirfd, name, st, flags).
func Fstatat(dirfd int, name string, st *unix.Stat_t, flags int) error {
	return unix.Fstatat(dirfd, name, st, flags)
}
