//go:build linux && (amd64 || arm64)

package sysat

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenatAndFstatatAllocateNothing: a name up to the stack copy's length
// costs no allocation (unix copies every name to the heap).
func TestOpenatAndFstatatAllocateNothing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".heartbeat"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirfd := openDir(t, dir)
	allocs := testing.AllocsPerRun(100, func() {
		fd, err := Openat(dirfd, ".heartbeat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
		var st unix.Stat_t
		if err := Fstatat(dirfd, ".exec-stream.jsonl", &st, unix.AT_SYMLINK_NOFOLLOW); err != unix.ENOENT {
			t.Fatalf("Fstatat of a missing name: %v, want ENOENT", err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations an open and a stat, want 0", allocs)
	}
}
