//go:build unix

package sqlitestore

import "golang.org/x/sys/unix"

// readable reports why this process may not read path, nil when it may:
// access(2) asks without opening it.
func readable(path string) error {
	return unix.Access(path, unix.R_OK)
}

// fileID is what tells a file from another put at its path.
type fileID struct{ dev, ino uint64 }

// idOf is the id of the file at path.
func idOf(path string) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return fileID{}, err
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, nil
}
