package chatroom

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

// The fixture is a ~/.chatroom as the daemon writes it (daemon-state.ts,
// storage.ts, pid.ts), read at this clock.
var fixtureNow = mustTime("2026-02-11T10:05:00.000Z")

const (
	fixtureHome = "../../testdata/sources/chatroom/home"
	machineID   = "6b0f2d9e-3c47-4a8e-9b15-d2e7a4c1f386"
)

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func fixtureStore(t *testing.T) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join(fixtureHome, ".chatroom"))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// copyStore copies the fixture's .chatroom into a temp dir to change it.
func copyStore(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	src := fixtureStore(t)
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func byID(nodes []*model.Node) map[string]*model.Node {
	m := map[string]*model.Node{}
	for _, n := range nodes {
		m[n.ID] = n
	}
	return m
}

func field(n *model.Node, name string) string {
	for _, f := range n.SourceFields() {
		if f.Name == name {
			return f.Value
		}
	}
	return "<absent>"
}

func statePath(store string) string {
	return filepath.Join(store, "machines", "state", machineID+".json")
}

// TestMappingRules checks each row of the mapping (docs/sources.md,
// ## chatroom) on the fixture store.
func TestMappingRules(t *testing.T) {
	store := fixtureStore(t)
	facts := Source{}.Read(fixtureHome, fixtureNow)
	nodes := byID(facts.Nodes)
	state := statePath(store)
	agentTraits := model.Traits{BeatNotRequired: true, StartSlack: 120 * time.Second, SignOfLife: model.SignStart}

	tests := []struct {
		rule       string
		id         string
		pid        int
		started    string // "" for unknown
		role, team string
		parent     string
		key        string
		traits     model.Traits
		wantFields map[string]string
	}{
		{
			rule: "the daemon is a session whose pid comes from the pid file machine.json links", id: machineID,
			pid: 51234, role: "daemon", key: state,
			traits:     model.Traits{BeatNotRequired: true, SignOfLife: model.SignStart},
			wantFields: map[string]string{"hostname": "devbox", "backend": "https://chatroom-cloud.duskfare.com", "pid file": "daemon-5931b02f.pid", "agents": "4"},
		},
		{
			rule: "an entry is a pid-only node under its daemon, started from startedAt", id: machineID + "/jd7a3k9m2x4q8r1t5v6w0y2z3b4c5d6e/planner",
			pid: 51390, started: "2026-02-11T09:31:07.052Z", role: "planner", team: "jd7a3k9m2x4q8r1t5v6w0y2z3b4c5d6e",
			parent: state, key: state + "#jd7a3k9m2x4q8r1t5v6w0y2z3b4c5d6e/planner", traits: agentTraits,
			wantFields: map[string]string{"harness": "claude", "pid is": "the agent's CLI process"},
		},
		{
			rule: "an opencode-sdk entry's pid is its opencode serve", id: machineID + "/jd7a3k9m2x4q8r1t5v6w0y2z3b4c5d6e/builder",
			pid: 51477, started: "2026-02-11T09:31:19.930Z", role: "builder", team: "jd7a3k9m2x4q8r1t5v6w0y2z3b4c5d6e",
			parent: state, key: state + "#jd7a3k9m2x4q8r1t5v6w0y2z3b4c5d6e/builder", traits: agentTraits,
			wantFields: map[string]string{"harness": "opencode-sdk", "pid is": "the agent's own `opencode serve`"},
		},
		{
			rule: "an sdk entry's pid is a keeper", id: machineID + "/jd7f0p2s4u6w8y1a3c5e7g9i1k3m5o7q/solo",
			pid: 52811, started: "2026-02-11T10:03:12.417Z", role: "solo", team: "jd7f0p2s4u6w8y1a3c5e7g9i1k3m5o7q",
			parent: state, key: state + "#jd7f0p2s4u6w8y1a3c5e7g9i1k3m5o7q/solo", traits: agentTraits,
			wantFields: map[string]string{"harness": "claude-sdk", "pid is": "a keeper process: the session runs inside the daemon"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			n := nodes[tt.id]
			if n == nil {
				t.Fatalf("no node %q among %d", tt.id, len(facts.Nodes))
			}
			hb := n.Heartbeat
			if n.Source != "chatroom" || !n.HasHeartbeat || hb == nil {
				t.Fatalf("source %q, has record %v, heartbeat %v", n.Source, n.HasHeartbeat, hb)
			}
			if n.HeartbeatPath != tt.key {
				t.Errorf("key %q, want %q", n.HeartbeatPath, tt.key)
			}
			// Never finished: an entry is deleted when its agent stops.
			if hb.Status != model.StatusRunning {
				t.Errorf("status %q, want running", hb.Status)
			}
			if hb.PID != tt.pid || hb.Role != tt.role || hb.Optional().Team != tt.team {
				t.Errorf("pid %d role %q team %q, want %d %q %q", hb.PID, hb.Role, hb.Optional().Team, tt.pid, tt.role, tt.team)
			}
			if !hb.HasParentField || hb.ParentHeartbeat != tt.parent {
				t.Errorf("parent %q (declared %v), want %q", hb.ParentHeartbeat, hb.HasParentField, tt.parent)
			}
			if tt.started != "" {
				want := mustTime(tt.started)
				if !hb.StartedTime().Round(time.Millisecond).Equal(want) || !n.BeatMtime.Equal(want) {
					t.Errorf("started %s beat %s, want both %s", hb.StartedTime(), n.BeatMtime, want)
				}
			} else if hb.Started != 0 {
				t.Errorf("started %v: the daemon's create time is not written", hb.Started)
			}
			if n.Traits != tt.traits {
				t.Errorf("traits %+v, want %+v", n.Traits, tt.traits)
			}
			for name, want := range tt.wantFields {
				if got := field(n, name); got != want {
					t.Errorf("field %q = %q, want %q", name, got, want)
				}
			}
		})
	}
}

// TestTempAndWorkspaceFilesAreIgnored: the state file's temp and the
// workspace-command pgids are neither nodes nor problems.
func TestTempAndWorkspaceFilesAreIgnored(t *testing.T) {
	facts := Source{}.Read(fixtureHome, fixtureNow)
	if len(facts.Nodes) != 5 || len(facts.Problems) != 0 {
		t.Errorf("%d nodes, problems %+v; want 5 (a daemon, 4 agents) and none", len(facts.Nodes), facts.Problems)
	}
}

// TestPIDFileName: the pid file is named by the first 8 hex digits of the
// sha256 of the backend URL (pid.ts getUrlHash).
func TestPIDFileName(t *testing.T) {
	if got := PIDFileName("https://chatroom-cloud.duskfare.com"); got != "daemon-5931b02f.pid" {
		t.Errorf("PIDFileName = %s", got)
	}
}

// TestDaemonRules: how the daemon node follows its pid file and state.
func TestDaemonRules(t *testing.T) {
	empty := `{"version": "1", "machineId": "` + machineID + `", "updatedAt": "2026-02-11T10:06:40.902Z", "agents": {}}`
	tests := []struct {
		rule        string
		change      func(t *testing.T, store string)
		wantNodes   int
		wantPID     int
		wantBeat    string // "" to skip
		wantBeatReq bool
	}{
		{
			rule:      "a daemon whose pid file is gone but whose entries remain has no pid, its beat the last state write",
			change:    func(t *testing.T, store string) { remove(t, filepath.Join(store, "daemon-5931b02f.pid")) },
			wantNodes: 5, wantPID: 0, wantBeat: "2026-02-11T10:03:12.418Z", wantBeatReq: true,
		},
		{
			rule: "a daemon with no pid file and no entries is not shown",
			change: func(t *testing.T, store string) {
				remove(t, filepath.Join(store, "daemon-5931b02f.pid"))
				write(t, statePath(store), empty)
			},
			wantNodes: 0,
		},
		{
			rule:      "a daemon with a pid file and no entries (after recover) is shown alone",
			change:    func(t *testing.T, store string) { write(t, statePath(store), empty) },
			wantNodes: 1, wantPID: 51234,
		},
		{
			rule: "a pid file of another backend is not this machine's",
			change: func(t *testing.T, store string) {
				remove(t, filepath.Join(store, "daemon-5931b02f.pid"))
				write(t, filepath.Join(store, PIDFileName("https://other.example")), "777")
			},
			wantNodes: 5, wantPID: 0, wantBeatReq: true,
		},
		{
			rule: "a daemon running with no state file yet is shown alone",
			change: func(t *testing.T, store string) {
				remove(t, statePath(store))
			},
			wantNodes: 1, wantPID: 51234,
		},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			store := copyStore(t)
			tt.change(t, store)
			facts := Source{}.Read(store, fixtureNow)
			if len(facts.Nodes) != tt.wantNodes || len(facts.Problems) != 0 {
				t.Fatalf("%d nodes, problems %+v; want %d and none", len(facts.Nodes), facts.Problems, tt.wantNodes)
			}
			if tt.wantNodes == 0 {
				return
			}
			d := byID(facts.Nodes)[machineID]
			if d == nil || d.Heartbeat.PID != tt.wantPID || d.Traits.BeatNotRequired == tt.wantBeatReq {
				t.Fatalf("daemon %+v traits %+v", d.Heartbeat, d.Traits)
			}
			if tt.wantBeat != "" && !d.BeatMtime.Equal(mustTime(tt.wantBeat)) {
				t.Errorf("beat %s, want %s", d.BeatMtime, tt.wantBeat)
			}
		})
	}
}

