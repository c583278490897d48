package claudecode

import (
	"os"
	"path/filepath"

	"github.com/dispatchtop/dispatchtop/protocol"
)

// recordDir is a directory of records (sessions/, jobs/) held open while
// its records are read, each opened relative to it: the kernel walks a
// record's name from the directory, two components, not its whole path
// from / again (some 1 µs an open of the ten a path of a home holds, and
// a home's records are some 800; SPEC §8, the agents' stores). Where the
// directory cannot be held open (not a Unix, or the open failed), fd is
// -1 and a record is opened by its path.
type recordDir struct {
	fd   int
	path string
}

// noDir opens a record by its path.
var noDir = recordDir{fd: -1}

// openRecordDir holds the directory at path open; close lets it go.
func openRecordDir(path string) recordDir {
	fd, ok := openDirFd(path)
	if !ok {
		return recordDir{fd: -1, path: path}
	}
	return recordDir{fd: fd, path: path}
}

// eachRecordEntry lists the store's directory sub (sessions/, jobs/) and
// gives each of its entries, in the listing's order, with the directory
// held open for their reads (its path d.path).
func (r *reader) eachRecordEntry(sub string, each func(d recordDir, e os.DirEntry)) {
	dir := filepath.Join(r.store, sub)
	entries := r.listDir(dir)
	if len(entries) == 0 {
		return
	}
	d := openRecordDir(dir)
	defer d.close()
	for _, e := range entries {
		each(d, e)
	}
}

func (d recordDir) close() {
	if d.fd >= 0 {
		closeFd(d.fd)
	}
}

// openRecord opens the record name of d, whose path is path, as
// protocol.OpenReader opens it (a variable: a test counts what a read
// hands the kernel to walk).
var openRecord = func(d recordDir, name, path string) (interface {
	Read([]byte) (int, error)
	Close() error
}, protocol.Info, error) {
	if d.fd < 0 {
		return protocol.OpenReader(path)
	}
	return protocol.OpenReaderAt(d.fd, name, path)
}
