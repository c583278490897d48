package scanner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// Compressed thresholds: every time-based state shows within a few seconds,
// and the quiet window (beat..stale) is wide enough for a loaded machine.
var testThresholds = model.Thresholds{
	Beat:           300 * time.Millisecond,
	Stale:          2 * time.Second,
	KillAfter:      time.Second,
	ExitGrace:      300 * time.Millisecond,
	StartTolerance: 2 * time.Second,
}

// watchModes runs every scenario under fsnotify and under polling: both must
// produce the same model.
var watchModes = []struct {
	name string
	wo   WatchOptions
	mode string
}{
	{"fsnotify", WatchOptions{Tick: 50 * time.Millisecond, Debounce: 10 * time.Millisecond}, ModeFsnotify},
	{"polling", WatchOptions{Poll: 40 * time.Millisecond, Tick: 50 * time.Millisecond}, ModePolling},
}

// self is this test process as a heartbeat names it: alive, same process,
// but never a kill candidate (kill never signals it): a test that wants
// one names a process of its own (startSleep).
func self(t *testing.T) (int, float64) {
	t.Helper()
	pid := os.Getpid()
	info := liveness.SystemProbe{}.Lookup(pid)
	if !info.Exists || info.CreateTime.IsZero() {
		t.Fatalf("cannot read this process's create time: %+v", info)
	}
	return pid, model.EpochSeconds(info.CreateTime)
}

// writeHeartbeat writes dir/.heartbeat the way writers do: temp file, rename.
func writeHeartbeat(t *testing.T, dir string, pid int, started float64, status, parent string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{"pid": pid, "started": started, "status": status,
		"parent_heartbeat": parent, "role": "worker"})
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, ".heartbeat.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	hb := filepath.Join(dir, protocol.HeartbeatFile)
	if err := os.Rename(tmp, hb); err != nil {
		t.Fatal(err)
	}
	return hb
}

func appendLine(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

// registerNeverStarted registers in lead's `.children` a child "never"
// that has no heartbeat: it is missing, and its reason quotes the
// registry's age as plain text ("registered but never started (3s ago)"),
// which the 30-tick refresh renews.
func registerNeverStarted(t *testing.T, lead string) {
	t.Helper()
	appendLine(t, filepath.Join(lead, protocol.RegistryFile), map[string]any{
		"heartbeat": filepath.Join(lead, "never", protocol.HeartbeatFile), "status": "active"})
}

func setMtime(t *testing.T, path string, mt time.Time) {
	t.Helper()
	if err := os.Chtimes(path, mt, mt); err != nil {
		t.Fatal(err)
	}
}

// runWatcher starts w.Run and stops it (and checks it returned) at cleanup.
func runWatcher(t *testing.T, w *Watcher) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Run did not return after cancel")
		}
		for range w.Updates() {
		}
	})
}

func newTestWatcher(t *testing.T, wo WatchOptions, roots ...string) *Watcher {
	t.Helper()
	w, err := NewWatcher(Options{Roots: roots, Thresholds: testThresholds}, wo)
	if err != nil {
		t.Fatal(err)
	}
	runWatcher(t, w)
	return w
}

// await reads updates until cond holds for one, collecting transitions.
func await(t *testing.T, w *Watcher, what string, cond func(*model.Snapshot) bool) []model.Transition {
	t.Helper()
	return awaitWithin(t, w, 5*time.Second, what, cond)
}

// awaitWithin is await with its own deadline.
func awaitWithin(t *testing.T, w *Watcher, within time.Duration, what string, cond func(*model.Snapshot) bool) []model.Transition {
	t.Helper()
	var trans []model.Transition
	deadline := time.After(within)
	for {
		select {
		case u, ok := <-w.Updates():
			if !ok {
				t.Fatalf("%s: updates closed", what)
			}
			trans = append(trans, u.Transitions...)
			if cond(u.Snapshot) {
				return trans
			}
		case <-deadline:
			t.Fatalf("%s: not seen within %v; last snapshot: %s", what, within, describe(w.Snapshot()))
		}
	}
}

func describe(s *model.Snapshot) string {
	var b strings.Builder
	for _, root := range s.Sessions {
		root.Walk(func(n *model.Node) {
			b.WriteString(n.ID + "=" + string(n.State))
			for _, f := range n.Flags {
				b.WriteString("," + string(f))
			}
			b.WriteString(" ")
		})
	}
	return b.String()
}