// TestDaemonWithoutPidFileReadsDead: with the source's thresholds, the
// classifier reads a daemon that left entries and no pid file dead once its
// last state write is older than stale, and its agents' lead dead.
func TestDaemonWithoutPidFileReadsDead(t *testing.T) {
	store := copyStore(t)
	remove(t, filepath.Join(store, "daemon-5931b02f.pid"))
	facts := Source{}.Read(store, fixtureNow)
	d := byID(facts.Nodes)[machineID]
	th := Source{}.Thresholds()
	liveness.ClassifyNode(d, nil, mustTime("2026-02-11T10:03:12.418Z").Add(th.Stale+time.Second), th)
	if d.State != model.StateDead {
		t.Errorf("daemon %s (%s), want dead", d.State, d.Reason)
	}
}

// TestMalformedInputIsAProblem: what fails the daemon's shapes is a
// problem naming the file (and the entry), never a crash; the rest is read.
func TestMalformedInputIsAProblem(t *testing.T) {
	entries := func(bad string) string {
		return `{"version": "1", "machineId": "` + machineID + `", "updatedAt": "2026-02-11T10:03:12.418Z", "agents": {
"c1/good": {"pid": 51390, "harness": "claude", "startedAt": "2026-02-11T09:31:07.052Z"}, ` + bad + `}}`
	}
	tests := []struct {
		name      string
		file      string // relative to the store
		body      string
		wantPath  string // relative; "#" suffixes name an entry
		wantError string
		wantNodes int
	}{
		{"a truncated state file", "machines/state/" + machineID + ".json", `{"version": "1", "agents": {"c1/a": {"pid": 5`,
			"machines/state/" + machineID + ".json", "unexpected end", 1},
		{"an unknown version", "machines/state/" + machineID + ".json", `{"version": "2", "machineId": "x", "agents": {}}`,
			"machines/state/" + machineID + ".json", `version "2": only "1" is known`, 1},
		{"no version", "machines/state/" + machineID + ".json", `{"machineId": "x", "agents": {}}`,
			"machines/state/" + machineID + ".json", "version absent", 1},
		{"a pid that is a string", "machines/state/" + machineID + ".json", entries(`"c1/bad": {"pid": "abc", "harness": "claude", "startedAt": "2026-02-11T09:31:07.052Z"}`),
			"machines/state/" + machineID + ".json#c1/bad", "cannot unmarshal", 2},
		{"pid 0", "machines/state/" + machineID + ".json", entries(`"c1/bad": {"pid": 0, "harness": "claude", "startedAt": "2026-02-11T09:31:07.052Z"}`),
			"machines/state/" + machineID + ".json#c1/bad", "pid 0 is not a process id", 2},
		{"no startedAt", "machines/state/" + machineID + ".json", entries(`"c1/bad": {"pid": 9, "harness": "claude"}`),
			"machines/state/" + machineID + ".json#c1/bad", "startedAt: required", 2},
		{"a startedAt in milliseconds", "machines/state/" + machineID + ".json", entries(`"c1/bad": {"pid": 9, "harness": "claude", "startedAt": 1770804271554}`),
			"machines/state/" + machineID + ".json#c1/bad", "cannot unmarshal", 2},
		{"a key with no role", "machines/state/" + machineID + ".json", entries(`"c1": {"pid": 9, "harness": "claude", "startedAt": "2026-02-11T09:31:07.052Z"}`),
			"machines/state/" + machineID + ".json#c1", "is not <chatroomId>/<role>", 2},
		{"a pid file with no pid", "daemon-5931b02f.pid", "", "daemon-5931b02f.pid", "is not a pid", 5},
		{"a broken machine.json", "machine.json", `{"machines": [`, "machine.json", "unexpected end", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := copyStore(t)
			write(t, filepath.Join(store, tt.file), tt.body)
			facts := Source{}.Read(store, fixtureNow)
			want := filepath.Join(store, tt.wantPath)
			if len(facts.Problems) != 1 || facts.Problems[0].Path != want || !strings.Contains(facts.Problems[0].Error, tt.wantError) {
				t.Fatalf("problems %+v, want one at %s with %q", facts.Problems, want, tt.wantError)
			}
			if len(facts.Nodes) != tt.wantNodes {
				t.Errorf("%d nodes, want %d", len(facts.Nodes), tt.wantNodes)
			}
		})
	}
}

