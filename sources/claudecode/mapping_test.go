package claudecode

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
)

// read reads the store and classifies each node alone, by the system
// probe, at now.
func read(t *testing.T, store string, now time.Time) (map[string]*model.Node, sources.Facts) {
	t.Helper()
	facts := Source{}.Read(store, now)
	byKey := map[string]*model.Node{}
	for _, n := range facts.Nodes {
		if byKey[n.HeartbeatPath] != nil {
			t.Fatalf("two nodes keyed %s", n.HeartbeatPath)
		}
		liveness.ClassifyNode(n, liveness.SystemProbe{}, now, Source{}.Thresholds())
		byKey[n.HeartbeatPath] = n
	}
	return byKey, facts
}

// problemAbout reports whether a problem names path and says each of words.
func problemAbout(facts sources.Facts, path string, words ...string) bool {
	for _, p := range facts.Problems {
		if p.Path != path {
			continue
		}
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(p.Error, w)
		}
		if ok {
			return true
		}
	}
	return false
}

type rowWant struct {
	state   model.State
	flags   []model.Flag
	status  string // the synthesised heartbeat status
	blocked string // a part of the question; "" none
	reason  string // a part of the reason; "" not checked
	problem []string
	pid     int // -1 not checked
}

func (w rowWant) check(t *testing.T, n *model.Node, facts sources.Facts) {
	t.Helper()
	if n == nil {
		t.Fatalf("no node (problems %v)", facts.Problems)
	}
	if n.State != w.state {
		t.Errorf("state %s, want %s (reason %q)", n.State, w.state, n.Reason)
	}
	got := slices.Clone(n.Flags)
	want := slices.Clone(w.flags)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("flags %v, want %v (reason %q)", n.Flags, w.flags, n.Reason)
	}
	if w.status != "" && n.Status() != w.status {
		t.Errorf("status %q, want %q", n.Status(), w.status)
	}
	switch {
	case w.blocked == "" && n.Blocked != nil:
		t.Errorf("blocked %q, want none", n.Blocked.Question)
	case w.blocked != "" && (n.Blocked == nil || !strings.Contains(n.Blocked.Question, w.blocked)):
		t.Errorf("blocked %+v, want a question with %q", n.Blocked, w.blocked)
	}
	if w.reason != "" && !strings.Contains(n.Reason, w.reason) {
		t.Errorf("reason %q, want %q in it", n.Reason, w.reason)
	}
	if w.problem != nil && !problemAbout(facts, n.HeartbeatPath, w.problem...) {
		t.Errorf("no problem naming %s with %q: %v", n.HeartbeatPath, w.problem, facts.Problems)
	}
	if w.problem == nil && len(facts.Problems) > 0 {
		t.Errorf("problems %v, want none", facts.Problems)
	}
	if w.pid >= 0 && n.PID() != w.pid {
		t.Errorf("pid %d, want %d", n.PID(), w.pid)
	}
}