func nodeIs(id string, st model.State, flag model.Flag, want bool) func(*model.Snapshot) bool {
	return func(s *model.Snapshot) bool {
		n := s.Node(id)
		if n == nil || n.State != st {
			return false
		}
		return flag == "" || n.HasFlag(flag) == want
	}
}

func hasTransition(tr []model.Transition, id string, from, to model.State) bool {
	for _, x := range tr {
		if x.ID == id && x.From == from && x.To == to {
			return true
		}
	}
	return false
}

// TestWatchSessionCreated: SPEC §1 watching — a new session directory is
// watched and scanned, and its appearance is a transition.
func TestWatchSessionCreated(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			pid, started := self(t)
			w := newTestWatcher(t, m.wo, root)
			if got := w.Snapshot().Watch.Mode; got != m.mode {
				t.Fatalf("mode %q, want %q", got, m.mode)
			}
			writeHeartbeat(t, filepath.Join(root, "s1", "team", "w1"), pid, started, "running", "")
			writeHeartbeat(t, filepath.Join(root, "s1"), pid, started, "running", "")
			tr := await(t, w, "s1 and its nested worker running", func(s *model.Snapshot) bool {
				return nodeIs("s1", model.StateRunning, "", false)(s) &&
					nodeIs("s1/team/w1", model.StateRunning, "", false)(s) && s.Node("s1/team/w1").ParentID == "s1"
			})
			if !hasTransition(tr, "s1", "", model.StateRunning) {
				t.Errorf("no appearance transition for s1 in %+v", tr)
			}
		})
	}
}

// TestWatchChildRegisteredAndStarted: SPEC §2/§3 — a `.children` line whose
// heartbeat does not exist yet is a missing node; once it starts, running.
func TestWatchChildRegisteredAndStarted(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			pid, started := self(t)
			lead := filepath.Join(root, "lead")
			leadHB := writeHeartbeat(t, lead, pid, started, "running", "")
			w := newTestWatcher(t, m.wo, root)
			await(t, w, "lead running", nodeIs("lead", model.StateRunning, "", false))

			childDir := filepath.Join(lead, "code", "c1")
			appendLine(t, filepath.Join(lead, protocol.RegistryFile), map[string]any{
				"heartbeat": filepath.Join(childDir, protocol.HeartbeatFile), "team": "code", "task_id": "t1", "status": "active"})
			await(t, w, "registered child missing", nodeIs("lead/code/c1", model.StateMissing, "", false))

			writeHeartbeat(t, childDir, pid, started, "running", leadHB)
			tr := await(t, w, "child running", func(s *model.Snapshot) bool {
				n := s.Node("lead/code/c1")
				return n != nil && n.State == model.StateRunning && n.Entry != nil && n.Entry.Team == "code"
			})
			if !hasTransition(tr, "lead/code/c1", model.StateMissing, model.StateRunning) {
				t.Errorf("no missing -> running transition in %+v", tr)
			}
		})
	}
}

// TestWatchBeatByChtimes: SPEC §1 — a beat is an mtime bump only (Chmod);
// it must count: quiet turns back into plain running, with no re-read of
// the node and no tree rebuild.
func TestWatchBeatByChtimes(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			pid, started := self(t)
			hb := writeHeartbeat(t, filepath.Join(root, "s"), pid, started, "running", "")
			setMtime(t, hb, time.Now().Add(-500*time.Millisecond))
			w := newTestWatcher(t, m.wo, root)
			await(t, w, "quiet", nodeIs("s", model.StateRunning, model.FlagQuiet, true))

			w.stats.mu.Lock()
			rereads, rebuilds := w.stats.rereads, w.stats.rebuilds
			w.stats.mu.Unlock()
			setMtime(t, hb, time.Now())
			tr := await(t, w, "fresh again", nodeIs("s", model.StateRunning, model.FlagQuiet, false))
			found := false
			for _, x := range tr {
				found = found || x.ID == "s" && slices.Contains(x.FromFlags, model.FlagQuiet) && !slices.Contains(x.ToFlags, model.FlagQuiet)
			}
			if !found {
				t.Errorf("no quiet -> running transition in %+v", tr)
			}
			w.stats.mu.Lock()
			defer w.stats.mu.Unlock()
			if w.stats.rereads != rereads || w.stats.rebuilds != rebuilds {
				t.Errorf("a beat re-read %d nodes and rebuilt the tree %d times; want a stat only",
					w.stats.rereads-rereads, w.stats.rebuilds-rebuilds)
			}
		})
	}
}

