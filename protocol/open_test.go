//go:build unix

package protocol

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// within runs open, failing the test when it does not return within 5 s (a
// hang guard, not a timing assertion). A hung open waits on the FIFO at
// path: opening it read-write releases either end.
func within(t *testing.T, path string, open func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- open() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
	}
	for {
		if fd, err := unix.Open(path, unix.O_RDWR|unix.O_NONBLOCK, 0); err == nil {
			unix.Close(fd)
		}
		select {
		case <-done:
			t.Fatalf("open of %s hung", path)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// SPEC §9: every open of a contract file is non-blocking and refuses what is
// not a regular file with one line naming the path and its type; a regular
// file opens as os.OpenFile would, in blocking mode.
func TestOpenFileRefusesAllButRegularFilesWithoutBlocking(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, path string)
		flag  int
		want  string // "" when the open succeeds; else what the error says
	}{
		{name: "regular file, read", plant: regular, flag: os.O_RDONLY},
		{name: "regular file, append", plant: regular, flag: os.O_WRONLY | os.O_APPEND | unix.O_NOFOLLOW},
		{name: "created", plant: func(*testing.T, string) {}, flag: os.O_WRONLY | os.O_CREATE | os.O_APPEND},
		{name: "missing", plant: func(*testing.T, string) {}, flag: os.O_RDONLY, want: "no such file"},
		{name: "FIFO, read", plant: fifo, flag: os.O_RDONLY, want: "not a regular file (named pipe)"},
		{name: "FIFO, append, no reader", plant: fifo, flag: os.O_WRONLY | os.O_APPEND | os.O_CREATE, want: "not a regular file (named pipe)"},
		{name: "FIFO, append, a reader waiting", plant: func(t *testing.T, path string) {
			fifo(t, path)
			fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { unix.Close(fd) })
		}, flag: os.O_WRONLY | os.O_APPEND, want: "not a regular file (named pipe)"},
		{name: "directory", plant: func(t *testing.T, path string) { os.Mkdir(path, 0o755) }, flag: os.O_RDONLY, want: "not a regular file (directory)"},
		{name: "symlink, O_NOFOLLOW", plant: symlinkToRegular, flag: os.O_WRONLY | os.O_APPEND | unix.O_NOFOLLOW, want: "not a regular file (symbolic link)"},
		{name: "symlink followed", plant: symlinkToRegular, flag: os.O_RDONLY},
		{name: "symlink to a FIFO followed", plant: func(t *testing.T, path string) {
			fifo(t, path+".target")
			if err := os.Symlink(path+".target", path); err != nil {
				t.Fatal(err)
			}
		}, flag: os.O_WRONLY, want: "not a regular file (named pipe)"},
		{name: "character device", plant: func(t *testing.T, path string) {
			if err := os.Symlink(os.DevNull, path); err != nil {
				t.Fatal(err)
			}
		}, flag: os.O_RDONLY, want: "not a regular file (character device)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "file")
			tc.plant(t, path)
			var f *os.File
			err := within(t, path, func() (err error) {
				f, err = OpenFile(path, tc.flag, 0o644)
				return err
			})
			if tc.want != "" {
				if err == nil {
					f.Close()
					t.Fatalf("opened, want %q", tc.want)
				}
				if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %q, want one line naming %s and saying %q", err, path, tc.want)
				}
				if strings.Contains(tc.want, "not a regular") != errors.Is(err, ErrNotRegular) {
					t.Fatalf("errors.Is(%v, ErrNotRegular) is %t", err, errors.Is(err, ErrNotRegular))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
			if err != nil || flags&unix.O_NONBLOCK != 0 {
				t.Fatalf("the file was left non-blocking (flags %#o, %v)", flags, err)
			}
		})
	}
}

// OpenReader refuses as OpenFile does, and still says when what stands
// there was last modified: a FIFO's mtime is a beat all the same.
func TestOpenReaderRefusesAFIFOAndStillGivesItsMtime(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".heartbeat")
	fifo(t, path)
	when := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
	var info Info
	err := within(t, path, func() (err error) {
		var r io.ReadCloser
		r, info, err = OpenReader(path)
		if err == nil {
			r.Close()
		}
		return err
	})
	if !errors.Is(err, ErrNotRegular) || !info.ModTime.Equal(when) {
		t.Fatalf("OpenReader: %v, mtime %v; want a refusal and mtime %v", err, info.ModTime, when)
	}

	regularPath := filepath.Join(dir, "regular")
	regular(t, regularPath)
	r, info, err := OpenReader(regularPath)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil || string(b) != "content\n" || info.Size != int64(len(b)) {
		t.Fatalf("read %q (%v), size %d", b, err, info.Size)
	}
}

