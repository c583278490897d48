package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
)

// claudeStore is a ~/.claude as Claude Code writes it (the fields as
// docs/sources.md, ## Claude Code, says where each was observed).
type claudeStore struct {
	t   *testing.T
	dir string
}

func (s *claudeStore) write(rel string, v any) string {
	s.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		s.t.Fatal(err)
	}
	p := filepath.Join(s.dir, filepath.FromSlash(rel))
	writeAged(s.t, p, string(b), 0)
	return p
}

// session writes sessions/<pid>.json for pid, procStart as Claude Code
// writes it (Linux: /proc/<pid>/stat field 22; macOS: ps lstart).
func (s *claudeStore) session(pid int, procStart, sessionID, status string, updated time.Time, extra map[string]any) string {
	s.t.Helper()
	rec := map[string]any{"pid": pid, "sessionId": sessionID, "cwd": "/home/u/webapp", "procStart": procStart,
		"startedAt": updated.UnixMilli(), "kind": "interactive", "entrypoint": "cli", "version": "2.1.278",
		"status": status, "updatedAt": updated.UnixMilli(), "statusUpdatedAt": updated.UnixMilli(), "name": "n-" + sessionID[:4]}
	for k, v := range extra {
		rec[k] = v
	}
	return s.write("sessions/"+strconv.Itoa(pid)+".json", rec)
}