// TestWatchTimeBasedStates: SPEC §3 — quiet, stalled and kill_candidate
// appear on the tick with no file event at all.
func TestWatchTimeBasedStates(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			// Not this test process: a record of it is never a kill
			// candidate (kill never signals it).
			cmd, started := startSleep(t)
			writeHeartbeat(t, filepath.Join(root, "s"), cmd.Process.Pid, started, "running", "")
			w := newTestWatcher(t, m.wo, root)
			for _, f := range []model.Flag{model.FlagQuiet, model.FlagStalled, model.FlagKillCandidate} {
				// Two flags may come in one snapshot, and no later one
				// repeats them.
				if is := nodeIs("s", model.StateRunning, f, true); w.Snapshot() == nil || !is(w.Snapshot()) {
					await(t, w, string(f), is)
				}
			}
		})
	}
}

// TestWatchAtomicRewriteCompleted: SPEC §1 — a rewrite through
// `.heartbeat.tmp` is read once it lands; status completed is finished.
func TestWatchAtomicRewriteCompleted(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			pid, started := self(t)
			dir := filepath.Join(root, "s")
			writeHeartbeat(t, dir, pid, started, "running", "")
			w := newTestWatcher(t, m.wo, root)
			await(t, w, "running", nodeIs("s", model.StateRunning, "", false))
			writeHeartbeat(t, dir, pid, started, "completed", "")
			tr := await(t, w, "finished", nodeIs("s", model.StateFinished, "", false))
			if !hasTransition(tr, "s", model.StateRunning, model.StateFinished) {
				t.Errorf("no running -> finished transition in %+v", tr)
			}
		})
	}
}

// TestWatchProcessKilledExitGrace: SPEC §3 dead (b) — the pid is verified
// gone and the beat is older than the exit grace: dead with no file event.
func TestWatchProcessKilledExitGrace(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			cmd := exec.Command("sleep", "60")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			info := liveness.SystemProbe{}.Lookup(cmd.Process.Pid)
			writeHeartbeat(t, filepath.Join(root, "s"), cmd.Process.Pid,
				float64(info.CreateTime.UnixNano())/1e9, "running", "")
			// Long thresholds but the exit grace: only the fast path can kill it.
			w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: model.Thresholds{
				Beat: time.Minute, Stale: 2 * time.Minute, KillAfter: 5 * time.Minute,
				ExitGrace: 300 * time.Millisecond, StartTolerance: 2 * time.Second}}, m.wo)
			if err != nil {
				t.Fatal(err)
			}
			runWatcher(t, w)
			await(t, w, "running", nodeIs("s", model.StateRunning, "", false))
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			tr := await(t, w, "dead", nodeIs("s", model.StateDead, "", false))
			if !hasTransition(tr, "s", model.StateRunning, model.StateDead) {
				t.Errorf("no running -> dead transition in %+v", tr)
			}
		})
	}
}

// TestWatchSessionDeleted: SPEC §1 — a vanished directory is dropped with
// its watches, and its nodes vanish as transitions.
func TestWatchSessionDeleted(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			pid, started := self(t)
			writeHeartbeat(t, filepath.Join(root, "a"), pid, started, "running", "")
			writeHeartbeat(t, filepath.Join(root, "b", "team", "w"), pid, started, "running", "")
			writeHeartbeat(t, filepath.Join(root, "b"), pid, started, "running", "")
			w := newTestWatcher(t, m.wo, root)
			await(t, w, "b running", nodeIs("b/team/w", model.StateRunning, "", false))
			if err := os.RemoveAll(filepath.Join(root, "b")); err != nil {
				t.Fatal(err)
			}
			tr := await(t, w, "b gone", func(s *model.Snapshot) bool {
				return s.Node("b") == nil && s.Node("b/team/w") == nil && s.Node("a") != nil
			})
			if !hasTransition(tr, "b/team/w", model.StateRunning, "") {
				t.Errorf("no vanishing transition in %+v", tr)
			}
			// Wait for the loop to settle, then no directory of b is held.
			time.Sleep(100 * time.Millisecond)
			w.Refresh()
			await(t, w, "refresh", func(*model.Snapshot) bool { return true })
			if w.fsw != nil {
				for _, p := range w.fsw.WatchList() {
					if strings.HasPrefix(p, filepath.Join(root, "b")) {
						t.Errorf("watch kept on deleted %s", p)
					}
				}
			}
		})
	}
}

