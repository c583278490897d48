package opencodeteams

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
)

// privateTmux starts a tmux server on its own socket (-L agents) in a
// socket dir of its own ($TMUX_TMPDIR, so the source's default lookup
// finds it and no other server), with one session named for the team, as
// spawnAgent splits its panes in; killed when the test ends.
func privateTmux(t *testing.T) func(args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux on PATH")
	}
	base, err := os.MkdirTemp("", "tx") // a socket path must fit in sun_path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	t.Setenv("TMUX_TMPDIR", base)
	env := append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TMUX=") }), "TMUX_TMPDIR="+base)
	tmux := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("tmux", append([]string{"-L", "agents"}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	tmux("-f", "/dev/null", "new-session", "-d", "-s", "alpha", "-x", "300", "-y", "100", "sleep 600")
	t.Cleanup(func() {
		cmd := exec.Command("tmux", "-L", "agents", "kill-server")
		cmd.Env = env
		_ = cmd.Run()
	})
	return tmux
}

// agentPane splits a pane as spawnAgent does (split-window -PF
// '#{pane_id}', then the session option) running cmd, and returns its id.
func agentPane(t *testing.T, tmux func(...string) string, session, cmd string) string {
	t.Helper()
	id := tmux("split-window", "-t", "alpha", "-PF", "#{pane_id}", cmd)
	tmux("set-option", "-p", "-t", id, sessionOption, session)
	tmux("select-layout", "-t", "alpha", "main-vertical")
	return id
}

// realProcess starts `sleep`, killed when the test ends, and returns its
// pid and create time as the probe reads it.
func realProcess(t *testing.T) (int, time.Time) {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	st, err := protocol.ProcessStarted(cmd.Process.Pid)
	if err != nil {
		t.Skipf("create time of pid %d unreadable here: %v", cmd.Process.Pid, err)
	}
	return cmd.Process.Pid, time.Unix(0, int64(st*1e9))
}

// processStore is a store of one project: agent files from the
// fixture's builder-1 (the plugin's schema) and the project's server.json.
type processStore struct {
	t       *testing.T
	dir     string // the store
	project string // the agents' cwd, the server's projectPath
}

func newProcessStore(t *testing.T) processStore {
	project := filepath.Join(t.TempDir(), "acme-api")
	return processStore{t: t, dir: filepath.Join(project, ".opencode", "opencode-teams"), project: project}
}

func (s processStore) writeJSON(path string, doc map[string]any) {
	s.t.Helper()
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		s.t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		s.t.Fatal(err)
	}
}

// agent writes agents/<builder-1's id>.json with set over the fixture's.
func (s processStore) agent(set map[string]any) string {
	s.t.Helper()
	const id = "0b6f3c8e-5d1a-4b7e-9a42-3f1c2d8e7a10"
	b, err := os.ReadFile(filepath.Join(fixtureStore(s.t), "agents", id+".json"))
	if err != nil {
		s.t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		s.t.Fatal(err)
	}
	doc["cwd"] = s.project
	for k, v := range set {
		if v == nil {
			delete(doc, k)
		} else {
			doc[k] = v
		}
	}
	path := filepath.Join(s.dir, "agents", id+".json")
	s.writeJSON(path, doc)
	return path
}

// server writes servers/<md5(project)>/server.json as ensureRunning does.
func (s processStore) server(pid int, startedAt time.Time, running bool) string {
	s.t.Helper()
	sum := md5.Sum([]byte(s.project))
	hash := hex.EncodeToString(sum[:])
	path := filepath.Join(s.dir, "servers", hash, "server.json")
	s.writeJSON(path, map[string]any{
		"projectPath": s.project, "projectHash": hash, "pid": pid, "port": 28799, "hostname": "127.0.0.1",
		"isRunning": running, "activeSessions": 0, "logPath": filepath.Join(filepath.Dir(path), "server.log"),
		"startedAt": iso(startedAt), "lastHealthCheck": iso(startedAt),
	})
	return path
}

