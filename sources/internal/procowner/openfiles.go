package procowner

import (
	"os"
	"path/filepath"
	"strconv"
)

// OpenFiles is every path the process pid holds open (nil when its files
// cannot be read): what HoldsOpen answers for one path, read once for a
// whole store's records. A source asking about a thousand rollouts reads
// the process's fd table once, not a thousand times.
func OpenFiles(procDir string, pid int) map[string]bool {
	if procDir == "" {
		procDir = "/proc"
	}
	dir := filepath.Join(procDir, strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	open := make(map[string]bool, len(fds))
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil {
			open[target] = true
		}
	}
	return open
}
