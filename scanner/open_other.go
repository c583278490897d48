//go:build !unix

package scanner

import (
	"fmt"
	"io"
	"os"
	"time"
)

// openRegular opens path for reading, refusing anything but a regular file.
func openRegular(path string) (io.ReadCloser, int64, time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, time.Time{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, time.Time{}, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fi.Size(), fi.ModTime(), fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	return f, fi.Size(), fi.ModTime(), nil
}
