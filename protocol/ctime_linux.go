package protocol

import (
	"os"
	"syscall"
	"time"
)

// changed is fi's ctime: for a replaced registry, its last change, which
// is no earlier than the rename (the unlink of its old name sets it).
func changed(fi os.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Unix())
	}
	return fi.ModTime()
}
