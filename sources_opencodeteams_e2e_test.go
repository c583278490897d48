package main

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// opencodeFixture is the committed opencode-teams store: its files are
// AgentState and TeamConfig as the plugin writes them.
var opencodeFixture = filepath.Join("testdata", "sources", "opencode-teams", "acme-api", ".opencode", "opencode-teams")

// opencodeStore writes agent and team files into a store, each from a
// committed file of the fixture with the fields a case sets put over it,
// so that every file has the shape the plugin's schema gives it.
type opencodeStore struct {
	t   *testing.T
	dir string
}

// fromFixture reads a fixture file as a JSON object and sets fields on it.
func (s opencodeStore) fromFixture(rel string, set map[string]any) []byte {
	s.t.Helper()
	raw, err := os.ReadFile(filepath.Join(opencodeFixture, filepath.FromSlash(rel)))
	if err != nil {
		s.t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		s.t.Fatal(err)
	}
	for k, v := range set {
		if v == nil {
			delete(doc, k)
		} else {
			doc[k] = v
		}
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		s.t.Fatal(err)
	}
	return b
}

// agent writes agents/<id>.json: builder-1's record with id, team, status
// and a beat at beat.
func (s opencodeStore) agent(id, team, status string, beat time.Time, set map[string]any) string {
	s.t.Helper()
	// No pane unless a case gives one: a pane is looked up on the tmux
	// servers, and the fixture's %3 is on none.
	fields := map[string]any{"id": id, "name": "agent-" + id[:8], "teamName": team, "status": status,
		"heartbeatTs": isoMillis(beat), "updatedAt": isoMillis(beat), "createdAt": isoMillis(beat.Add(-time.Minute)), "paneId": nil}
	for k, v := range set {
		fields[k] = v
	}
	p := filepath.Join(s.dir, "agents", id+".json")
	writeAged(s.t, p, string(s.fromFixture("agents/0b6f3c8e-5d1a-4b7e-9a42-3f1c2d8e7a10.json", fields)), 0)
	return p
}

// team writes teams/<name>/config.json from alpha's with leader set.
func (s opencodeStore) team(name, leader string) string {
	s.t.Helper()
	p := filepath.Join(s.dir, "teams", name, "config.json")
	writeAged(s.t, p, string(s.fromFixture("teams/alpha/config.json", map[string]any{"name": name, "leader": leader})), 0)
	return p
}

// server writes servers/<md5(project)>/server.json as ensureRunning
// does, for the opencode serve of project running as pid since startedAt.
func (s opencodeStore) server(project string, pid int, startedAt time.Time) string {
	s.t.Helper()
	sum := md5.Sum([]byte(project))
	hash := hex.EncodeToString(sum[:])
	p := filepath.Join(s.dir, "servers", hash, "server.json")
	b, err := json.MarshalIndent(map[string]any{
		"projectPath": project, "projectHash": hash, "pid": pid, "port": 28799, "hostname": "127.0.0.1",
		"isRunning": true, "activeSessions": 0, "startedAt": isoMillis(startedAt), "lastHealthCheck": isoMillis(startedAt),
	}, "", "  ")
	if err != nil {
		s.t.Fatal(err)
	}
	writeAged(s.t, p, string(b), 0)
	return p
}

// agentsTmux is a tmux server of its own (-L agents) in a socket dir of its
// own, killed when the test ends, with a session to split agents' panes
// in. It returns the socket dir (the binary's $TMUX_TMPDIR) and a pane
// maker: a pane carrying session as spawnAgent sets it, with its pid.
func agentsTmux(t *testing.T) (string, func(session string) (string, int)) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux on PATH")
	}
	base, err := os.MkdirTemp("", "tx") // a socket path must fit in sun_path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
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
	return base, func(session string) (string, int) {
		t.Helper()
		id := tmux("split-window", "-t", "alpha", "-PF", "#{pane_id}", "sleep 600")
		tmux("set-option", "-p", "-t", id, "@opencode_session_id", session)
		tmux("select-layout", "-t", "alpha", "main-vertical")
		pid, err := strconv.Atoi(tmux("display-message", "-p", "-t", id, "#{pane_pid}"))
		if err != nil {
			t.Fatal(err)
		}
		return id, pid
	}
}