// storeBytes is every file of the store with its bytes and mtime.
func storeBytes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = fi.ModTime().String() + " " + string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func iso(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// TestAgentsLiveAndDieWithTheirPaneAndServer: docs/sources.md,
// opencode-teams, "An agent's processes": on a real tmux server and with a
// real process as the shared `opencode serve`, an agent whose pane or
// server is gone is dead at once, and one whose pane lives is judged by
// the pane's process, stalled past the 60 s deadline.
func TestAgentsLiveAndDieWithTheirPaneAndServer(t *testing.T) {
	tmux := privateTmux(t)
	tmux("set-option", "-g", "remain-on-exit", "on")
	const session = "ses_3c1f9a2b7ffeK4mQ8rT2vXyZ1a" // builder-1's
	live := agentPane(t, tmux, session, "sleep 600")
	livePID, _ := strconv.Atoi(tmux("display-message", "-p", "-t", live, "#{pane_pid}"))
	other := agentPane(t, tmux, "ses_someone_else", "sleep 600")
	exited := agentPane(t, tmux, session+"x", "true")
	tmux("set-option", "-p", "-t", exited, sessionOption, "ses_exited")
	gone := agentPane(t, tmux, "ses_gone", "sleep 600")
	tmux("kill-pane", "-t", gone)
	for deadline := time.Now().Add(5 * time.Second); tmux("display-message", "-p", "-t", exited, "#{pane_dead}") != "1"; {
		if time.Now().After(deadline) {
			t.Fatalf("pane %s never exited", exited)
		}
		time.Sleep(10 * time.Millisecond)
	}
	serverPID, serverCreated := realProcess(t)
	deadServer := testproc.Gone(t)

	type store func(s processStore)
	noServer := func(processStore) {}
	liveServer := func(s processStore) { s.server(serverPID, serverCreated.Add(time.Second), true) }
	tests := []struct {
		name       string
		lookup     *Lookup
		set        map[string]any
		beat       time.Duration // how old the beat is
		server     store
		wantState  model.State
		wantFlags  []model.Flag
		wantPID    int    // the heartbeat's
		wantReason string // a part
	}{
		{name: "its pane lives, carrying its session: the pane's pid, stalled past the deadline",
			set: map[string]any{"paneId": live}, beat: 90 * time.Second, server: liveServer,
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagStalled}, wantPID: livePID, wantReason: "alive but no update for"},
		{name: "its pane lives past two deadlines: a kill candidate, its pid verified by its create time",
			set: map[string]any{"paneId": live}, beat: 3 * time.Minute, server: liveServer,
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagStalled, model.FlagKillCandidate}, wantPID: livePID},
		{name: "its pane lives, the beat fresh: running",
			set: map[string]any{"paneId": live}, beat: 10 * time.Second, server: liveServer,
			wantState: model.StateRunning, wantPID: livePID},
		{name: "spawning, its pane live: starting, judged by the pane",
			set: map[string]any{"paneId": live, "status": "spawning", "isActive": false}, beat: 10 * time.Second, server: liveServer,
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagStarting}, wantPID: livePID},
		{name: "its pane gone: dead at once, the beat fresh",
			set: map[string]any{"paneId": gone, "sessionId": "ses_gone"}, beat: 5 * time.Second, server: liveServer,
			wantState: model.StateDead, wantReason: "tmux pane " + gone + " gone"},
		{name: "its pane exited (remain-on-exit): dead",
			set: map[string]any{"paneId": exited, "sessionId": "ses_exited"}, beat: 5 * time.Second, server: liveServer,
			wantState: model.StateDead, wantReason: "tmux pane " + exited + " exited"},
		{name: "a pane of its id carrying another session is not its pane: quiet, no pid, as before",
			set: map[string]any{"paneId": other}, beat: 90 * time.Second, server: liveServer,
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagQuiet}, wantReason: "its age says nothing"},
		{name: "no tmux server of the user holds its pane: dead",
			lookup: &Lookup{SocketDir: t.TempDir()}, set: map[string]any{"paneId": live}, beat: 5 * time.Second, server: liveServer,
			wantState: model.StateDead, wantReason: "gone: no tmux server"},
		{name: "its server's pid gone: dead at once",
			set: map[string]any{"paneId": nil}, beat: 5 * time.Second,
			server:    func(s processStore) { s.server(deadServer, serverCreated, true) },
			wantState: model.StateDead, wantReason: "opencode serve pid " + strconv.Itoa(deadServer) + " gone"},
		{name: "its server marked stopped (isRunning false): dead",
			set: map[string]any{"paneId": nil}, beat: 5 * time.Second,
			server:    func(s processStore) { s.server(serverPID, serverCreated, false) },
			wantState: model.StateDead, wantReason: "isRunning false"},
		{name: "its server's pid another process than the one started: dead",
			set: map[string]any{"paneId": nil}, beat: 5 * time.Second,
			server:    func(s processStore) { s.server(serverPID, serverCreated.Add(-time.Hour), true) },
			wantState: model.StateDead, wantReason: "is another process now"},
		{name: "its server alive as the one started, no pane recorded: quiet, as before",
			set: map[string]any{"paneId": nil}, beat: 90 * time.Second, server: liveServer,
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagQuiet}},
		{name: "its pane gone, but its record says it was force killed: finished",
			set: map[string]any{"paneId": gone, "status": "terminated", "isActive": false}, beat: 5 * time.Second, server: noServer,
			wantState: model.StateFinished},
		{name: "its pane and server not asked (records only): quiet, as before",
			lookup: &Lookup{RecordsOnly: true}, set: map[string]any{"paneId": gone}, beat: 90 * time.Second,
			server:    func(s processStore) { s.server(deadServer, serverCreated, true) },
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagQuiet}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newProcessStore(t)
			now := time.Now()
			set := map[string]any{"heartbeatTs": iso(now.Add(-tt.beat)), "createdAt": iso(now.Add(-time.Hour))}
			for k, v := range tt.set {
				set[k] = v
			}
			s.agent(set)
			tt.server(s)
			before := storeBytes(t, s.dir)
			facts := Source{Lookup: tt.lookup}.Read(s.dir, now)
			if after := storeBytes(t, s.dir); !maps.Equal(before, after) {
				t.Errorf("the read changed the store: %v, then %v", before, after)
			}
			if len(facts.Problems) != 0 {
				t.Fatalf("problems %+v", facts.Problems)
			}
			n := byID(facts.Nodes)["alpha/0b6f3c8e-5d1a-4b7e-9a42-3f1c2d8e7a10"]
			if n == nil {
				t.Fatalf("no agent node among %d", len(facts.Nodes))
			}
			if n.Heartbeat.PID != tt.wantPID {
				t.Errorf("pid %d, want %d (fields %v)", n.Heartbeat.PID, tt.wantPID, n.SourceFields())
			}
			n.Parent = nil // judged alone: its leader is no node of this store
			liveness.ClassifyForest([]*model.Node{n}, liveness.SystemProbe{}, now, Source{}.Thresholds())
			if n.State != tt.wantState || !slices.Equal(n.Flags, tt.wantFlags) || !strings.Contains(n.Reason, tt.wantReason) {
				t.Errorf("%s %v (%s), want %s %v saying %q", n.State, n.Flags, n.Reason, tt.wantState, tt.wantFlags, tt.wantReason)
			}
			if tt.wantPID > 0 && slices.Contains(tt.wantFlags, model.FlagKillCandidate) && n.Process != model.ProcessAlive {
				t.Errorf("a kill candidate whose pid is %s, want alive as the same process", n.Process)
			}
		})
	}
}

