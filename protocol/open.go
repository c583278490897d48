package protocol

// The roots are written by agents, so any name in them may turn out to be a
// FIFO, a device or a socket. Opening a FIFO waits for its other end, and a
// reader blocked there cannot be interrupted: one planted FIFO would hang an
// action, or freeze the live watcher, for good. So every open is
// non-blocking, and what was opened is refused unless fstat says it is a
// regular file.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// ErrNotRegular is the cause of every refusal to open something that is not
// a regular file (errors.Is).
var ErrNotRegular = errors.New("not a regular file")

// Info is what fstat said about an opened file.
type Info struct {
	Size    int64
	ModTime time.Time
}

// notRegular is the one-line refusal of path, whose type is mode:
// "/r/s/.children: not a regular file (named pipe)".
func notRegular(path string, mode fs.FileMode) error {
	return fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, TypeName(mode))
}

// TypeName names the type of a file that is not a regular one, as the
// refusals say it: "named pipe", "directory".
func TypeName(mode fs.FileMode) string {
	switch t := mode.Type(); {
	case t&fs.ModeNamedPipe != 0:
		return "named pipe"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeCharDevice != 0:
		return "character device"
	case t&fs.ModeDevice != 0:
		return "device"
	case t&fs.ModeDir != 0:
		return "directory"
	case t&fs.ModeSymlink != 0:
		return "symbolic link"
	default:
		return "mode " + t.String()
	}
}

// CheckRegular refuses path when it exists and is not a regular file,
// without opening it and without following a symlink. An action checks the
// files it will write before its first side effect; OpenFile stays the
// guard against one planted in between.
func CheckRegular(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return notRegular(path, fi.Mode())
	}
	return nil
}
