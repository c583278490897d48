//go:build !unix

package sqlitestore

import "os"

// readable leaves the question to SQLite's own open where access(2) is
// not there to ask.
func readable(string) error { return nil }

// fileID is what tells a file from another put at its path, where no
// inode is there to tell: its creation is not known, its mtime is.
type fileID struct{ mod, size int64 }

// idOf is the id of the file at path.
func idOf(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, err
	}
	return fileID{mod: fi.ModTime().UnixNano(), size: fi.Size()}, nil
}
