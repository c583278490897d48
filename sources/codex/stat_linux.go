package codex

import (
	"io/fs"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dispatchtop/dispatchtop/internal/sysat"
)

// rolloutStats stats a read's rollouts relative to their directory, the
// last one held open: Codex writes a day's rollouts in one directory
// (sessions/YYYY/MM/DD), so a read of a thousand threads opens a few
// directories and the kernel walks each rollout's name alone, not its
// path of a dozen components from / again, with nothing allocated (os.Stat
// allocates its FileInfo and a copy of the path). What it gives is
// statPlain's, held to it by TestRolloutStatIsOsStat.
type rolloutStats struct {
	dir string
	fd  int // -1: none open
}

func newRolloutStats() *rolloutStats { return &rolloutStats{fd: -1} }

// modTime is the mtime of the file at path, following a link, as statPlain
// gives it.
func (s *rolloutStats) modTime(path string) (time.Time, error) {
	dir, base := filepath.Split(path)
	if !filepath.IsAbs(path) || base == "" {
		return statPlain(path)
	}
	if dir != s.dir {
		s.close()
		fd, err := sysat.OpenDir(dir)
		if err != nil {
			return statPlain(path) // says what os.Stat says, or reads what the dir does not let be listed
		}
		s.dir, s.fd = dir, fd
	}
	var st unix.Stat_t
	for {
		err := sysat.Fstatat(s.fd, base, &st, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return time.Time{}, &fs.PathError{Op: "stat", Path: path, Err: err}
		}
		return time.Unix(st.Mtim.Unix()), nil
	}
}

// close lets the directory held open go.
func (s *rolloutStats) close() {
	if s.fd >= 0 {
		unix.Close(s.fd)
	}
	s.dir, s.fd = "", -1
}
