package protocol

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

func TestConcurrentAtomicWritersNeverLeaveAPartialFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".heartbeat")
	const writers, rounds = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Bodies of different sizes: a truncated or mixed file would
			// not parse as one of them.
			body := fmt.Sprintf(`{"pid": %d, "status": "running", "pad": %q}`+"\n", w+2, strings.Repeat("x", 1000*w))
			for range rounds {
				if err := WriteFileAtomic(path, []byte(body)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	readErrs := make(chan error, 1)
	go func() {
		defer close(readErrs)
		for {
			select {
			case <-done:
				return
			default:
			}
			data, err := os.ReadFile(path)
			if err != nil {
				continue // not written yet
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				readErrs <- fmt.Errorf("a reader saw a partial heartbeat: %v (%d bytes)", err, len(data))
				return
			}
		}
	}()
	wg.Wait()
	close(done)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for err := range readErrs {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, HeartbeatTempFile)); !os.IsNotExist(err) {
		t.Errorf("temp file left behind (stat err %v)", err)
	}
}

func TestALeftoverTempFileDoesNotBlockTheWriter(t *testing.T) {
	dir := t.TempDir()
	leftover := filepath.Join(dir, HeartbeatTempFile)
	if err := os.WriteFile(leftover, []byte(`{"pid": 1, "sta`), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(leftover, old, old); err != nil {
		t.Fatal(err)
	}
	w, err := NewHeartbeatWriter(dir, model.Heartbeat{Role: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(model.StatusRunning, 5, 1); err != nil {
		t.Fatal(err)
	}
	if got := readHeartbeatFile(t, w.Path()); got["pid"] != 5.0 {
		t.Errorf("pid = %v, want 5", got["pid"])
	}
}

func TestAWriterWaitsForAnotherWritersFreshTempFile(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, HeartbeatTempFile)
	if err := os.WriteFile(other, []byte(`{"pid": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := NewHeartbeatWriter(dir, model.Heartbeat{Role: "r"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Write(model.StatusCompleted, 5, 1) }()
	select {
	case err := <-done:
		t.Fatalf("wrote over another writer's temp file in flight (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	// The other writer renames its file into place; ours goes next.
	if err := os.Rename(other, w.Path()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := readHeartbeatFile(t, w.Path()); got["status"] != "completed" {
		t.Errorf("status = %v, want completed (written after the other writer)", got["status"])
	}
}
