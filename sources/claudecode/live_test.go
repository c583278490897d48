package claudecode

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/sources"
)

// The live engine follows the store through WatchPaths alone (no poll
// within reach): a session that starts appears, one hard-killed turns
// dead, one that exits cleanly (its file removed) leaves the tree.
func TestLiveEngineFollowsSessions(t *testing.T) {
	s := newStore(t)
	first := sleeper(t)
	firstKey := s.session(first.Process.Pid, "aaaa0000-1111-4222-8333-444455556666", "busy", nil)
	w, err := scanner.NewWatcher(scanner.Options{
		Roots:      []string{string(Kind) + ":" + s.dir},
		Thresholds: model.DefaultThresholds(),
		Probe:      liveness.SystemProbe{},
		Now:        time.Now,
		Sources:    []sources.Source{Source{SocketDir: t.TempDir()}},
	}, scanner.WatchOptions{FallbackPoll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && err != context.Canceled {
			t.Errorf("watcher: %v", err)
		}
	})
	// waitFor waits for the node keyed key to be in state (absent: "").
	waitFor := func(what, key string, state model.State) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			var got model.State
			if snap := w.Snapshot(); snap != nil {
				for _, sess := range snap.Sessions {
					sess.Walk(func(n *model.Node) {
						if n.HeartbeatPath == key {
							got = n.State
						}
					})
				}
			}
			if got == state {
				return
			}
			select {
			case <-w.Updates():
			case <-time.After(100 * time.Millisecond):
			}
		}
		t.Fatalf("%s: %s never became %q", what, key, state)
	}
	waitFor("the first session", firstKey, model.StateRunning)

	second := sleeper(t)
	secondKey := s.session(second.Process.Pid, "bbbb0000-1111-4222-8333-444455556666", "idle", nil)
	waitFor("a session that starts", secondKey, model.StateRunning)

	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	// A hard kill writes nothing: the engine's tick, past the exit
	// grace, asks the pid again.
	waitFor("a session hard-killed", firstKey, model.StateDead)

	if err := os.Remove(secondKey); err != nil {
		t.Fatal(err)
	}
	waitFor("a session that exits cleanly", secondKey, "")
}