// docs/sources.md, Claude Code, sessions/<pid>.json: each status row, with a
// real process that the file names by its real procStart.
func TestSessionStatusRows(t *testing.T) {
	tests := []struct {
		name   string
		status string
		extra  map[string]any
		want   rowWant
	}{
		{name: "busy: running", status: "busy",
			want: rowWant{state: model.StateRunning, status: model.StatusRunning}},
		{name: "shell (a ! command runs): running", status: "shell",
			want: rowWant{state: model.StateRunning, status: model.StatusRunning}},
		{name: "idle: running, idle", status: "idle",
			want: rowWant{state: model.StateRunning, flags: []model.Flag{model.FlagIdle}, status: model.StatusRunning}},
		{name: "waiting: blocked, waitingFor the question", status: "waiting", extra: map[string]any{"waitingFor": "approve Bash"},
			want: rowWant{state: model.StateRunning, flags: []model.Flag{model.FlagBlocked}, blocked: "approve Bash"}},
		{name: "waiting with no waitingFor: blocked all the same", status: "waiting",
			want: rowWant{state: model.StateRunning, flags: []model.Flag{model.FlagBlocked}, blocked: "waiting"}},
		{name: "an unknown status: unknown_status and a problem naming the field, never dead", status: "thinking",
			want: rowWant{state: model.StateRunning, flags: []model.Flag{model.FlagUnknownStatus}, reason: `unknown status "thinking"`,
				problem: []string{"status", `"thinking"`}}},
		{name: "no status: unknown_status and a problem", status: "busy", extra: map[string]any{"status": nil},
			want: rowWant{state: model.StateRunning, flags: []model.Flag{model.FlagUnknownStatus}, problem: []string{"status: absent"}}},
		{name: "no procStart: startedAt verifies the pid", status: "busy", extra: map[string]any{"procStart": nil},
			want: rowWant{state: model.StateRunning}},
		{name: "a procStart of no known shape: a problem, the pid still decides", status: "busy", extra: map[string]any{"procStart": "soon"},
			want: rowWant{state: model.StateRunning, problem: []string{"procStart", `"soon"`}}},
		{name: "a record an hour old: quiet, never stalled (no beat required)", status: "busy",
			extra: map[string]any{"updatedAt": time.Now().Add(-time.Hour).UnixMilli(), "statusUpdatedAt": time.Now().Add(-time.Hour).UnixMilli()},
			want:  rowWant{state: model.StateRunning, flags: []model.Flag{model.FlagQuiet}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			p := sleeper(t)
			if tt.extra != nil && tt.extra["procStart"] == nil {
				if _, ok := tt.extra["procStart"]; ok {
					// startedAt is stamped once the process is up.
					tt.extra["startedAt"] = time.Now().UnixMilli()
				}
			}
			path := s.session(p.Process.Pid, "0f3c9a2e-5d1b-4e7a-9c3f-2b8d6e1a4f70", tt.status, tt.extra)
			tt.want.pid = p.Process.Pid
			nodes, facts := read(t, s.dir, time.Now())
			tt.want.check(t, nodes[path], facts)
		})
	}
}

// The crash this source is here to catch: a hard kill leaves the file
// reading what it read (idle, or busy mid-turn). Killed, its process is
// dead within the exit grace; never idle.
func TestSessionKilledIsDeadWithinTheExitGrace(t *testing.T) {
	for _, status := range []string{"idle", "busy", "waiting"} {
		t.Run(status, func(t *testing.T) {
			s := newStore(t)
			p := sleeper(t)
			path := s.session(p.Process.Pid, "5e2a7c1d-0b9f-4c3e-8a6d-1f4b7e9c2a05", status, nil)
			if err := p.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = p.Wait()
			now := time.Now().Add(Source{}.Thresholds().ExitGrace + time.Millisecond)
			nodes, facts := read(t, s.dir, now)
			n := nodes[path]
			want := rowWant{state: model.StateDead, pid: -1, reason: "gone"}
			if status == "waiting" {
				want.flags, want.blocked = []model.Flag{model.FlagBlocked}, "waiting"
			}
			want.check(t, n, facts)
		})
	}
}

// A file left behind whose pid another process now holds is dead: the
// pid's create time is not procStart's. Never running, so never killed.
func TestSessionPidReusedIsDead(t *testing.T) {
	s := newStore(t)
	other := sleeper(t)
	pid := other.Process.Pid
	path := s.session(pid, "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d", "idle", nil)
	// The file's own process is an earlier one of this boot (whatever the
	// boot, real or simulated: one of another boot is another rule).
	created, err := protocol.ProcessStarted(pid)
	if err != nil {
		t.Fatal(err)
	}
	earlier := testproc.Earlier(t, created, 2*time.Second)
	var stale string
	if runtime.GOOS == "linux" {
		ticks, err := strconv.ParseUint(procStartOf(t, pid), 10, 64)
		back := uint64((created - earlier) * clockTicks)
		if err != nil || ticks < back {
			t.Skipf("the host booted %d ticks ago: too recently to name an earlier process", ticks)
		}
		stale = strconv.FormatUint(ticks-back, 10)
	} else {
		stale = time.Unix(int64(earlier), 0).Format(lstartLayout)
	}
	s.session(pid, "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d", "idle", map[string]any{
		"procStart": stale, "updatedAt": time.Now().Add(-time.Minute).UnixMilli(), "statusUpdatedAt": time.Now().Add(-time.Minute).UnixMilli()})
	nodes, facts := read(t, s.dir, time.Now())
	rowWant{state: model.StateDead, pid: pid, reason: "another process"}.check(t, nodes[path], facts)
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the process holding the pid: %v", err)
	}
}