// TestWatchRegistryCompacted: SPEC §1/§5.3 — a registry rewritten smaller
// (new inode) under the watcher is read whole again.
func TestWatchRegistryCompacted(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			pid, started := self(t)
			lead := filepath.Join(root, "lead")
			writeHeartbeat(t, lead, pid, started, "running", "")
			reg := filepath.Join(lead, protocol.RegistryFile)
			for _, c := range []string{"x", "y", "z"} {
				appendLine(t, reg, map[string]any{"heartbeat": filepath.Join(lead, c, protocol.HeartbeatFile),
					"team": "t", "task_id": nil, "status": "active"})
			}
			w := newTestWatcher(t, m.wo, root)
			await(t, w, "three missing", func(s *model.Snapshot) bool {
				return s.Node("lead/x") != nil && s.Node("lead/y") != nil && s.Node("lead/z") != nil
			})
			tmp := reg + ".tmp"
			b, _ := json.Marshal(map[string]any{"heartbeat": filepath.Join(lead, "y", protocol.HeartbeatFile),
				"team": "t", "task_id": nil, "status": "active"})
			if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, reg); err != nil {
				t.Fatal(err)
			}
			await(t, w, "only y left", func(s *model.Snapshot) bool {
				n := s.Node("lead")
				return s.Node("lead/x") == nil && s.Node("lead/z") == nil && s.Node("lead/y") != nil &&
					n != nil && len(n.RegistryLines()) == 1
			})
			// An append after compaction is read from the new file's offset.
			appendLine(t, reg, map[string]any{"heartbeat": filepath.Join(lead, "q", protocol.HeartbeatFile),
				"team": "t", "task_id": nil, "status": "active"})
			await(t, w, "appended q", func(s *model.Snapshot) bool {
				n := s.Node("lead")
				return s.Node("lead/q") != nil && n != nil && len(n.RegistryLines()) == 2 && n.RegistryLines()[1].Number == 2
			})
		})
	}
}

// TestWatchRegistryTornLine: SPEC §1 — a torn last line is an append in
// flight; once its newline lands the entry is read.
func TestWatchRegistryTornLine(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			pid, started := self(t)
			lead := filepath.Join(root, "lead")
			writeHeartbeat(t, lead, pid, started, "running", "")
			reg := filepath.Join(lead, protocol.RegistryFile)
			appendLine(t, reg, map[string]any{"heartbeat": filepath.Join(lead, "a", protocol.HeartbeatFile), "status": "active"})
			w := newTestWatcher(t, m.wo, root)
			await(t, w, "a missing", nodeIs("lead/a", model.StateMissing, "", false))
			line, _ := json.Marshal(map[string]any{"heartbeat": filepath.Join(lead, "b", protocol.HeartbeatFile), "status": "active"})
			f, err := os.OpenFile(reg, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Write(line[:10]); err != nil {
				t.Fatal(err)
			}
			await(t, w, "torn line held", func(s *model.Snapshot) bool {
				n := s.Node("lead")
				return n != nil && len(n.RegistryLines()) == 2 && n.RegistryLines()[1].Torn
			})
			if _, err := f.Write(append(line[10:], '\n')); err != nil {
				t.Fatal(err)
			}
			await(t, w, "b registered", func(s *model.Snapshot) bool {
				n := s.Node("lead")
				return s.Node("lead/b") != nil && n != nil && len(n.RegistryLines()) == 2 && !n.RegistryLines()[1].Torn
			})
		})
	}
}

