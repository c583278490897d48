//go:build unix

package sqlitestore

import "golang.org/x/sys/unix"

// readable reports why this process may not read path, nil when it may:
// access(2) asks without opening it.
func readable(path string) error {
	return unix.Access(path, unix.R_OK)
}