// TestTwoEntriesWithOnePidConflict: one process cannot be two agents.
func TestTwoEntriesWithOnePidConflict(t *testing.T) {
	store := copyStore(t)
	write(t, statePath(store), `{"version": "1", "machineId": "`+machineID+`", "updatedAt": "2026-02-11T10:03:12.418Z", "agents": {
"c1/a": {"pid": 700, "harness": "claude", "startedAt": "2026-02-11T09:31:07.052Z"},
"c2/b": {"pid": 700, "harness": "claude", "startedAt": "2026-02-11T09:32:07.052Z"},
"c3/c": {"pid": 701, "harness": "claude", "startedAt": "2026-02-11T09:33:07.052Z"}}}`)
	facts := Source{}.Read(store, fixtureNow)
	nodes := byID(facts.Nodes)
	for id, want := range map[string]bool{machineID + "/c1/a": true, machineID + "/c2/b": true, machineID + "/c3/c": false} {
		if got := nodes[id].HasScanFlag(model.FlagConflict); got != want {
			t.Errorf("%s conflict %v, want %v", id, got, want)
		}
	}
	if len(facts.Problems) != 2 {
		t.Errorf("problems %+v, want one per entry sharing the pid", facts.Problems)
	}
}

// TestDetect: a store is found as itself or in a home.
func TestDetect(t *testing.T) {
	store := fixtureStore(t)
	tests := []struct {
		name string
		path string
		want bool
	}{
		{"a home holding .chatroom", fixtureHome, true},
		{"the store itself", store, true},
		{"the store's machines/state, the dir of the state files", filepath.Join(store, "machines", "state"), true},
		{"a machines/state path that does not exist", filepath.Join(t.TempDir(), "machines", "state"), false},
		{"an empty directory", t.TempDir(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Source{}).Detect(tt.path); got != tt.want {
				t.Errorf("Detect(%s) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
	if got := DefaultStore("/home/dev"); got != "/home/dev/.chatroom" {
		t.Errorf("DefaultStore = %s", got)
	}
	want := []string{store, filepath.Join(store, "machines", "state")}
	if got := (Source{}).WatchPaths(fixtureHome); !slices.Equal(got, want) {
		t.Errorf("WatchPaths = %v, want %v", got, want)
	}
	// A ROOT naming the state dir reads the whole store: the pid files
	// and machine.json beside it say whether the daemon runs.
	stateRoot := filepath.Join(store, "machines", "state")
	if got := (Source{}).WatchPaths(stateRoot); !slices.Equal(got, want) {
		t.Errorf("WatchPaths(%s) = %v, want %v", stateRoot, got, want)
	}
	fromState, fromHome := Source{}.Read(stateRoot, fixtureNow), Source{}.Read(fixtureHome, fixtureNow)
	if len(fromState.Nodes) != len(fromHome.Nodes) || len(fromState.Nodes) == 0 {
		t.Fatalf("%d nodes read from %s, %d from the home", len(fromState.Nodes), stateRoot, len(fromHome.Nodes))
	}
	for i, n := range fromState.Nodes {
		if h := fromHome.Nodes[i]; n.HeartbeatPath != h.HeartbeatPath || n.Heartbeat.PID != h.Heartbeat.PID {
			t.Errorf("node %s (pid %d) from the state dir, %s (pid %d) from the home", n.HeartbeatPath, n.Heartbeat.PID, h.HeartbeatPath, h.Heartbeat.PID)
		}
	}
}

// TestThresholdsAreTheDaemonHeartbeats: one beat is the daemon's heartbeat
// interval, stale its TTL; the order the config checks holds.
func TestThresholdsAreTheDaemonHeartbeats(t *testing.T) {
	th := Source{}.Thresholds()
	if th.Beat != 5*time.Minute || th.Stale != 30*time.Minute || th.KillAfter != 30*time.Minute {
		t.Errorf("thresholds %+v", th)
	}
	if th.Stale <= th.ExitGrace || th.Beat > th.Stale || th.KillAfter < th.Stale {
		t.Errorf("thresholds out of order: %+v", th)
	}
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// stateJSON is a state file as saveDaemonState writes it.
func stateJSON(t *testing.T, agents map[string]any, updated time.Time) []byte {
	t.Helper()
	b, err := json.MarshalIndent(map[string]any{
		"version": "1", "machineId": machineID, "updatedAt": updated.UTC().Format("2006-01-02T15:04:05.000Z"), "agents": agents,
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEntryPidDecides: an entry's pid is what the classifier follows: a
// live process created at startedAt is running, and once it is killed the
// same entry reads dead.
func TestEntryPidDecides(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	pid := cmd.Process.Pid
	info := liveness.SystemProbe{}.Lookup(pid)
	if !info.Exists || info.CreateTime.IsZero() {
		t.Skipf("create time of pid %d unreadable here: %+v", pid, info)
	}
	store := copyStore(t)
	started := info.CreateTime
	write(t, statePath(store), string(stateJSON(t, map[string]any{
		"c1/worker": map[string]any{"pid": pid, "harness": "claude", "startedAt": started.UTC().Format("2006-01-02T15:04:05.000Z")},
	}, started)))
	read := func() *model.Node {
		n := byID(Source{}.Read(store, started).Nodes)[machineID+"/c1/worker"]
		if n == nil {
			t.Fatal("entry not read")
		}
		return n
	}
	th := Source{}.Thresholds()
	now := started.Add(time.Minute) // past the exit grace: the pid is asked
	n := read()
	liveness.ClassifyNode(n, liveness.SystemProbe{}, now, th)
	if n.State != model.StateRunning || n.Process != model.ProcessAlive {
		t.Fatalf("live entry %s %s (%s), want running, alive", n.State, n.Process, n.Reason)
	}
	cmd.Process.Kill()
	cmd.Wait()
	n = read()
	liveness.ClassifyNode(n, liveness.SystemProbe{}, now, th)
	if n.State != model.StateDead || n.Process != model.ProcessGone {
		t.Errorf("killed entry %s %s (%s), want dead, gone", n.State, n.Process, n.Reason)
	}
}

// TestAtomicRewritesNeverTearOrHide: a writer replaces the state file as
// the daemon does (saveDaemonState: <file>.tmp, then rename), changing
// every entry, while the reader reads again and again: every read sees
// every agent, whole, and no problem.
func TestAtomicRewritesNeverTearOrHide(t *testing.T) {
	const agents = 8
	store := copyStore(t)
	path := statePath(store)
	entries := func(round int) map[string]any {
		m := map[string]any{}
		for i := range agents {
			m[fmt.Sprintf("c%d/role-%d", i, i)] = map[string]any{
				"pid": 1000 + i, "harness": strings.Repeat("x", 1+(round*7+i)%3000),
				"startedAt": fixtureNow.Add(-time.Duration(round%90) * time.Second).UTC().Format("2006-01-02T15:04:05.000Z"),
			}
		}
		return m
	}
	write(t, path, string(stateJSON(t, entries(0), fixtureNow)))

	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop) // before the wait: a failed read stops the writer too
	wg.Add(1)
	go func() {
		defer wg.Done()
		for round := 1; ; round++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := os.WriteFile(path+".tmp", stateJSON(t, entries(round), fixtureNow), 0o600); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(path+".tmp", path); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 300 {
		facts := Source{}.Read(store, fixtureNow)
		if len(facts.Problems) != 0 {
			t.Fatalf("problem during rewrites: %+v", facts.Problems)
		}
		if len(facts.Nodes) != agents+1 {
			t.Fatalf("%d nodes during rewrites, want %d", len(facts.Nodes), agents+1)
		}
	}
}

// TestPidFileReadMidWriteKeepsTheDaemonRunning: writePid is not atomic, so
// a read can find the pid file empty. The daemon then has no pid for that
// read, but its beat is the pid file's fresh mtime, not the old state
// write: it reads running, never dead.
func TestPidFileReadMidWriteKeepsTheDaemonRunning(t *testing.T) {
	store := copyStore(t)
	pidFile := filepath.Join(store, "daemon-5931b02f.pid")
	write(t, pidFile, "")
	fi, err := os.Stat(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	now := fi.ModTime().Add(time.Minute)
	d := byID(Source{}.Read(store, now).Nodes)[machineID]
	if d == nil || !d.BeatMtime.Equal(fi.ModTime()) {
		t.Fatalf("daemon %+v, want its beat the pid file's mtime", d)
	}
	th := Source{}.Thresholds()
	liveness.ClassifyNode(d, liveness.SystemProbe{}, now, th)
	if d.State != model.StateRunning {
		t.Errorf("daemon %s (%s), want running", d.State, d.Reason)
	}
}

// TestDaemonWithoutPidFileIsDeadAtOnce: chatroom reads a daemon whose pid
// file is gone as not running (pid.ts isDaemonRunning: readPid null), and a
// new daemon kills the entries it left (recover()). So the daemon is dead
// at once, however fresh its last state write; its live agents are
// orphaned, and a dead one is not told its lead owns the recovery.
func TestDaemonWithoutPidFileIsDeadAtOnce(t *testing.T) {
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = live.Process.Kill(); _ = live.Wait() }()
	info := liveness.SystemProbe{}.Lookup(live.Process.Pid)
	if !info.Exists || info.CreateTime.IsZero() {
		t.Skipf("create time of pid %d unreadable here: %+v", live.Process.Pid, info)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	created := info.CreateTime
	iso := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
	now := created.Add(time.Minute) // past the exit grace: the pids are asked

	tests := []struct {
		name       string
		pidFile    bool
		wantDaemon model.State
		wantReason string
		wantLive   []model.Flag
		wantAction string // the dead agent's action reason, a part
	}{
		{name: "pid file present: the daemon runs, its dead agent waits on it", pidFile: true,
			wantDaemon: model.StateRunning, wantLive: nil, wantAction: "its lead is running and owns the recovery"},
		{name: "pid file gone, the last state write a second old: dead, its agents orphaned",
			wantDaemon: model.StateDead, wantReason: "daemon-5931b02f.pid gone", wantLive: []model.Flag{model.FlagOrphaned}, wantAction: "is dead too"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := copyStore(t)
			pidFile := filepath.Join(store, "daemon-5931b02f.pid")
			if tt.pidFile {
				write(t, pidFile, strconv.Itoa(os.Getpid()))
			} else {
				remove(t, pidFile)
			}
			write(t, statePath(store), string(stateJSON(t, map[string]any{
				"c1/live": map[string]any{"pid": live.Process.Pid, "harness": "claude", "startedAt": iso(created)},
				"c1/gone": map[string]any{"pid": gone.Process.Pid, "harness": "claude", "startedAt": iso(created)},
			}, now.Add(-time.Second))))
			facts := Source{}.Read(store, now)
			nodes := byID(facts.Nodes)
			d, a, g := nodes[machineID], nodes[machineID+"/c1/live"], nodes[machineID+"/c1/gone"]
			if d == nil || a == nil || g == nil || len(facts.Problems) != 0 {
				t.Fatalf("nodes %v, problems %+v", nodes, facts.Problems)
			}
			d.Children = []*model.Node{a, g}
			a.Parent, g.Parent = d, d
			liveness.ClassifyForest([]*model.Node{d}, liveness.SystemProbe{}, now, Source{}.Thresholds())
			if d.State != tt.wantDaemon || !strings.Contains(d.Reason, tt.wantReason) {
				t.Errorf("daemon %s (%s), want %s saying %q", d.State, d.Reason, tt.wantDaemon, tt.wantReason)
			}
			if a.State != model.StateRunning || !slices.Equal(a.Flags, tt.wantLive) {
				t.Errorf("live agent %s %v (%s), want running %v", a.State, a.Flags, a.Reason, tt.wantLive)
			}
			if g.State != model.StateDead || !strings.Contains(g.Reason+" "+actionNote(g), tt.wantAction) {
				t.Errorf("dead agent %s, action %s (%s), want dead, its action saying %q", g.State, g.Action, actionNote(g), tt.wantAction)
			}
		})
	}
}

// actionNote is what the classifier says of n's action.
func actionNote(n *model.Node) string {
	_, note := liveness.Recommend(n, time.Now(), Source{}.Thresholds())
	return note
}
