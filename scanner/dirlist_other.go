//go:build !linux

package scanner

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/dispatchtop/dispatchtop/protocol"
)

// openDir lists dir; elsewhere than on Linux the node's files are opened by
// their whole path.
func openDir(dir string) (dirHandle, []fs.DirEntry, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return dirHandle{fd: -1}, nil, err
	}
	return dirHandle{path: dir, fd: -1}, entries, nil
}

// openDirAt lists path, the directory name in parent: elsewhere than on
// Linux directories are opened by their whole path, and listed by
// os.ReadDir into memory of their own.
func openDirAt(_ dirHandle, _, path string, _ *listing) (dirHandle, []fs.DirEntry, error) {
	return openDir(path)
}

// listing is where a walk's worker lists its directories on Linux; here
// os.ReadDir gives each listing memory of its own.
type listing struct{}

// dirHandle is a listed directory.
type dirHandle struct {
	path string
	fd   int
	// unclean: path is not clean, so its files' paths are joined with
	// filepath.Join, which cleans them, as before the fast join.
	unclean bool
	// heartbeat is the path of its heartbeat when the walk made it with
	// the directory's own ("" when not): one string holds both.
	heartbeat string
	// above is the heartbeat path of the nearest node above it when the
	// walk knows it ("" when not), which its parent_heartbeat then shares.
	above string
}

func (h dirHandle) close() {}

func (h dirHandle) lstatMtime(name string) (time.Time, bool) {
	fi, err := os.Lstat(filepath.Join(h.path, name))
	if err != nil {
		return time.Time{}, false
	}
	return fi.ModTime(), true
}

// readDocument reads the directory's entry name whole (see
// protocol.ReadDocumentAt).
func (h dirHandle) readDocument(name string, limit int64, buf []byte) ([]byte, protocol.Info, error) {
	return protocol.ReadDocumentAt(-1, "", h.file(name), limit, buf)
}
