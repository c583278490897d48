//go:build !unix

package protocol

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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

// ReadDocumentAt reads dir/name whole, as the Unix version does, through
// OpenReader; the descriptor is for systems that open relative to a
// directory.
func ReadDocumentAt(_ int, dir, name string, limit int64, buf []byte) ([]byte, Info, error) {
	path := filepath.Join(dir, name)
	f, info, err := OpenReader(path)
	if err != nil {
		return nil, info, err
	}
	defer f.Close()
	if info.Size > limit {
		return nil, info, fmt.Errorf("%s: %w: over %d bytes", path, ErrTooLarge, limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, info, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, info, fmt.Errorf("%s: %w: over %d bytes", path, ErrTooLarge, limit)
	}
	if info.Size > 0 && int64(len(b)) < info.Size {
		return nil, info, fmt.Errorf("read %s: %w", path, io.ErrUnexpectedEOF)
	}
	return b, info, nil
}