// A write of one agent's file judges that agent's pane and server again,
// not every agent's: the server files the last read found are used again
// (their dir is watched), the facts a whole read's. A server's end, which
// no file the store is watched by says, is seen by the agents whose files
// are written, and by every agent at the next read of the whole store
// (the scanner's refresh, every 15 s), as it was before a write of one
// file judged the thousand others.
func TestAWriteOfOneAgentJudgesThatAgentsProcesses(t *testing.T) {
	s := newProcessStore(t)
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	st, err := protocol.ProcessStarted(cmd.Process.Pid)
	if err != nil {
		t.Skipf("create time of pid %d unreadable here: %v", cmd.Process.Pid, err)
	}
	s.server(cmd.Process.Pid, time.Unix(0, int64(st*1e9)), true)
	first := s.agent(map[string]any{"paneId": nil})
	b, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	second := filepath.Join(s.dir, "agents", "agent-2.json")
	writeSecond := func(status string) {
		doc["id"], doc["status"] = "agent-2", status
		s.writeJSON(second, doc)
	}
	writeSecond("active")
	src := Source{Lookup: &Lookup{SocketDir: t.TempDir(), OpencodeDB: filepath.Join(t.TempDir(), "opencode.db")}}
	ended := func(facts sources.Facts) map[string]string {
		out := map[string]string{}
		for _, n := range facts.Nodes {
			if n.HeartbeatPath == first || n.HeartbeatPath == second {
				out[filepath.Base(n.HeartbeatPath)] = n.Ended()
			}
		}
		return out
	}
	facts, k := src.Reread(s.dir, time.Now(), nil, nil)
	firstNode := byID(facts.Nodes)
	writeSecond("idle")
	facts, k = src.Reread(s.dir, time.Now(), k, []string{second})
	if whole := src.Read(s.dir, time.Now()); !sameFacts(facts, whole) {
		t.Errorf("a write of one agent, its server alive: the facts differ from a whole read's")
	}
	for id, n := range byID(facts.Nodes) {
		if !strings.HasSuffix(n.HeartbeatPath, "agent-2.json") && n != firstNode[id] {
			t.Errorf("%s made again by a write of another agent's file", id)
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	writeSecond("active")
	facts, k = src.Reread(s.dir, time.Now(), k, []string{second})
	got := ended(facts)
	if got["agent-2.json"] == "" || got[filepath.Base(first)] != "" {
		t.Errorf("the server gone, a write of agent-2: ended %q, want agent-2's alone", got)
	}
	facts, _ = src.Reread(s.dir, time.Now(), k, nil)
	if got := ended(facts); got["agent-2.json"] == "" || got[filepath.Base(first)] == "" {
		t.Errorf("the server gone, a read of the whole store: ended %q, want both", got)
	}
	if whole := src.Read(s.dir, time.Now()); !sameFacts(facts, whole) {
		t.Errorf("a read of the whole store: the facts differ from a whole read's")
	}
}
