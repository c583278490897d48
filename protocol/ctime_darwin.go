package protocol

import (
	"os"
	"syscall"
	"time"
)

// changed is fi's ctime (see ctime_linux.go).
func changed(fi os.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctimespec.Unix())
	}
	return fi.ModTime()
}