// isoMillis is a time as zod's datetime() takes it: UTC, milliseconds, Z.
func isoMillis(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// docs/sources.md, opencode-teams: every row of the mapping as
// `--once --json` shows it, over agent and team files of the plugin's
// schema (the committed fixture's, with fresh times).
func TestOnceJSONShowsEveryOpencodeTeamsMappingRow(t *testing.T) {
	now := time.Now()
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	s := opencodeStore{t: t, dir: filepath.Join(t.TempDir(), "acme-api", ".opencode", "opencode-teams")}
	alpha := s.team("alpha", "leader")
	beta := filepath.Join(s.dir, "teams", "beta", "config.json")
	writeAged(t, beta, `{"name": "beta", "leader": `, 0) // torn: fails the schema
	delta := s.team("delta", "d0000000-0000-4000-8000-000000000001")
	gamma := filepath.Join(s.dir, "teams", "gamma", "config.json") // never written: the team was deleted

	spawning := s.agent("a0000000-0000-4000-8000-000000000001", "alpha", "spawning", ago(10*time.Second), nil)
	late := s.agent("a0000000-0000-4000-8000-000000000002", "alpha", "spawning", ago(2*time.Minute), nil)
	active := s.agent("a0000000-0000-4000-8000-000000000003", "alpha", "active", ago(5*time.Second), nil)
	silent := s.agent("a0000000-0000-4000-8000-000000000004", "alpha", "active", ago(10*time.Minute), nil)
	idle := s.agent("a0000000-0000-4000-8000-000000000005", "alpha", "idle", ago(5*time.Second), nil)
	shutting := s.agent("a0000000-0000-4000-8000-000000000006", "alpha", "shutting_down", ago(5*time.Second), nil)
	inactive := s.agent("a0000000-0000-4000-8000-000000000007", "alpha", "inactive", ago(10*time.Minute),
		map[string]any{"consecutiveMisses": 2, "isActive": false, "lastError": "Heartbeat timeout: 87s since last heartbeat"})
	terminated := s.agent("a0000000-0000-4000-8000-000000000008", "alpha", "terminated", ago(10*time.Minute),
		map[string]any{"isActive": false, "lastError": "Force killed: looping on the same migration", "terminatedAt": isoMillis(ago(9 * time.Minute))})
	broken := s.agent("a0000000-0000-4000-8000-000000000009", "alpha", "exploded", ago(5*time.Second), nil)
	underBeta := s.agent("b0000000-0000-4000-8000-000000000001", "beta", "active", ago(5*time.Second), nil)
	underGamma := s.agent("c0000000-0000-4000-8000-000000000001", "gamma", "active", ago(5*time.Second), nil)
	doneGamma := s.agent("c0000000-0000-4000-8000-000000000002", "gamma", "terminated", ago(10*time.Minute),
		map[string]any{"isActive": false, "lastError": "Force killed: done", "terminatedAt": isoMillis(ago(9 * time.Minute))})
	leaderOwn := s.agent("d0000000-0000-4000-8000-000000000001", "delta", "active", ago(5*time.Second), nil)
	noTeam := s.agent("e0000000-0000-4000-8000-000000000001", "../alpha", "active", ago(5*time.Second), nil)

	// An agent's processes: its pane on a tmux server, its project's
	// opencode serve (a real process each).
	tmuxDir, pane := agentsTmux(t)
	withPane := func(session string) (map[string]any, int) {
		id, pid := pane(session)
		return map[string]any{"paneId": id, "sessionId": session}, pid
	}
	paneSet, panePID := withPane("ses_pane_live")
	paneLive := s.agent("f0000000-0000-4000-8000-000000000001", "alpha", "active", ago(5*time.Second), paneSet)
	stalledSet, stalledPID := withPane("ses_pane_stalled")
	paneStalled := s.agent("f0000000-0000-4000-8000-000000000002", "alpha", "active", ago(90*time.Second), stalledSet)
	killSet, killPID := withPane("ses_pane_kill")
	paneKill := s.agent("f0000000-0000-4000-8000-000000000003", "alpha", "active", ago(10*time.Minute), killSet)
	goneSet, _ := withPane("ses_pane_gone")
	goneSet["paneId"] = "%999" // never made on this server
	paneGone := s.agent("f0000000-0000-4000-8000-000000000004", "alpha", "active", ago(5*time.Second), goneSet)
	servedPID, servedCreated := testproc.Live(t)
	s.server("/home/dev/served", servedPID, time.Unix(0, int64(servedCreated*1e9)).Add(time.Second))
	served := s.agent("f0000000-0000-4000-8000-000000000005", "alpha", "active", ago(5*time.Second), map[string]any{"cwd": "/home/dev/served"})
	deadServer := testproc.Gone(t)
	s.server("/home/dev/crashed", deadServer, now.Add(-time.Hour))
	crashed := s.agent("f0000000-0000-4000-8000-000000000006", "alpha", "active", ago(5*time.Second), map[string]any{"cwd": "/home/dev/crashed"})

	doc := onceDocEnv(t, []string{"TMUX_TMPDIR=" + tmuxDir}, "opencode-teams:"+s.dir)
	problems := map[string]string{}
	for _, p := range doc.Problems {
		problems[p.Path] = p.Error
	}
	for path, part := range map[string]string{broken: "status", beta: beta} {
		if msg, ok := problems[path]; !ok || !strings.Contains(msg, part) || !strings.Contains(msg, path) {
			t.Errorf("problem of %s = %q, want one naming the file and %q", path, msg, part)
		}
		delete(problems, path)
	}
	if len(problems) > 0 {
		t.Errorf("other problems: %v", problems)
	}
	agentFields := []string{"name", "agent id", "status", "consecutive misses", "next deadline", "session", "server port", "model", "cwd", "created"}
	paneFields := slices.Insert(slices.Clone(agentFields), 5, "tmux pane", "tmux")
	serverFields := slices.Insert(slices.Clone(agentFields), 7, "server")
	// A record that accepts no beat has no deadline; an error and a
	// termination come after the misses.
	ended := func(extra ...string) []string {
		return slices.Concat(agentFields[:4], extra, agentFields[5:])
	}
	leaderFields := []string{"leader", "members", "created"}
	rows := []mappingRow{
		{row: "team config present: the leader runs, a session", key: alpha,
			state: "running", action: "none", status: "running", pid: -1, fields: leaderFields,
			values: map[string]string{"leader": "leader", "members": "7"}},
		{row: "spawning: starting", key: spawning,
			state: "running", flags: []string{"starting"}, action: "none", status: "starting", pid: -1, parent: alpha,
			fields: agentFields, values: map[string]string{"status": "spawning", "next deadline": isoMillis(ago(10 * time.Second).Add(time.Minute))}},
		{row: "spawning past 60 s: dead, the launch timed out", key: late,
			state: "dead", flags: []string{"starting"}, action: "wait", reason: []string{"launch timed out", "launch timeout 1m00s"},
			status: "starting", pid: -1, parent: alpha, fields: agentFields},
		{row: "active: running", key: active,
			state: "running", action: "none", status: "running", pid: -1, parent: alpha, fields: agentFields,
			values: map[string]string{"status": "active", "consecutive misses": "0", "server port": "28799"}},
		{row: "its pane live, carrying its session: running, the pane's pid", key: paneLive,
			state: "running", action: "none", status: "running", pid: panePID, parent: alpha, fields: paneFields},
		{row: "its pane live, past the 60 s deadline: stalled", key: paneStalled,
			state: "running", flags: []string{"stalled"}, action: "wait", reason: []string{"alive but no update for"},
			status: "running", pid: stalledPID, parent: alpha, fields: paneFields},
		{row: "its pane live, past two deadlines: a kill candidate", key: paneKill,
			state: "running", flags: []string{"stalled", "kill_candidate"}, action: "kill",
			status: "running", pid: killPID, parent: alpha, fields: paneFields},
		{row: "its pane gone: dead at once", key: paneGone,
			state: "dead", action: "wait", reason: []string{"tmux pane %999 gone"}, status: "running", pid: -1, parent: alpha,
			fields: slices.Delete(slices.Clone(paneFields), 6, 7)},
		{row: "its server alive as started: running", key: served,
			state: "running", action: "none", status: "running", pid: -1, parent: alpha, fields: serverFields},
		{row: "its server's pid gone: dead at once", key: crashed,
			state: "dead", action: "wait", reason: []string{"opencode serve pid " + strconv.Itoa(deadServer) + " gone"},
			status: "running", pid: -1, parent: alpha, fields: serverFields},
		{row: "active with no pane recorded, past the 60 s deadline: quiet, not dead (no beat required)", key: silent,
			state: "running", flags: []string{"quiet"}, action: "none", reason: []string{"running, quiet: last update 10m", "its age says nothing"},
			status: "running", pid: -1, parent: alpha, fields: agentFields},
		{row: "idle: running, status idle shown", key: idle,
			state: "running", action: "none", status: "running", pid: -1, parent: alpha, fields: agentFields,
			values: map[string]string{"status": "idle"}},
		{row: "shutting_down: running, status shown", key: shutting,
			state: "running", action: "none", status: "running", pid: -1, parent: alpha, fields: agentFields,
			values: map[string]string{"status": "shutting_down"}},
		{row: "inactive: dead (no pid, a beat past stale)", key: inactive,
			state: "dead", action: "wait", reason: []string{"no pid"}, status: "running", pid: -1, parent: alpha,
			fields: ended("last error"), values: map[string]string{"consecutive misses": "2",
				"last error": "Heartbeat timeout: 87s since last heartbeat"}},
		{row: "terminated: finished, force killed, merged by itself", key: terminated,
			state: "finished", action: "none", reason: []string{"completed"}, status: "completed", pid: -1, parent: alpha,
			fields: ended("last error", "terminated at"),
			values: map[string]string{"status": "terminated (force killed)", "last error": "Force killed: looping on the same migration",
				"terminated at": isoMillis(ago(9 * time.Minute))}},
		{row: "agent file fails the schema: no node", key: broken, absent: true},
		{row: "team config fails the schema: leader flagged unreadable", key: beta,
			state: "running", flags: []string{"unreadable"}, action: "none", pid: -1},
		{row: "an agent of a team whose config fails still hangs under it", key: underBeta,
			state: "running", action: "none", status: "running", pid: -1, parent: beta, fields: agentFields},
		{row: "agents name a team whose config is gone: the leader withdrawn", key: gamma,
			state: "finished", action: "none", reason: []string{"withdrawn"}, status: "withdrawn", pid: -1,
			fields: []string{"team config"}},
		{row: "a running agent of a gone team: orphaned", key: underGamma,
			state: "running", flags: []string{"orphaned"}, action: "none", status: "running", pid: -1, parent: gamma, fields: agentFields},
		{row: "every agent merges itself: a terminated agent of a gone team is not merged", key: doneGamma,
			state: "finished", action: "none", reason: []string{"completed; its source merges by itself"}, status: "completed", pid: -1,
			parent: gamma, fields: ended("last error", "terminated at")},
		{row: "the leader's own agent file speaks for the leader node", key: delta,
			state: "running", action: "none", status: "running", pid: -1, fields: append(slices.Clone(leaderFields), agentFields...),
			values: map[string]string{"agent id": "d0000000-0000-4000-8000-000000000001"}},
		{row: "the leader's own agent file is not listed a second time", key: leaderOwn, absent: true},
		{row: "a teamName no team can bear: a session of its own", key: noTeam,
			state: "running", action: "none", status: "running", pid: -1, fields: agentFields},
	}
	for _, r := range rows {
		r.check(t, doc)
	}
	if n := doc.byKey[noTeam]; n != nil && n.ID != "agents/e0000000-0000-4000-8000-000000000001" {
		t.Errorf("the agent of no possible team has id %q, want agents/<stem>", n.ID)
	}
}
