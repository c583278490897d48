//go:build linux && (amd64 || arm64)

// The raw system calls name fstatat as newfstatat, which only the 64-bit
// Linux ports share; every other port goes through unix.

package sysat

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Openat is unix.Openat(dirfd, name, flags, mode).
func Openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	if len(name) > maxStackName {
		return unix.Openat(dirfd, name, flags, mode)
	}
	var buf [maxStackName + 1]byte
	if !cString(&buf, name) {
		return -1, unix.EINVAL
	}
	r, _, errno := syscall.Syscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&buf[0])), uintptr(flags), uintptr(mode), 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// Fstatat is unix.Fstatat(dirfd, name, st, flags).
func Fstatat(dirfd int, name string, st *unix.Stat_t, flags int) error {
	if len(name) > maxStackName {
		return unix.Fstatat(dirfd, name, st, flags)
	}
	var buf [maxStackName + 1]byte
	if !cString(&buf, name) {
		return unix.EINVAL
	}
	_, _, errno := syscall.Syscall6(unix.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(st)), uintptr(flags), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// cString puts name, NUL-terminated, in buf; false when name holds a NUL
// (unix refuses such a name with EINVAL).
func cString(buf *[maxStackName + 1]byte, name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] == 0 {
			return false
		}
		buf[i] = name[i]
	}
	buf[len(name)] = 0
	return true
}