// TestWatchRootGivenTwiceOrNested: SPEC §2 — every node appears once, with
// the same id, however the roots overlap.
func TestWatchRootGivenTwiceOrNested(t *testing.T) {
	root := t.TempDir()
	pid, started := self(t)
	writeHeartbeat(t, filepath.Join(root, "s", "team", "w"), pid, started, "running", "")
	writeHeartbeat(t, filepath.Join(root, "s"), pid, started, "running", "")
	tests := []struct {
		name  string
		roots []string
	}{
		{"twice", []string{root, root}},
		{"nested", []string{root, filepath.Join(root, "s")}},
		{"nested inner first", []string{filepath.Join(root, "s"), root}},
	}
	for _, tt := range tests {
		for _, m := range watchModes {
			t.Run(tt.name+"/"+m.name, func(t *testing.T) {
				w := newTestWatcher(t, m.wo, tt.roots...)
				writeHeartbeat(t, filepath.Join(root, "s", "team", "w2"), pid, started, "running", "")
				t.Cleanup(func() { _ = os.RemoveAll(filepath.Join(root, "s", "team", "w2")) })
				await(t, w, "w2 seen", nodeIs("s/team/w2", model.StateRunning, "", false))
				snap := w.Snapshot()
				ids := []string{}
				for _, s := range snap.Sessions {
					s.Walk(func(n *model.Node) { ids = append(ids, n.ID) })
				}
				want := []string{"s", "s/team/w", "s/team/w2"}
				if !slices.Equal(ids, want) {
					t.Errorf("ids %v, want %v", ids, want)
				}
			})
		}
	}
}

// TestWatchLimitFallback: SPEC §8 — past the watch limit (the kernel's,
// ENOSPC, or a configured one) the remaining directories are polled, the
// mode says mixed with the reason, and changes there are still seen.
func TestWatchLimitFallback(t *testing.T) {
	tests := []struct {
		name       string
		wo         WatchOptions
		wantReason string
	}{
		{"max watches", WatchOptions{MaxWatches: 2}, "watch limit of 2 reached"},
		{"kernel limit", WatchOptions{addWatch: func(fsw *fsnotify.Watcher, dir string) error {
			if len(fsw.WatchList()) >= 2 {
				return fmt.Errorf("add watch %s: %w", dir, syscall.ENOSPC)
			}
			return fsw.Add(dir)
		}}, "inotify watch limit reached after 2 watches"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			pid, started := self(t)
			for _, s := range []string{"a", "b", "c", "d"} {
				writeHeartbeat(t, filepath.Join(root, s), pid, started, "running", "")
			}
			hb := filepath.Join(root, "d", protocol.HeartbeatFile)
			setMtime(t, hb, time.Now().Add(-500*time.Millisecond))
			wo := tt.wo
			wo.Tick, wo.FallbackPoll = 50*time.Millisecond, 40*time.Millisecond
			w := newTestWatcher(t, wo, root)
			info := w.Snapshot().Watch
			if info.Mode != ModeMixed || !strings.Contains(info.Reason, tt.wantReason) ||
				!strings.Contains(info.Reason, "3 of 5 directories polled") || info.Interval != 40*time.Millisecond {
				t.Fatalf("watch info %+v, want mixed, 3 of 5 polled, because %q", info, tt.wantReason)
			}
			await(t, w, "d quiet", nodeIs("d", model.StateRunning, model.FlagQuiet, true))
			setMtime(t, hb, time.Now())
			await(t, w, "d beat seen by polling", nodeIs("d", model.StateRunning, model.FlagQuiet, false))
			writeHeartbeat(t, filepath.Join(root, "e"), pid, started, "running", "")
			await(t, w, "new session under polling", nodeIs("e", model.StateRunning, "", false))
		})
	}
}

// TestWatchNetworkRootPolled: SPEC §1 — a root on NFS/SMB is polled and the
// header is warned that mtime liveness is unreliable there.
func TestWatchNetworkRootPolled(t *testing.T) {
	root := t.TempDir()
	pid, started := self(t)
	hb := writeHeartbeat(t, filepath.Join(root, "s"), pid, started, "running", "")
	setMtime(t, hb, time.Now().Add(-500*time.Millisecond))
	w := newTestWatcher(t, WatchOptions{Tick: 50 * time.Millisecond, FallbackPoll: 40 * time.Millisecond,
		netFS: func(string) string { return "NFS" }}, root)
	info := w.Snapshot().Watch
	if info.Mode != ModePolling || len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "NFS") {
		t.Fatalf("watch info %+v, want polling with an NFS warning", info)
	}
	setMtime(t, hb, time.Now())
	await(t, w, "beat seen by polling", nodeIs("s", model.StateRunning, model.FlagQuiet, false))
}

