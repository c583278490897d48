//go:build unix

package wrap

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// returnsWithin runs f, failing the test when it has not returned after 5 s
// (a hang guard, not a timing assertion). A call hung on the FIFO at path
// is released by opening its other end.
func returnsWithin[T any](t *testing.T, path string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(5 * time.Second):
	}
	for {
		if fd, err := unix.Open(path, unix.O_RDWR|unix.O_NONBLOCK, 0); err == nil {
			unix.Close(fd)
		}
		select {
		case <-done:
			t.Fatalf("hung on the FIFO %s", path)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func plantFIFO(t *testing.T, path string) {
	t.Helper()
	if err := unix.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// SPEC §9: a FIFO planted as the parent's `.children` is refused at the
// registration, with a line naming it, and nothing is started: a plain
// open would wait forever for a writer, and the dispatch with it.
func TestRunRefusesAFIFOAsTheParentsRegistry(t *testing.T) {
	dir := t.TempDir()
	registry := filepath.Join(dir, protocol.RegistryFile)
	plantFIFO(t, registry)
	infra := filepath.Join(dir, "kid")
	err := returnsWithin(t, registry, func() error {
		return Run(Options{Infra: infra, Parent: filepath.Join(dir, protocol.HeartbeatFile), Thresholds: model.DefaultThresholds()}, []string{"true"})
	})
	var exit *ExitError
	if err == nil || errors.As(err, &exit) || !strings.Contains(err.Error(), "not a regular file (named pipe)") || !strings.Contains(err.Error(), registry) {
		t.Errorf("err = %v, want the registration refused, naming %s as a named pipe", err, registry)
	}
	if _, err := os.Lstat(filepath.Join(infra, protocol.HeartbeatFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a heartbeat was written for a dispatch that failed to register (stat: %v)", err)
	}
}

// A FIFO planted as the parent's heartbeat does not hang the watch of the
// parent: it is an unreadable heartbeat, judged by its mtime, which is
// fresh, so the parent is not dead.
func TestParentDeadDoesNotWaitOnAFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), protocol.HeartbeatFile)
	plantFIFO(t, path)
	now := time.Now()
	dead := returnsWithin(t, path, func() bool {
		dead, _ := parentDead(path, fakeProbe{}, model.DefaultThresholds(), now, now)
		return dead
	})
	if dead {
		t.Error("a fresh, unreadable parent heartbeat was taken for a dead parent")
	}
}
