//go:build unix

package sysat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func openDir(t *testing.T, dir string) int {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// TestOpenatAndFstatatAnswerAsUnix: the same descriptor, stat and errors
// as golang.org/x/sys/unix for present, missing, NUL-holding and long names.
func TestOpenatAndFstatatAnswerAsUnix(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("n", maxStackName+1)
	if err := os.WriteFile(filepath.Join(dir, ".heartbeat"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirfd := openDir(t, dir)
	tests := []struct {
		name    string
		file    string
		wantErr error
	}{
		{"present", ".heartbeat", nil},
		{"missing", ".cfa-state.json", unix.ENOENT},
		{"holds a NUL", ".heart\x00beat", unix.EINVAL},
		{"longer than the stack copy", long, unix.ENAMETOOLONG},
		{"exactly the stack copy", strings.Repeat("m", maxStackName), unix.ENOENT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fd, err := Openat(dirfd, tt.file, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if !errors.Is(err, tt.wantErr) && !(tt.wantErr == nil && err == nil) {
				t.Fatalf("Openat: %v, want %v", err, tt.wantErr)
			}
			if err == nil {
				var got, want unix.Stat_t
				if err := unix.Fstat(fd, &got); err != nil {
					t.Fatal(err)
				}
				unix.Close(fd)
				if err := unix.Fstatat(dirfd, tt.file, &want, unix.AT_SYMLINK_NOFOLLOW); err != nil {
					t.Fatal(err)
				}
				if got.Ino != want.Ino || got.Size != 2 {
					t.Errorf("opened inode %d size %d, want inode %d size 2", got.Ino, got.Size, want.Ino)
				}
			}
			var st unix.Stat_t
			err = Fstatat(dirfd, tt.file, &st, unix.AT_SYMLINK_NOFOLLOW)
			if !errors.Is(err, tt.wantErr) && !(tt.wantErr == nil && err == nil) {
				t.Fatalf("Fstatat: %v, want %v", err, tt.wantErr)
			}
			if err == nil && st.Size != 2 {
				t.Errorf("Fstatat size %d, want 2", st.Size)
			}
		})
	}
}
