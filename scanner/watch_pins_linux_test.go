//go:build linux

package scanner

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// openFDs lists this process's open descriptors, each with what it
// points at.
func openFDs(t *testing.T) map[string]string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	fds := make(map[string]string, len(ents))
	for _, e := range ents {
		// A descriptor closed since the listing has no link: not open.
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil {
			fds[e.Name()] = target
		}
	}
	return fds
}

// openedSince are the descriptors open now that were not open at before
// (or pointed elsewhere). Descriptors closed meanwhile do not count:
// a collection may close an earlier test's unreachable files any time.
func openedSince(t *testing.T, before map[string]string) []string {
	t.Helper()
	var opened []string
	for fd, target := range openFDs(t) {
		if before[fd] != target {
			opened = append(opened, fd+" -> "+target)
		}
	}
	return opened
}

// openPidfds counts this process's open pidfds.
func openPidfds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == "anon_inode:[pidfd]" {
			n++
		}
	}
	return n
}

// The watcher pins the processes its heartbeats name and lets go of them
// (and of the epoll set) when it is closed, run or not.
func TestWatchReleasesPins(t *testing.T) {
	for _, run := range []bool{false, true} {
		t.Run(map[bool]string{false: "never run", true: "run"}[run], func(t *testing.T) {
			root := t.TempDir()
			cmd, started := startSleep(t)
			writeHeartbeat(t, filepath.Join(root, "s"), cmd.Process.Pid, started, "running", "")
			fds, pidfds := openFDs(t), openPidfds(t)
			// Past the exit grace at once: the pid is decisive, so looked up.
			th := testThresholds
			th.ExitGrace = 0
			w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: th}, WatchOptions{Tick: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if got := openPidfds(t); got != pidfds+1 {
				t.Fatalf("%d pidfds open, %d before: want the sleep pinned", got, pidfds)
			}
			if run {
				done := make(chan error, 1)
				go func() { done <- w.Run(context.Background()) }()
				writeHeartbeat(t, filepath.Join(root, "s2"), cmd.Process.Pid, started, "running", "")
				await(t, w, "s2", func(s *model.Snapshot) bool { return s.Node("s2") != nil })
				_ = w.Close()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			} else {
				_ = w.Close()
			}
			if opened := openedSince(t, fds); len(opened) > 0 {
				t.Errorf("descriptors opened since the watcher started and still open after Close: %v", opened)
			}
		})
	}
}