// A missing pid or sessionId, a pid the file is not named for: a problem
// naming the file and the field. The legacy pid-<n>.json and temp files
// are not sessions.
func TestSessionDrift(t *testing.T) {
	s := newStore(t)
	p := sleeper(t)
	noPID := s.write("sessions/4242.json", map[string]any{"sessionId": "x", "status": "busy"})
	misnamed := s.session(p.Process.Pid, "aa", "busy", nil)
	moved := filepath.Join(s.dir, sessionsDir, "1.json")
	if err := os.Rename(misnamed, moved); err != nil {
		t.Fatal(err)
	}
	p2 := sleeper(t)
	noID := s.session(p2.Process.Pid, "", "busy", map[string]any{"sessionId": nil})
	s.write("sessions/pid-77.json", map[string]any{"session_id": "legacy", "cwd": "/x"})
	s.writeRaw("sessions/.123.json.tmp", "{")
	torn := s.writeRaw("sessions/99.json", `{"pid": 99, "sessionId": "t`)

	nodes, facts := read(t, s.dir, time.Now())
	if nodes[noPID] != nil || !problemAbout(facts, noPID, "pid: absent") {
		t.Errorf("no pid: node %v, problems %v", nodes[noPID], facts.Problems)
	}
	if nodes[moved] == nil || !problemAbout(facts, moved, "is not the 1 the file is named for") {
		t.Errorf("misnamed: node %v, problems %v", nodes[moved], facts.Problems)
	}
	if n := nodes[noID]; n == nil || n.ID != "pid-"+strconv.Itoa(p2.Process.Pid) || !problemAbout(facts, noID, "sessionId: absent") {
		t.Errorf("no sessionId: node %+v, problems %v", n, facts.Problems)
	}
	if nodes[torn] != nil || !problemAbout(facts, torn, "unexpected end of JSON input") {
		t.Errorf("torn: node %v, problems %v", nodes[torn], facts.Problems)
	}
	if len(nodes) != 2 {
		t.Errorf("%d nodes, want 2 (legacy and temp files are no sessions): %v", len(nodes), nodes)
	}
}

