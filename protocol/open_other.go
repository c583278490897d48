//go:build !unix

package protocol

import (
	"io"
	"io/fs"
	"os"
)

// OpenFile is os.OpenFile for a file of the contract, refusing whatever is
// not a regular file.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(path, fi.Mode())
	}
	return f, nil
}

// OpenReader opens path to read it as OpenFile does; the Info is also
// returned when the file is refused for its type.
func OpenReader(path string) (io.ReadCloser, Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Info{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, Info{}, err
	}
	info := Info{Size: fi.Size(), ModTime: fi.ModTime()}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, info, notRegular(path, fi.Mode())
	}
	return f, info, nil
}

// OpenReaderAt is OpenReader of path; the descriptor and name are for
// systems that open relative to a directory.
func OpenReaderAt(_ int, _, path string) (io.ReadCloser, Info, error) { return OpenReader(path) }