// CheckRegular judges a path without opening it or following a symlink: a
// missing file or a regular one passes.
func TestCheckRegular(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, path string)
		want  string
	}{
		{name: "missing", plant: func(*testing.T, string) {}},
		{name: "regular", plant: regular},
		{name: "FIFO", plant: fifo, want: "not a regular file (named pipe)"},
		{name: "symlink", plant: symlinkToRegular, want: "not a regular file (symbolic link)"},
		{name: "directory", plant: func(t *testing.T, path string) { os.Mkdir(path, 0o755) }, want: "not a regular file (directory)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "file")
			tc.plant(t, path)
			err := CheckRegular(path)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckRegular: %v, want it to name %s and say %q", err, path, tc.want)
			}
		})
	}
}

func regular(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fifo(t *testing.T, path string) {
	t.Helper()
	if err := unix.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

func symlinkToRegular(t *testing.T, path string) {
	t.Helper()
	regular(t, path+".target")
	if err := os.Symlink(path+".target", path); err != nil {
		t.Fatal(err)
	}
}

// ReadDocumentAt is the scan's read of a node's small files: opened as
// OpenReaderAt opens them (a FIFO refused without blocking, its mtime still
// given), read whole into the caller's buffer when it fits, capped, and
// every error names the file by its path.
func TestReadDocumentAtReadsWholeIntoTheBufferOrRefuses(t *testing.T) {
	dir := t.TempDir()
	d, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(d)
	tests := []struct {
		name    string
		plant   func(t *testing.T, path string)
		limit   int64
		buf     []byte
		want    string // the content read, when no error
		wantErr string // what the error says, with the path
		inBuf   bool   // read into buf
	}{
		{name: "fits the buffer", plant: regular, limit: 100, buf: make([]byte, 0, 64), want: "content\n", inBuf: true},
		{name: "larger than the buffer: a buffer of its own", plant: regular, limit: 100, buf: make([]byte, 0, 4), want: "content\n"},
		{name: "no buffer", plant: regular, limit: 100, want: "content\n"},
		{name: "over the limit: refused, not read", plant: regular, limit: 4, wantErr: "file too large"},
		{name: "missing", plant: func(*testing.T, string) {}, limit: 100, wantErr: "no such file"},
		{name: "FIFO: refused at once", plant: fifo, limit: 100, wantErr: "not a regular file (named pipe)"},
		{name: "directory", plant: func(t *testing.T, path string) { os.Mkdir(path, 0o755) }, limit: 100, wantErr: "not a regular file (directory)"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("doc%d", i)
			path := filepath.Join(dir, name)
			tc.plant(t, path)
			var b []byte
			var info Info
			err := within(t, path, func() (err error) {
				b, info, err = ReadDocumentAt(d, dir, name, tc.limit, tc.buf)
				return err
			})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to name %s and say %q", err, path, tc.wantErr)
				}
				if fi, serr := os.Stat(path); serr == nil && !info.ModTime.Equal(fi.ModTime()) {
					t.Errorf("mtime %v, want %v even when refused", info.ModTime, fi.ModTime())
				}
				return
			}
			if err != nil || string(b) != tc.want || info.Size != int64(len(tc.want)) {
				t.Fatalf("read %q, size %d (%v), want %q", b, info.Size, err, tc.want)
			}
			if inBuf := cap(tc.buf) > 0 && unsafe.SliceData(b) == unsafe.SliceData(tc.buf); inBuf != tc.inBuf {
				t.Errorf("read into the buffer: %v, want %v", inBuf, tc.inBuf)
			}
		})
	}
	// A file that gives no size (procfs) is read to its end, capped.
	proc, err := unix.Open("/proc/self", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Skipf("no procfs: %v", err)
	}
	defer unix.Close(proc)
	b, info, err := ReadDocumentAt(proc, "/proc/self", "stat", 1<<20, nil)
	if err != nil || info.Size != 0 || !strings.Contains(string(b), ") ") {
		t.Errorf("/proc/self/stat: %q, size %d (%v)", b, info.Size, err)
	}
	if _, _, err := ReadDocumentAt(proc, "/proc/self", "stat", 8, nil); !errors.Is(err, ErrTooLarge) {
		t.Errorf("/proc/self/stat capped at 8 bytes: %v, want ErrTooLarge", err)
	}
}