func claudeProcStart(t *testing.T, pid int) string {
	t.Helper()
	if runtime.GOOS == "linux" {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
		return strings.Fields(rest)[22-3]
	}
	out, err := exec.Command("ps", "-o", "lstart=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// olderProcStart is the procStart, and the instant, of a process of this
// boot created before pid (created, its real start).
func olderProcStart(t *testing.T, pid int, created float64) (procStart string, at time.Time) {
	t.Helper()
	// An earlier process of this boot, whatever the boot (real or
	// simulated): one of another boot is a different rule.
	earlier := testproc.Earlier(t, created, 2*time.Second)
	at = time.Unix(0, int64(earlier*1e9))
	if runtime.GOOS == "linux" {
		ticks, _ := strconv.ParseUint(claudeProcStart(t, pid), 10, 64)
		back := uint64((created - earlier) * 100) // USER_HZ: 100 on Linux
		if ticks < back {
			t.Skip("the host booted too recently for an earlier process of this boot")
		}
		return strconv.FormatUint(ticks-back, 10), at
	}
	return at.Format("Mon Jan _2 15:04:05 2006"), at
}

// docs/sources.md, Claude Code: every row of the mapping as `--once --json`
// shows it, over a store of sessions of real processes, a job and two
// teams; the store is not changed by a byte; kill verifies a session's
// identity through procStart, and refuses the file a reused pid left.
func TestClaudeMapping(t *testing.T) {
	s := &claudeStore{t: t, dir: filepath.Join(t.TempDir(), ".claude")}
	now := time.Now()
	busy, _ := testproc.Live(t)
	idle, _ := testproc.Live(t)
	waiting, _ := testproc.Live(t)
	killed := exec.Command("sleep", "300")
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	killedStart := claudeProcStart(t, killed.Process.Pid)
	reuser, reuserCreated := testproc.Live(t)

	const (
		busyID    = "11111111-aaaa-4bbb-8ccc-000000000001"
		idleID    = "22222222-aaaa-4bbb-8ccc-000000000002"
		waitID    = "33333333-aaaa-4bbb-8ccc-000000000003"
		killedID  = "44444444-aaaa-4bbb-8ccc-000000000004"
		reusedID  = "55555555-aaaa-4bbb-8ccc-000000000005"
		goneLead  = "66666666-aaaa-4bbb-8ccc-000000000006"
		strangeID = "77777777-aaaa-4bbb-8ccc-000000000007"
	)
	busyKey := s.session(busy, claudeProcStart(t, busy), busyID, "busy", now, nil)
	idleKey := s.session(idle, claudeProcStart(t, idle), idleID, "idle", now.Add(-time.Hour), nil)
	waitKey := s.session(waiting, claudeProcStart(t, waiting), waitID, "waiting", now, map[string]any{"waitingFor": "approve Bash"})
	killedKey := s.session(killed.Process.Pid, killedStart, killedID, "busy", now.Add(-time.Minute), nil)
	if err := killed.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = killed.Wait()
	reusedStart, reusedAt := olderProcStart(t, reuser, reuserCreated)
	reusedKey := s.session(reuser, reusedStart, reusedID, "idle", reusedAt, nil)
	strange, _ := testproc.Live(t)
	strangeKey := s.session(strange, claudeProcStart(t, strange), strangeID, "hibernating", now, nil)
	job := s.write("jobs/90c961c7/state.json", map[string]any{"state": "blocked", "sessionId": busyID, "name": "crow diet",
		"detail": "needs approval", "cwd": "/home/u/webapp", "updatedAt": now.UTC().Format(time.RFC3339Nano)})
	team := s.write("teams/session-11111111/config.json", map[string]any{"leadSessionId": busyID, "members": []any{
		map[string]any{"agentId": "team-lead@t", "name": "team-lead", "agentType": "team-lead", "tmuxPaneId": ""},
		map[string]any{"agentId": "r@t", "name": "researcher", "agentType": "general-purpose", "tmuxPaneId": "in-process",
			"backendType": "in-process", "isActive": true, "joinedAt": now.UnixMilli()},
		map[string]any{"agentId": "w@t", "name": "writer", "agentType": "general-purpose", "tmuxPaneId": "in-process",
			"backendType": "in-process", "isActive": false, "joinedAt": now.UnixMilli()}}})
	orphanTeam := s.write("teams/session-66666666/config.json", map[string]any{"leadSessionId": goneLead, "members": []any{
		map[string]any{"agentId": "v@t", "name": "viewer", "agentType": "general-purpose", "tmuxPaneId": "w0t1p0",
			"backendType": "iterm2", "isActive": true, "joinedAt": now.UnixMilli()}}})
	before := storeBytes(t, s.dir)

	doc := onceDocEnv(t, []string{"TMUX_TMPDIR=" + t.TempDir()}, "claude:"+s.dir)
	for _, r := range []mappingRow{
		{row: "busy: running", key: busyKey, state: "running", action: "none", status: "running", pid: busy},
		{row: "idle: running, idle", key: idleKey, state: "running", flags: []string{"idle", "quiet"}, action: "none", pid: idle},
		{row: "waiting: blocked, waitingFor the question", key: waitKey, state: "running", flags: []string{"blocked"},
			action: "answer", blocked: "approve Bash", pid: waiting},
		{row: "a hard kill leaves busy: dead, the pid gone, resumable", key: killedKey, state: "dead", action: "resume",
			reason: []string{"gone"}, pid: killed.Process.Pid},
		{row: "a pid now another process's: dead, resumable", key: reusedKey, state: "dead", action: "resume",
			reason: []string{"another process"}, pid: reuser},
		{row: "an unknown status: unknown_status, never dead", key: strangeKey, state: "running", flags: []string{"unknown_status"},
			action: "none", pid: strange},
		{row: "a job under its session, blocked", key: job, parent: busyKey, state: "running", flags: []string{"blocked"},
			action: "answer", blocked: "needs approval", pid: -1},
		{row: "an in-process member: its lead's process", key: team + "#researcher", parent: busyKey, state: "running",
			action: "none", pid: busy},
		{row: "isActive false: finished", key: team + "#writer", parent: busyKey, state: "finished", action: "none", pid: -1},
		{row: "a team whose lead is gone: dead", key: orphanTeam, state: "dead", action: "surface",
			reason: []string{"lead session " + goneLead}, pid: -1},
		{row: "its member still running: orphaned", key: orphanTeam + "#viewer", parent: orphanTeam, state: "running",
			flags: []string{"orphaned"}, action: "none", pid: -1},
	} {
		r.check(t, doc)
	}
	problem := false
	for _, p := range doc.Problems {
		problem = problem || p.Path == strangeKey && strings.Contains(p.Error, `status: "hibernating"`)
	}
	if !problem {
		t.Errorf("no problem names %s and its status: %v", strangeKey, doc.Problems)
	}
	sameBytes(t, before, storeBytes(t, s.dir))

	// kill: the reused pid's file is dead, refused, and the process
	// holding the pid lives; the busy session's identity is verified
	// through procStart, and it is killed.
	run := func(args ...string) (string, error) {
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("kill", "--root", "claude:"+s.dir, "--grace", "1s", reusedID)
	if err == nil || !strings.Contains(out, "dead") {
		t.Errorf("kill of the reused pid's file: %v: %s", err, out)
	}
	// Fresh, the file reads running without the pid being asked (within
	// the exit grace): kill itself checks procStart, and refuses.
	s.session(reuser, reusedStart, reusedID, "busy", time.Now(), nil)
	out, err = run("kill", "--root", "claude:"+s.dir, "--grace", "1s", reusedID)
	if err == nil || !strings.Contains(out, "now belongs to another process") {
		t.Errorf("kill of a fresh file whose pid another process holds: %v: %s", err, out)
	}
	if err := syscall.Kill(reuser, 0); err != nil {
		t.Errorf("the process holding the reused pid: %v", err)
	}
	// An in-process teammate runs inside its lead's process: killing it
	// alone is refused, and the lead lives.
	out, err = run("kill", "--root", "claude:"+s.dir, "--grace", "1s", busyID+"/researcher")
	if err == nil || !strings.Contains(out, "runs inside that process") {
		t.Errorf("kill of an in-process teammate: %v: %s", err, out)
	}
	if err := syscall.Kill(busy, 0); err != nil {
		t.Errorf("the lead of the in-process teammate: %v", err)
	}
	before = storeBytes(t, s.dir)
	out, err = run("kill", "--root", "claude:"+s.dir, "--grace", "1s", busyID)
	if err != nil || !strings.Contains(out, "ended pid "+strconv.Itoa(busy)) {
		t.Errorf("kill of a busy session: %v: %s", err, out)
	}
	out, err = run("resume", "--root", "claude:"+s.dir, killedID)
	if err == nil {
		t.Errorf("resume of a dead session: %s", out)
	}
	if !strings.Contains(out, "no command configured") || !strings.Contains(out, "resume.argv") {
		t.Errorf("resume of a dead session with no command configured: %s, want a refusal naming resume.argv", out)
	}
	// The actions wrote their journal (SPEC §5), and not a byte of the
	// store's own files.
	after := storeBytes(t, s.dir)
	for p := range after {
		if strings.Contains(p, string(filepath.Separator)+".dispatchtop"+string(filepath.Separator)) {
			delete(after, p)
			delete(before, p)
		}
	}
	sameBytes(t, before, after)
}

// The README's section "Using dispatchtop with Claude Code" gives the one
// command that shows it: run as written (its $HOME the test's), it reads
// ~/.claude with Claude Code's source and shows the running session.
func TestReadmeCommandShowsClaudeCode(t *testing.T) {
	home := t.TempDir()
	s := &claudeStore{t: t, dir: filepath.Join(home, ".claude")}
	pid, _ := testproc.Live(t)
	key := s.session(pid, claudeProcStart(t, pid), "abcdef01-2345-4678-9abc-def012345678", "busy", time.Now(), nil)
	line := readmeSystemCommand(t, "Claude Code")
	argv := strings.Fields(strings.ReplaceAll(line, "$HOME", home))
	if len(argv) < 2 || argv[0] != "dispatchtop" {
		t.Fatalf("the command %q is not dispatchtop and its roots", line)
	}
	cmd := exec.Command(binary, append(argv[1:], "--once", "--json", "--fail-on", "none")...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+t.TempDir(), "CLAUDE_CONFIG_DIR=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	var doc struct {
		Sessions []e2eNode `json:"sessions"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Sessions) != 1 || doc.Sessions[0].Key != key || doc.Sessions[0].Source != "claude" || doc.Sessions[0].State != "running" {
		t.Errorf("%s: sessions %+v, want the running session %s read by claude", line, doc.Sessions, key)
	}
}
