package actions

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/chatroom"
)

// innocentSleep is a process no store of any system started: a `sleep`
// that lives until the test ends, unless something kills it.
func innocentSleep(t *testing.T) int {
	t.Helper()
	c := exec.Command("sleep", "300")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = c.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = c.Process.Kill()
		<-done
	})
	return c.Process.Pid
}

// mustSurvive runs kill (as `dispatchtop kill` does), the dashboard's `x`
// (the same engine, given the watcher's snapshot as a hint) and
// `recover --apply --kill-stalled` against node, and fails if any of them
// ends pid or is not refused.
func mustSurvive(t *testing.T, e *Engine, node string, pid int) {
	t.Helper()
	ctx := context.Background()
	req := Request{Action: model.ActionKill, Node: node, Grace: time.Second}
	res, err := e.Run(ctx, req)
	if err != nil || !res.Refused || res.Outcome != OutcomeRefused {
		t.Errorf("kill %s: %s: %s (%v), want refused", node, res.Outcome, res.Message, err)
	}
	snap, err := e.scanRoots()
	if err != nil {
		t.Fatal(err)
	}
	res, err = e.RunWithHint(ctx, req, snap)
	if err != nil || !res.Refused {
		t.Errorf("the dashboard's x on %s: %s: %s (%v), want refused", node, res.Outcome, res.Message, err)
	}
	results, err := e.Recover(ctx, true, true)
	if err != nil {
		t.Fatalf("recover --apply --kill-stalled: %v", err)
	}
	for _, r := range results {
		if r.Action == model.ActionKill && r.Outcome == OutcomeDone {
			t.Errorf("recover --apply --kill-stalled killed %s: %s", r.NodeID, r.Message)
		}
	}
	if !processAlive(pid) {
		t.Fatalf("pid %d, a process no store started, was killed", pid)
	}
}

// writeChatroomAgent writes a chatroom store whose daemon state names one
// agent, pid, stamped startedAt, and returns the store and the node's id.
func writeChatroomAgent(t *testing.T, pid int, startedAt string) (store, node string) {
	t.Helper()
	const machine = "6b0f2d9e-3c47-4a8e-9b15-d2e7a4c1f386"
	store = filepath.Join(t.TempDir(), ".chatroom")
	if err := os.MkdirAll(filepath.Join(store, "machines", "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	state := map[string]any{"version": "1", "machineId": machine, "updatedAt": time.Now().UTC().Format(time.RFC3339Nano),
		"agents": map[string]any{"room-1/builder": map[string]any{"pid": pid, "harness": "claude-sdk", "startedAt": startedAt}}}
	b, err := json.Marshal(state)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, "machines", "state", machine+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return store, machine + "/room-1/builder"
}

// SPEC §5.1, §9: a time no process of this host can have been created at
// never verifies a pid, in any source. chatroom's startedAt 2^64 ns after a
// process's create time (the year 2611) once read as that very create
// time (float64(UnixNano()) wraps), and the process was killed.
func TestAnImplausibleStartedNeverVerifiesAChatroomPid(t *testing.T) {
	pid := innocentSleep(t)
	created := model.TimeOfEpochSeconds(testproc.Started(t, pid))
	wrapped := created.Add(math.MaxInt64).Add(math.MaxInt64).Add(2) // + 2^64 ns
	tests := []struct {
		name      string
		startedAt time.Time
		why       string // what the refusal says
	}{
		{name: "2^64 ns after its create time (2611)", startedAt: wrapped, why: "is in the future"},
		{name: "a century ahead", startedAt: created.AddDate(100, 0, 0), why: "is in the future"},
		{name: "2^64 ns before its create time (1430)", startedAt: created.Add(math.MinInt64).Add(math.MinInt64), why: "predates the last boot"},
		{name: "before 1970", startedAt: time.Date(1969, 7, 20, 20, 17, 0, 0, time.UTC), why: "predates the last boot"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store, node := writeChatroomAgent(t, pid, tc.startedAt.UTC().Format("2006-01-02T15:04:05.000Z"))
			e := New(EngineOptions{Scan: scanner.Options{Roots: []string{store}, Thresholds: model.DefaultThresholds(),
				Sources: []sources.Source{chatroom.Source{}}, Now: time.Now}})
			snap, err := e.scanRoots()
			if err != nil {
				t.Fatal(err)
			}
			n := snap.Node(node)
			if n == nil {
				t.Fatalf("no node %s in the snapshot", node)
			}
			if n.Process == model.ProcessAlive || n.HasFlag(model.FlagKillCandidate) {
				t.Errorf("the classifier took pid %d for the agent's process: %s, flags %v (%s)", pid, n.Process, n.Flags, n.Reason)
			}
			mustSurvive(t, e, node, pid)
			res, _ := e.Run(context.Background(), Request{Action: model.ActionKill, Node: node})
			if !strings.Contains(res.Message, tc.why) {
				t.Errorf("kill says %q: want why the pid is not the agent's (%s)", res.Message, tc.why)
			}
		})
	}
}

// SPEC §5.1: a legacy `.running` has no started; its pid is the process
// only if that process existed when the file was written. A mtime a
// century ahead is passed by every process, so it verifies none.
func TestAnImplausibleRunningMtimeNeverVerifiesItsPid(t *testing.T) {
	pid := innocentSleep(t)
	root := t.TempDir()
	infra := filepath.Join(root, "legacy")
	if err := os.MkdirAll(infra, 0o755); err != nil {
		t.Fatal(err)
	}
	running := filepath.Join(infra, ".running")
	if err := os.WriteFile(running, []byte(strconv.Itoa(pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	ahead := time.Now().AddDate(100, 0, 0)
	if err := os.Chtimes(running, ahead, ahead); err != nil {
		t.Fatal(err)
	}
	e := testEngine(root, model.DefaultThresholds(), Config{})
	mustSurvive(t, e, infra, pid)
	res, _ := e.Run(context.Background(), Request{Action: model.ActionKill, Node: infra})
	if !strings.Contains(res.Message, "cannot be verified (.running") || !strings.Contains(res.Message, "in the future") {
		t.Errorf("kill says %q: want that .running's time is in the future", res.Message)
	}
}

// SPEC §5.1, §9: the same for the file protocol's own `started`: a value
// no process of this host can have been created at — 2^64 ns after the
// process's create time, beyond what a time holds, before 1970 — verifies
// nothing, and the process survives.
func TestAnImplausibleStartedNeverVerifiesANativePid(t *testing.T) {
	pid := innocentSleep(t)
	created := testproc.Started(t, pid)
	for _, tc := range []struct {
		name    string
		started float64
	}{
		{name: "2^64 ns after its create time", started: created + 18_446_744_073.709551616},
		{name: "beyond what a time holds", started: 1e300},
		{name: "before 1970", started: -5},
		{name: "before the boot", started: created - 50*365*86400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeNode(t, root, nodeSpec{dir: "s", pid: pid, started: tc.started, status: "running", age: time.Hour})
			mustSurvive(t, testEngine(root, model.DefaultThresholds(), Config{}), "s", pid)
		})
	}
}
