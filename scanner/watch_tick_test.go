package scanner

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

// startSleep starts a real process for a heartbeat to name; it is killed and
// reaped at cleanup at the latest. It returns the command and its `started`.
func startSleep(t *testing.T) (*exec.Cmd, float64) {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) }
	t.Cleanup(stop)
	info := liveness.SystemProbe{}.Lookup(cmd.Process.Pid)
	if !info.Exists || info.CreateTime.IsZero() {
		t.Fatalf("cannot read the create time of sleep %d: %+v", cmd.Process.Pid, info)
	}
	return cmd, float64(info.CreateTime.UnixNano()) / 1e9
}

// touchUntilDone bumps hb's mtime every interval until the test ends.
func touchUntilDone(t *testing.T, hb string, every time.Duration) {
	t.Helper()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(every):
			}
			now := time.Now()
			_ = os.Chtimes(hb, now, now)
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

// SPEC §3: time-based states change without any file event, and a steady
// stream of events elsewhere must not starve the tick. One session beats
// every millisecond, so a flush is nearly always pending; another session's
// process is killed: it must turn dead within a tick and a debounce, not
// whenever a tick happens to land in a gap between flushes. The debounce is
// long and the tick not a divisor of it, so such gaps are rare and the tick
// seldom lands in one by chance.
func TestWatchTickNotStarvedByEvents(t *testing.T) {
	modes := []struct {
		name string
		wo   WatchOptions
	}{
		{"fsnotify", WatchOptions{Tick: 130 * time.Millisecond, Debounce: 2500 * time.Millisecond}},
		{"polling", WatchOptions{Poll: 2 * time.Millisecond, Tick: 130 * time.Millisecond, Debounce: 2500 * time.Millisecond}},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			pid, started := self(t)
			busy := writeHeartbeat(t, filepath.Join(root, "busy"), pid, started, "running", "")
			cmd, sleepStarted := startSleep(t)
			writeHeartbeat(t, filepath.Join(root, "victim"), cmd.Process.Pid, sleepStarted, "running", "")
			th := model.Thresholds{Beat: time.Minute, Stale: 2 * time.Minute, KillAfter: 5 * time.Minute,
				ExitGrace: 200 * time.Millisecond, StartTolerance: 2 * time.Second}
			w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: th}, m.wo)
			if err != nil {
				t.Fatal(err)
			}
			runWatcher(t, w)
			await(t, w, "victim running", nodeIs("victim", model.StateRunning, "", false))
			touchUntilDone(t, busy, time.Millisecond)
			time.Sleep(300 * time.Millisecond) // past the exit grace, in the event stream
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			// A tick and a debounce (2.6 s) at most; 8 s leaves a loaded
			// machine room.
			awaitWithin(t, w, 8*time.Second, "victim dead", nodeIs("victim", model.StateDead, "", false))
		})
	}
}