// TestWatchOverflowRestat: SPEC §1 — a queue overflow means lost events: the
// engine re-stats what it holds and counts the overflow. Refresh (after an
// action) re-stats the same way.
func TestWatchOverflowRestat(t *testing.T) {
	tests := []struct {
		name          string
		lose          func(w *Watcher)
		wantOverflows int
	}{
		{"overflow", func(w *Watcher) { w.fsw.Errors <- fsnotify.ErrEventOverflow }, 1},
		{"refresh", func(w *Watcher) { w.Refresh() }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			pid, started := self(t)
			dir := filepath.Join(root, "s")
			hb := writeHeartbeat(t, dir, pid, started, "running", "")
			setMtime(t, hb, time.Now().Add(-500*time.Millisecond))
			w := newTestWatcher(t, WatchOptions{Tick: 50 * time.Millisecond}, root)
			await(t, w, "quiet", nodeIs("s", model.StateRunning, model.FlagQuiet, true))
			// Lose the event on purpose: no watch on the dir while it beats.
			if err := w.fsw.Remove(dir); err != nil {
				t.Fatal(err)
			}
			setMtime(t, hb, time.Now())
			time.Sleep(100 * time.Millisecond)
			if n := w.Snapshot().Node("s"); !n.HasFlag(model.FlagQuiet) {
				t.Fatal("the beat was seen without its event; the test proves nothing")
			}
			tt.lose(w)
			await(t, w, "beat found by the re-stat", func(s *model.Snapshot) bool {
				return s.Watch.Overflows == tt.wantOverflows && !s.Node("s").HasFlag(model.FlagQuiet)
			})
		})
	}
}

// TestWatchBurstCoalesces: SPEC §8 / STYLE — a thousand touches make one
// update after the first, not a thousand.
func TestWatchBurstCoalesces(t *testing.T) {
	root := t.TempDir()
	pid, started := self(t)
	hb := writeHeartbeat(t, filepath.Join(root, "s"), pid, started, "running", "")
	w := newTestWatcher(t, WatchOptions{Tick: time.Hour, Debounce: 100 * time.Millisecond}, root)
	<-w.Updates() // the initial snapshot
	w.stats.mu.Lock()
	before := w.stats.publishes
	w.stats.mu.Unlock()
	last := time.Now()
	for i := range 1000 {
		setMtime(t, hb, last.Add(time.Duration(i)*time.Microsecond))
	}
	want := last.Add(999 * time.Microsecond)
	await(t, w, "last touch", func(s *model.Snapshot) bool { return s.Node("s").BeatMtime.Equal(want) })
	time.Sleep(300 * time.Millisecond)
	w.stats.mu.Lock()
	defer w.stats.mu.Unlock()
	if got := w.stats.publishes - before; got < 1 || got > 2 {
		t.Errorf("1000 touches made %d updates, want 1 or 2", got)
	}
}

// TestWatchSlowReceiverMerges: the watcher never blocks on its consumer; an
// unread update is merged into the next (every transition kept).
func TestWatchSlowReceiverMerges(t *testing.T) {
	root := t.TempDir()
	pid, started := self(t)
	w := newTestWatcher(t, WatchOptions{Tick: 20 * time.Millisecond, Debounce: 5 * time.Millisecond}, root)
	for _, s := range []string{"a", "b", "c"} {
		writeHeartbeat(t, filepath.Join(root, s), pid, started, "running", "")
		time.Sleep(60 * time.Millisecond) // several publishes nobody reads
	}
	time.Sleep(100 * time.Millisecond)
	u := <-w.Updates()
	if u.Snapshot.Node("c") == nil {
		t.Fatalf("newest snapshot not delivered: %s", describe(u.Snapshot))
	}
	for _, id := range []string{"a", "b", "c"} {
		if !hasTransition(u.Transitions, id, "", model.StateRunning) {
			t.Errorf("merged update lacks %s: transitions %+v", id, u.Transitions)
		}
	}
}

// TestWatchSnapshotImmutable: a published snapshot is never written again
// (run under -race: the watcher keeps going while this reads).
func TestWatchSnapshotImmutable(t *testing.T) {
	root := t.TempDir()
	pid, started := self(t)
	hb := writeHeartbeat(t, filepath.Join(root, "s"), pid, started, "running", "")
	w := newTestWatcher(t, WatchOptions{Tick: 5 * time.Millisecond, Debounce: time.Millisecond}, root)
	first := <-w.Updates()
	mt := first.Snapshot.Node("s").BeatMtime
	for i := range 50 {
		setMtime(t, hb, time.Now().Add(time.Duration(i)*time.Millisecond))
		first.Snapshot.Node("s").Walk(func(n *model.Node) { _ = n.State; _ = n.Flags; _ = n.BeatMtime })
		time.Sleep(2 * time.Millisecond)
	}
	if got := first.Snapshot.Node("s").BeatMtime; !got.Equal(mt) {
		t.Errorf("published snapshot changed under its reader: %v -> %v", mt, got)
	}
}