// docs/sources.md, Claude Code, jobs/<id>/state.json: each state row, the job
// under the session that owns it.
func TestJobStateRows(t *testing.T) {
	tests := []struct {
		state string
		want  rowWant
	}{
		{"working", rowWant{state: model.StateRunning, status: model.StatusRunning}},
		{"blocked", rowWant{state: model.StateRunning, flags: []model.Flag{model.FlagBlocked}, blocked: "needs approval to run npm"}},
		{"done", rowWant{state: model.StateFinished, status: model.StatusCompleted}},
		{"stopped", rowWant{state: model.StateFinished, status: model.StatusWithdrawn, reason: "stopped"}},
		{"failed", rowWant{state: model.StateFinished, status: model.StatusWithdrawn, reason: "failed: needs approval to run npm"}},
		{"killed", rowWant{state: model.StateFinished, status: model.StatusWithdrawn, reason: "killed"}},
		{"hibernating", rowWant{state: model.StateRunning, flags: []model.Flag{model.FlagUnknownStatus}, problem: []string{"state", `"hibernating"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.state, func(t *testing.T) {
			s := newStore(t)
			owner := sleeper(t)
			const sid = "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f"
			sess := s.session(owner.Process.Pid, sid, "idle", nil)
			now := time.Now()
			path := s.write("jobs/90c961c7/state.json", map[string]any{
				"state": tt.state, "sessionId": sid, "name": "crow diet research", "detail": "needs approval to run npm",
				"intent": "research crows", "cwd": "/home/u/webapp", "createdAt": now.Add(-time.Minute).UTC().Format(time.RFC3339Nano),
				"updatedAt": now.UTC().Format(time.RFC3339Nano), "cliVersion": "2.1.143",
			})
			tt.want.pid = 0
			nodes, facts := read(t, s.dir, now)
			tt.want.check(t, nodes[path], facts)
			if n := nodes[path]; n != nil && (n.Heartbeat.ParentHeartbeat != sess || n.ID != sid+"/job-90c961c7") {
				t.Errorf("job %s under %q, want under its session %s", n.ID, n.Heartbeat.ParentHeartbeat, sess)
			}
		})
	}
}

// docs/sources.md, Claude Code, teams: an in-process member lives and dies with
// its lead; isActive false is finished; a pending plan approval is
// blocked; a lead whose session file is gone leaves a dead team node.
func TestTeamMemberRows(t *testing.T) {
	const leadID = "7b8c9d0e-1f2a-4b3c-9d4e-5f6a7b8c9d0e"
	member := func(name, backend, pane string, active bool) map[string]any {
		return map[string]any{"agentId": name + "@session-7b8c9d0e", "name": name, "agentType": "general-purpose",
			"model": "claude-sonnet-4-5", "joinedAt": time.Now().Add(-time.Minute).UnixMilli(), "tmuxPaneId": pane,
			"backendType": backend, "isActive": active, "cwd": "/home/u/webapp"}
	}
	config := map[string]any{"name": "session-7b8c9d0e", "leadSessionId": leadID, "members": []any{
		map[string]any{"agentId": "team-lead@session-7b8c9d0e", "name": "team-lead", "agentType": "team-lead", "tmuxPaneId": "", "cwd": "/home/u/webapp"},
		member("researcher", "in-process", "in-process", true),
		member("tester", "in-process", "in-process", false),
		member("planner", "in-process", "in-process", true),
		member("reviewer", "tmux", "%9999", true),
	}}
	inbox := func(msgs ...map[string]any) []any {
		out := []any{}
		for _, m := range msgs {
			out = append(out, m)
		}
		return out
	}
	request := `{"type":"plan_approval_request","from":"planner","requestId":"plan-1","planContent":"1. migrate"}`
	answered := `{"type":"plan_approval_request","from":"researcher","requestId":"plan-0","planContent":"1. read"}`

	s := newStore(t)
	lead := sleeper(t)
	leadKey := s.session(lead.Process.Pid, leadID, "busy", nil)
	cfg := s.write("teams/session-7b8c9d0e/config.json", config)
	s.write("teams/session-7b8c9d0e/inboxes/team-lead.json", inbox(
		map[string]any{"from": "planner", "text": request, "timestamp": "2026-11-26T10:00:00Z", "read": false},
		map[string]any{"from": "researcher", "text": answered, "timestamp": "2026-11-26T09:00:00Z", "read": true},
		map[string]any{"from": "researcher", "text": "found it", "timestamp": "2026-11-26T09:01:00Z", "read": true}))
	s.write("teams/session-7b8c9d0e/inboxes/researcher.json", inbox(
		map[string]any{"from": "team-lead", "text": `{"type":"plan_approval_response","requestId":"plan-0","approve":true}`}))
	sock := Source{SocketDir: t.TempDir()} // no tmux server: the pane is gone

	facts := sock.Read(s.dir, time.Now())
	nodes := map[string]*model.Node{}
	for _, n := range facts.Nodes {
		liveness.ClassifyNode(n, liveness.SystemProbe{}, time.Now(), Source{}.Thresholds())
		nodes[n.HeartbeatPath] = n
	}
	rows := []struct {
		name, key string
		want      rowWant
	}{
		{"in-process: its lead's process, running", cfg + "#researcher", rowWant{state: model.StateRunning, pid: lead.Process.Pid}},
		{"isActive false: finished", cfg + "#tester", rowWant{state: model.StateFinished, pid: 0}},
		{"a plan_approval_request unanswered: blocked", cfg + "#planner", rowWant{state: model.StateRunning,
			flags: []model.Flag{model.FlagBlocked}, blocked: "plan-1", pid: lead.Process.Pid}},
		{"tmux pane on no server: dead", cfg + "#reviewer", rowWant{state: model.StateDead, reason: "tmux pane %9999 gone", pid: 0}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			r.want.check(t, nodes[r.key], facts)
			if n := nodes[r.key]; n != nil && n.Heartbeat.ParentHeartbeat != leadKey {
				t.Errorf("under %q, want its lead's session %s", n.Heartbeat.ParentHeartbeat, leadKey)
			}
		})
	}
	if nodes[cfg+"#team-lead"] != nil {
		t.Error("the lead's own member entry is a node: it is its session")
	}

	// The lead gone (its file removed, as a clean exit does, or never
	// read): the team is a dead node, an in-process member dead with it.
	if err := os.Remove(leadKey); err != nil {
		t.Fatal(err)
	}
	nodes, facts = read(t, s.dir, time.Now())
	rowWant{state: model.StateDead, reason: "lead session " + leadID, pid: 0}.check(t, nodes[cfg], facts)
	rowWant{state: model.StateDead, reason: "lives and dies with its lead", pid: 0}.check(t, nodes[cfg+"#researcher"], facts)
	if n := nodes[cfg+"#researcher"]; n != nil && n.Heartbeat.ParentHeartbeat != cfg {
		t.Errorf("researcher under %q, want the team node", n.Heartbeat.ParentHeartbeat)
	}
}

// A tmux member's process is its pane's: alive, the member runs by the
// pane's pid; the pane killed, the member is dead.
func TestTeamTmuxMemberIsItsPane(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux")
	}
	sockDir := t.TempDir()
	sock := filepath.Join(sockDir, "default")
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-S", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	tmux("new-session", "-d", "-s", "claude-team", "sleep 300")
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", sock, "kill-server").Run() })
	pane := tmux("display-message", "-p", "-t", "claude-team", "#{pane_id} #{pane_pid}")
	id, pidText, _ := strings.Cut(pane, " ")
	panePID, _ := strconv.Atoi(pidText)

	s := newStore(t)
	const leadID = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
	lead := sleeper(t)
	s.session(lead.Process.Pid, leadID, "busy", nil)
	cfg := s.write("teams/session-1a2b3c4d/config.json", map[string]any{"leadSessionId": leadID, "members": []any{
		map[string]any{"agentId": "reviewer@session-1a2b3c4d", "name": "reviewer", "agentType": "general-purpose",
			"joinedAt": time.Now().UnixMilli(), "tmuxPaneId": id, "backendType": "tmux", "isActive": true, "cwd": "/w"}}})
	src := Source{SocketDir: sockDir}
	classify := func() *model.Node {
		for _, n := range src.Read(s.dir, time.Now()).Nodes {
			if n.HeartbeatPath == cfg+"#reviewer" {
				liveness.ClassifyNode(n, liveness.SystemProbe{}, time.Now(), Source{}.Thresholds())
				return n
			}
		}
		t.Fatal("no reviewer")
		return nil
	}
	if n := classify(); n.State != model.StateRunning || n.PID() != panePID {
		t.Errorf("pane alive: %s pid %d (%s), want running by pid %d", n.State, n.PID(), n.Reason, panePID)
	}
	// A pane of that id made long before, or after, the member joined is
	// another pane: no pid (never signalled as the member), nothing ended.
	for _, joined := range []time.Time{time.Now().Add(5 * time.Minute), time.Now().Add(-5 * time.Minute)} {
		s.write("teams/session-1a2b3c4d/config.json", map[string]any{"leadSessionId": leadID, "members": []any{
			map[string]any{"agentId": "reviewer@session-1a2b3c4d", "name": "reviewer", "agentType": "general-purpose",
				"joinedAt": joined.UnixMilli(), "tmuxPaneId": id, "backendType": "tmux", "isActive": true, "cwd": "/w"}}})
		if n := classify(); n.State != model.StateRunning || n.PID() != 0 || n.Ended() != "" {
			t.Errorf("joined %v: %s pid %d ended %q, want running with no pid", joined, n.State, n.PID(), n.Ended())
		}
	}
	tmux("kill-server")
	if n := classify(); n.State != model.StateDead || !strings.Contains(n.Reason, "gone") {
		t.Errorf("pane gone: %s (%s), want dead", n.State, n.Reason)
	}
}

// Drift: a field of a type this reader does not know (a time in ISO where
// milliseconds were, a pid as text, a number where a name was) is a
// problem naming the file and the field; the rest of the record is still
// read, so one changed field never hides a running session.
func TestFieldOfAnotherTypeIsAProblemNotALostRecord(t *testing.T) {
	s := newStore(t)
	p := sleeper(t)
	const sid = "d1d2d3d4-0000-4000-8000-000000000001"
	iso := s.session(p.Process.Pid, sid, "busy", map[string]any{"statusUpdatedAt": "2026-11-26T10:00:00Z", "kind": 7})
	textPID := s.write("sessions/4243.json", map[string]any{"pid": "4243", "sessionId": "x", "status": "busy"})
	job := s.write("jobs/j1/state.json", map[string]any{"state": "working", "sessionId": sid, "updatedAt": 1764150000000})
	cfg := s.write("teams/t/config.json", map[string]any{"leadSessionId": sid, "members": []any{
		map[string]any{"name": "a", "tmuxPaneId": "in-process", "backendType": "in-process", "isActive": "yes"},
		map[string]any{"name": 42, "tmuxPaneId": "in-process"},
		"not a member",
	}})
	nodes, facts := read(t, s.dir, time.Now())
	if n := nodes[iso]; n == nil || n.State != model.StateRunning || n.PID() != p.Process.Pid {
		t.Errorf("a session with a field of another type: %+v", n)
	}
	for _, want := range []struct {
		path  string
		words []string
	}{
		{iso, []string{"statusUpdatedAt: a JSON string"}},
		{iso, []string{"kind: a JSON number"}},
		{textPID, []string{"pid: a JSON string"}},
		{textPID, []string{"pid: absent"}},
		{job, []string{"updatedAt: a JSON number"}},
		{cfg, []string{"isActive: a JSON string"}},
		{cfg, []string{"name: a JSON number"}},
		{cfg, []string{"members[2]"}},
	} {
		if !problemAbout(facts, want.path, want.words...) {
			t.Errorf("no problem naming %s with %q: %v", want.path, want.words, facts.Problems)
		}
	}
	if nodes[textPID] != nil {
		t.Error("a session whose pid is text is shown: its process cannot be told")
	}
	if n := nodes[job]; n == nil || n.State != model.StateRunning {
		t.Errorf("a job with a field of another type: %+v", n)
	}
	if n := nodes[cfg+"#a"]; n == nil || n.State != model.StateRunning {
		t.Errorf("a member with a field of another type: %+v", n)
	}
}

// Every node of a read has its own id (actions find a node by it): a lead
// of two teams with a member of one name in each gives them two.
func TestIDsAreUnique(t *testing.T) {
	s := newStore(t)
	lead := sleeper(t)
	const sid = "e1e2e3e4-0000-4000-8000-000000000001"
	s.session(lead.Process.Pid, sid, "busy", nil)
	for _, team := range []string{"alpha", "beta"} {
		s.write("teams/"+team+"/config.json", map[string]any{"leadSessionId": sid, "members": []any{
			map[string]any{"name": "researcher", "tmuxPaneId": "in-process", "backendType": "in-process", "isActive": true}}})
	}
	facts := Source{SocketDir: t.TempDir()}.Read(s.dir, time.Now())
	seen := map[string]bool{}
	for _, n := range facts.Nodes {
		if seen[n.ID] {
			t.Errorf("two nodes with id %s", n.ID)
		}
		seen[n.ID] = true
	}
	if len(facts.Nodes) != 3 {
		t.Errorf("%d nodes, want the session and two members", len(facts.Nodes))
	}
}
