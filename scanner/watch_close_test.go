package scanner

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// goroutinesBack waits (generously) until no more goroutines run than
// before, and fails when they do not.
func goroutinesBack(t *testing.T, before int) {
	t.Helper()
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); after > before && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		after = runtime.NumGoroutine()
	}
	if after > before {
		t.Errorf("goroutines %d before, %d after shutdown", before, after)
	}
}

// A watcher built and then not run (a server that fails to listen after
// building it) is released by Close: no fsnotify reader left behind, and
// it cannot be run afterwards.
func TestWatchCloseWithoutRun(t *testing.T) {
	root := t.TempDir()
	pid, started := self(t)
	writeHeartbeat(t, filepath.Join(root, "s"), pid, started, "running", "")
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: testThresholds}, m.wo)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Errorf("a second Close: %v", err)
			}
			goroutinesBack(t, before)
			if err := w.Run(context.Background()); err == nil {
				t.Error("Run after Close did not fail")
			}
			for range w.Updates() { // closed: the loop ends
			}
		})
	}
}

// Close while Run runs ends Run as a cancelled context does.
func TestWatchCloseStopsRun(t *testing.T) {
	root := t.TempDir()
	pid, started := self(t)
	writeHeartbeat(t, filepath.Join(root, "s"), pid, started, "running", "")
	before := runtime.NumGoroutine()
	w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: testThresholds}, WatchOptions{Tick: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	// A change seen is a Run running.
	writeHeartbeat(t, filepath.Join(root, "s2"), pid, started, "running", "")
	await(t, w, "s2", func(s *model.Snapshot) bool { return s.Node("s2") != nil })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after Close")
	}
	for range w.Updates() {
	}
	goroutinesBack(t, before)
}