// TestWatchNoGoroutineLeak: Run returns on cancel, closes Updates and leaves
// no goroutine behind (fsnotify's reader included).
func TestWatchNoGoroutineLeak(t *testing.T) {
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
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			<-w.Updates()
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			for range w.Updates() {
			}
			if err := w.Run(context.Background()); err == nil {
				t.Error("a second Run did not fail")
			}
			goroutinesBack(t, before)
		})
	}
}

// TestWatchNoRoot: NewWatcher fails, saying where, when no root is readable.
func TestWatchNoRoot(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	_, err := NewWatcher(Options{Roots: []string{missing}}, WatchOptions{})
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("err %v, want one naming %s", err, missing)
	}
}

// TestWatchTickAdvancesAges: SPEC §3 — ages advance on the tick with no file
// event. The beat's age in a reason moves at the reader's clock with no new
// snapshot (model.Node.ReasonAt); an age quoted as plain text ("registered
// but never started (3s ago)") is refreshed by the ticks.
func TestWatchTickAdvancesAges(t *testing.T) {
	root := t.TempDir()
	pid, started := self(t)
	lead := filepath.Join(root, "s")
	writeHeartbeat(t, lead, pid, started, "running", "")
	registerNeverStarted(t, lead)
	th := model.DefaultThresholds()
	w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: th}, WatchOptions{Tick: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runWatcher(t, w)
	first := <-w.Updates()
	s := first.Snapshot.Node("s")
	if now, later := s.ReasonAt(first.Snapshot.GeneratedAt), s.ReasonAt(first.Snapshot.GeneratedAt.Add(time.Minute)); now == later {
		t.Errorf("the beat's age does not move with the clock: %q a minute later", later)
	}
	const never = "s/never"
	reason0, at0 := first.Snapshot.Node(never).Reason, first.Snapshot.GeneratedAt
	if !strings.Contains(reason0, " ago)") {
		t.Fatalf("%s: reason %q quotes no age", never, reason0)
	}
	await(t, w, "the plain-text age refreshed", func(s *model.Snapshot) bool {
		return s.GeneratedAt.After(at0) && s.Node(never).Reason != reason0
	})
}

// TestWatchSameAsScan: the live engine's first snapshot is the one-off
// scan's — same nodes, tree, states, flags and actions — under fsnotify and
// polling alike.
func TestWatchSameAsScan(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	if err := treegen.Generate(root, 5, 7, 3, now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	pid, started := self(t)
	lead := filepath.Join(root, "extra")
	writeHeartbeat(t, lead, pid, started, "running", "")
	appendLine(t, filepath.Join(lead, protocol.RegistryFile), map[string]any{
		"heartbeat": filepath.Join(lead, "never", protocol.HeartbeatFile), "status": "active"})
	writeHeartbeat(t, filepath.Join(lead, "done"), pid, started, "completed", filepath.Join(lead, protocol.HeartbeatFile))
	opts := Options{Roots: []string{root}, Now: func() time.Time { return now }}
	want, err := Scan(opts)
	if err != nil {
		t.Fatal(err)
	}
	flat := func(s *model.Snapshot) []string {
		var out []string
		for _, r := range s.Sessions {
			r.Walk(func(n *model.Node) {
				out = append(out, fmt.Sprintf("%s parent=%s %s %v %s", n.ID, n.ParentID, n.State, n.Flags, n.Action))
			})
		}
		return out
	}
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			w, err := NewWatcher(opts, m.wo)
			if err != nil {
				t.Fatal(err)
			}
			got, exp := flat(w.Snapshot()), flat(want)
			if len(exp) < 36 {
				t.Fatalf("scan found only %d nodes", len(exp))
			}
			if !slices.Equal(got, exp) {
				t.Errorf("watcher snapshot differs from scan:\n got %q\nwant %q", got, exp)
			}
			_ = w.Close()
		})
	}
}
