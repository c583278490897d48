package main

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/sources/middle/middletest"
)

// middleRow is one workflows row as middle writes it; "" and 0 are NULL
// where the column is nullable.
type middleRow struct {
	id, kind, epic, state   string
	created, updated        time.Time
	lastHeartbeat, archived time.Time
	worktree, session       string
	sessionID, transcript   string
	controlledBy, endReason string
}

func insertWorkflows(t *testing.T, db *sql.DB, rows ...middleRow) {
	t.Helper()
	nullString := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	nullMs := func(at time.Time) any {
		if at.IsZero() {
			return nil
		}
		return at.UnixMilli()
	}
	for _, w := range rows {
		if w.kind == "" {
			w.kind = "implementation"
		}
		if w.controlledBy == "" {
			w.controlledBy = "middle"
		}
		var epicNumber any
		if n, err := strconv.Atoi(w.epic); err == nil {
			epicNumber = n
		}
		_, err := db.Exec(`INSERT INTO workflows (id, kind, repo, epic_number, epic_ref, adapter, state, created_at, updated_at,
			bunqueue_execution_id, worktree_path, session_name, session_id, transcript_path, controlled_by, last_heartbeat,
			archived_at, end_reason) VALUES (?, ?, 'acme/api', ?, ?, 'claude', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			w.id, w.kind, epicNumber, nullString(w.epic), w.state, w.created.UnixMilli(), w.updated.UnixMilli(),
			w.id, nullString(w.worktree), nullString(w.session), nullString(w.sessionID), nullString(w.transcript), w.controlledBy,
			nullMs(w.lastHeartbeat), nullMs(w.archived), nullString(w.endReason))
		if err != nil {
			t.Fatalf("insert workflow %s: %v", w.id, err)
		}
	}
}

// tmuxServer is a tmux server of the test's own (its sockets in a dir of
// their own, named by $TMUX_TMPDIR, which the binary is given too).
type tmuxServer struct {
	t   *testing.T
	env []string
}

func newTmuxServer(t *testing.T) *tmuxServer {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux on PATH: middle's pids come from tmux panes")
	}
	// Short: a socket path is at most ~100 bytes.
	dir, err := os.MkdirTemp("", "dt-tmux-")
	if err != nil {
		t.Fatal(err)
	}
	s := &tmuxServer{t: t, env: []string{"TMUX_TMPDIR=" + dir, "TMUX="}}
	t.Cleanup(func() {
		_ = s.command("kill-server").Run()
		os.RemoveAll(dir)
	})
	return s
}

func (s *tmuxServer) command(args ...string) *exec.Cmd {
	cmd := exec.Command("tmux", args...)
	cmd.Env = append(os.Environ(), s.env...)
	return cmd
}

func (s *tmuxServer) run(args ...string) string {
	s.t.Helper()
	out, err := s.command(args...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// session starts a detached session running argv and returns its pane's pid.
func (s *tmuxServer) session(name string, argv ...string) int {
	s.t.Helper()
	s.run(append([]string{"new-session", "-d", "-s", name}, argv...)...)
	pid, err := strconv.Atoi(s.run("list-panes", "-t", name, "-F", "#{pane_pid}"))
	if err != nil {
		s.t.Fatal(err)
	}
	return pid
}

// docs/sources.md, middle: every row of the mapping, the Epic's rounds,
// the tmux pane pid of a row that owns its session (and the tmux field
// when it does not get one), as `--once --json` shows them over a
// database migrated as middle migrates it.
func TestOnceJSONShowsEveryMiddleMappingRow(t *testing.T) {
	now := time.Now()
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	home := filepath.Join(t.TempDir(), ".middle")
	dbPath := filepath.Join(home, "db.sqlite3")
	db, err := middletest.Open(dbPath, middletest.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	worktree := func(name string, blocked bool) string {
		dir := filepath.Join(home, "worktrees", "acme", "api", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if blocked {
			writeAged(t, filepath.Join(dir, ".middle", "blocked.json"),
				`{"question": "Keep the v1 endpoint?", "context": "two clients still post forms", "kind": "complexity"}`, 30*time.Second)
		}
		return dir
	}
	transcript := filepath.Join(home, "transcripts", "wf-transcript.jsonl")
	writeAged(t, transcript, fmt.Sprintf(`{"type":"user","timestamp":%q}`+"\n"+`{"type":"summary","summary":"no time"}`+"\n",
		ago(10*time.Second).UTC().Format(time.RFC3339Nano)), 10*time.Minute)

	tmux := newTmuxServer(t)
	ownerPane := tmux.session("middle-acme-api-12", "sleep", "300")
	humanPane := tmux.session("middle-acme-api-30", "sleep", "300")
	stalledPane := tmux.session("middle-acme-api-31", "sleep", "300")
	tmux.run("set-option", "-g", "remain-on-exit", "on")
	tmux.session("middle-acme-api-17", "true")
	for deadline := time.Now().Add(5 * time.Second); tmux.run("list-panes", "-t", "middle-acme-api-17", "-F", "#{pane_dead}") != "1"; {
		if time.Now().After(deadline) {
			t.Fatal("the pane of middle-acme-api-17 did not exit")
		}
		time.Sleep(20 * time.Millisecond)
	}

	insertWorkflows(t, db,
		middleRow{id: "wf-pending", epic: "10", state: "pending", created: ago(2 * time.Minute), updated: ago(2 * time.Minute)},
		middleRow{id: "wf-launching", epic: "11", state: "launching", created: ago(2 * time.Minute), updated: ago(2 * time.Minute), session: "middle-acme-api-11"},
		middleRow{id: "wf-old-round", epic: "12", state: "completed", created: ago(time.Hour), updated: ago(50 * time.Minute), session: "middle-acme-api-12"},
		middleRow{id: "wf-running", epic: "12", state: "running", created: ago(10 * time.Minute), updated: ago(20 * time.Second),
			lastHeartbeat: ago(5 * time.Second), worktree: worktree("issue-12", false), session: "middle-acme-api-12", sessionID: "sess-12"},
		middleRow{id: "wf-asked", epic: "13", state: "running", created: ago(10 * time.Minute), updated: ago(20 * time.Second),
			worktree: worktree("issue-13", true), session: "middle-acme-api-13"},
		middleRow{id: "wf-transcript", epic: "14", state: "running", created: ago(20 * time.Minute), updated: ago(10 * time.Minute),
			session: "middle-acme-api-14", transcript: transcript},
		middleRow{id: "wf-no-pane", epic: "17", state: "running", created: ago(time.Minute), updated: ago(10 * time.Second), session: "middle-acme-api-17"},
		middleRow{id: "wf-parked-asked", epic: "18", state: "waiting-human", created: ago(time.Hour), updated: ago(10 * time.Minute),
			worktree: worktree("issue-18", true), session: "middle-acme-api-18"},
		middleRow{id: "wf-parked-review", epic: "15", state: "waiting-human", created: ago(time.Hour), updated: ago(10 * time.Minute), session: "middle-acme-api-15"},
		middleRow{id: "wf-parked-question", epic: "16", state: "waiting-human", created: ago(time.Hour), updated: ago(10 * time.Minute), session: "middle-acme-api-16"},
		middleRow{id: "wf-parked-cap", epic: "19", state: "waiting-human", created: ago(time.Hour), updated: ago(10 * time.Minute), session: "middle-acme-api-19"},
		middleRow{id: "wf-rate-limited", epic: "20", state: "rate-limited", created: ago(time.Hour), updated: ago(10 * time.Minute), session: "middle-acme-api-20"},
		middleRow{id: "wf-completed", epic: "21", state: "completed", created: ago(time.Hour), updated: ago(10 * time.Minute),
			archived: ago(time.Minute), session: "middle-acme-api-21"},
		middleRow{id: "wf-failed", epic: "22", state: "failed", created: ago(time.Hour), updated: ago(10 * time.Minute), session: "middle-acme-api-22"},
		middleRow{id: "wf-compensated", epic: "23", state: "compensated", created: ago(time.Hour), updated: ago(10 * time.Minute),
			endReason: "session-ended-before-Stop"},
		middleRow{id: "wf-cancelled", kind: "recommender", state: "cancelled", created: ago(time.Hour), updated: ago(10 * time.Minute)},
		middleRow{id: "wf-human", epic: "30", state: "running", created: ago(time.Hour), updated: ago(20 * time.Minute),
			session: "middle-acme-api-30", controlledBy: "human"},
		middleRow{id: "wf-stalled", epic: "31", state: "running", created: ago(time.Hour), updated: ago(20 * time.Minute), session: "middle-acme-api-31"},
	)
	for _, stmt := range []string{
		`INSERT INTO events (workflow_id, ts, type, payload_json) VALUES ('wf-failed', 1, 'watchdog.failed', '{"reason": "stuck-launching"}')`,
		`INSERT INTO waitfor_signals (signal_name, workflow_id, created_at) VALUES ('epic-15-review-resolved', 'wf-parked-review', 1)`,
		`INSERT INTO waitfor_signals (signal_name, workflow_id, created_at) VALUES ('epic-16-answered', 'wf-parked-question', 1)`,
		// A state a later middle may add: the schema's CHECK is middle's
		// own to change.
		`PRAGMA ignore_check_constraints = ON`,
		fmt.Sprintf(`INSERT INTO workflows (id, kind, repo, epic_ref, adapter, state, created_at, updated_at, controlled_by)
			VALUES ('wf-unknown', 'implementation', 'acme/api', '40', 'claude', 'suspended', %d, %d, 'middle')`, now.UnixMilli(), now.UnixMilli()),
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}

	doc := onceDocEnv(t, tmux.env, "middle:"+home)
	if len(doc.Problems) > 0 {
		t.Errorf("problems: %v", doc.Problems)
	}
	base := []string{"workflow", "kind", "repo", "state", "epic", "adapter", "controlled_by"}
	with := func(names ...string) []string { return append(slices.Clone(base), names...) }
	k := func(id string) string { return dbPath + "#" + id }
	rows := []mappingRow{
		{row: "pending: starting, no launch timeout", key: k("wf-pending"),
			state: "running", flags: []string{"starting", "quiet"}, action: "none", status: "starting", pid: -1, fields: base,
			values: map[string]string{"workflow": "wf-pending", "kind": "implementation", "repo": "acme/api", "state": "pending",
				"epic": "10", "adapter": "claude", "controlled_by": "middle"}},
		{row: "launching: starting, dead 90 s past its last update", key: k("wf-launching"),
			state: "dead", flags: []string{"starting"}, action: "surface", reason: []string{"cannot be resumed here", "launch timed out", "launch timeout 1m30s"}, status: "starting", pid: -1,
			fields: with("tmux_session", "tmux"), values: map[string]string{"tmux": "session middle-acme-api-11 gone"}},
		{row: "running, the newest round owning its tmux session: running by the pane's pid", key: k("wf-running"),
			state: "running", action: "none", status: "running", pid: ownerPane, infra: filepath.Join(home, "worktrees", "acme", "api", "issue-12"),
			fields: with("tmux_session", "session_id"), values: map[string]string{"tmux_session": "middle-acme-api-12", "session_id": "sess-12"}},
		{row: "an older round of the Epic: under the newest, never claiming the session", key: k("wf-old-round"),
			state: "finished", action: "none", reason: []string{"completed"}, status: "completed", pid: -1,
			parent: k("wf-running"), fields: with("tmux_session")},
		{row: "running with blocked.json: blocked", key: k("wf-asked"),
			state: "running", flags: []string{"blocked"}, action: "answer", reason: []string{"Keep the v1 endpoint?"}, status: "running", pid: -1,
			blocked: "Keep the v1 endpoint?", fields: with("tmux_session", "tmux")},
		{row: "the transcript's last timestamp is part of the beat", key: k("wf-transcript"),
			state: "running", action: "none", reason: []string{"running; last activity 1"}, status: "running", pid: -1,
			fields: with("tmux_session", "tmux", "transcript"), values: map[string]string{"transcript": transcript, "tmux": "session middle-acme-api-14 gone"}},
		{row: "a session whose panes have all exited: no pid, the tmux field says so", key: k("wf-no-pane"),
			state: "running", action: "none", status: "running", pid: -1,
			fields: with("tmux_session", "tmux"), values: map[string]string{"tmux": "session middle-acme-api-17 has no live pane"}},
		{row: "waiting-human with blocked.json still there: blocked on its question, no process expected", key: k("wf-parked-asked"),
			state: "running", flags: []string{"quiet", "blocked"}, action: "answer", reason: []string{"Keep the v1 endpoint?"}, status: "running", pid: -1,
			blocked: "Keep the v1 endpoint?", fields: with("tmux_session")},
		{row: "waiting-human armed on a -review-resolved signal: the pull request waits for review", key: k("wf-parked-review"),
			state: "running", flags: []string{"quiet", "blocked"}, action: "answer", status: "running", pid: -1,
			blocked: "pull request waiting for review", fields: with("tmux_session", "signal"),
			values: map[string]string{"signal": "epic-15-review-resolved"}},
		{row: "waiting-human armed on another signal: a question posted on the Epic", key: k("wf-parked-question"),
			state: "running", flags: []string{"quiet", "blocked"}, action: "answer", status: "running", pid: -1,
			blocked: "question posted on the Epic", fields: with("tmux_session", "signal")},
		{row: "waiting-human with no signal: a round cap was reached", key: k("wf-parked-cap"),
			state: "running", flags: []string{"quiet", "blocked"}, action: "answer", status: "running", pid: -1,
			blocked: "a round cap was reached", fields: with("tmux_session")},
		{row: "rate-limited: paused, no process expected (never dead)", key: k("wf-rate-limited"),
			state: "running", flags: []string{"quiet", "paused"}, action: "none", status: "paused", pid: -1, fields: with("tmux_session")},
		{row: "completed: finished, merged by itself (through its pull request), archived_at shown", key: k("wf-completed"),
			state: "finished", action: "none", reason: []string{"completed; its source merges by itself"}, status: "completed", pid: -1,
			fields: with("tmux_session", "archived_at"), values: map[string]string{"archived_at": ago(time.Minute).UTC().Format(time.RFC3339)}},
		{row: "failed: withdrawn, its reason middle's words: the state and the watchdog's reason", key: k("wf-failed"),
			state: "finished", action: "none", reason: []string{"failed: stuck-launching"}, status: "withdrawn", pid: -1,
			fields: with("tmux_session", "watchdog_reason"), values: map[string]string{"state": "failed", "watchdog_reason": "stuck-launching"}},
		{row: "compensated: withdrawn, its reason the state and its end_reason", key: k("wf-compensated"),
			state: "finished", action: "none", reason: []string{"compensated: session-ended-before-Stop"}, status: "withdrawn", pid: -1,
			fields: with("end_reason"), values: map[string]string{"state": "compensated", "end_reason": "session-ended-before-Stop"}},
		{row: "cancelled: withdrawn, its reason the state (a run of no Epic stands alone)", key: k("wf-cancelled"),
			state: "finished", action: "none", reason: []string{"cancelled"}, status: "withdrawn", pid: -1,
			fields: []string{"workflow", "kind", "repo", "state", "adapter", "controlled_by"}, values: map[string]string{"kind": "recommender"}},
		{row: "controlled_by = 'human': stalled but never a kill candidate", key: k("wf-human"),
			state: "running", flags: []string{"stalled"}, action: "wait", reason: []string{"never a kill candidate: a human controls it"},
			status: "running", pid: humanPane, fields: with("tmux_session"), values: map[string]string{"controlled_by": "human"}},
		{row: "controlled_by = 'middle', stalled past kill-after: a kill candidate", key: k("wf-stalled"),
			state: "running", flags: []string{"stalled", "kill_candidate"}, action: "kill", status: "running", pid: stalledPane,
			fields: with("tmux_session")},
		{row: "an unknown state: the state as written, flagged", key: k("wf-unknown"),
			state: "running", flags: []string{"unknown_status"}, action: "none", reason: []string{`unknown status "suspended"`},
			status: "suspended", pid: -1, fields: base},
	}
	for _, r := range rows {
		r.check(t, doc)
	}
}

// docs/sources.md, middle: a running row is judged as middle's watchdog
// judges it (packages/dispatcher/src/watchdog.ts). When tmux cannot be
// asked (here: dispatchtop's tmux finds no server where the agents' runs),
// the watchdog skips its liveness check and its idle rules decide: idle
// from 5 minutes, killed and failed at 15. So a row quiet for 8 minutes is
// stalled and waits, `--once` exits 0; past 15 minutes it is dead. Asked,
// tmux gives the pane's pid and a quiet row is stalled by that pid. And an
// ended row says middle's own words: its state (failed, cancelled,
// compensated), its end_reason, and the events that say why (watchdog.failed,
// daemon.orphan-finalized, gate.failed: middle commit 2bbacdc).
func TestOnceJudgesAMiddleRowAsItsWatchdogDoes(t *testing.T) {
	now := time.Now()
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	home := filepath.Join(t.TempDir(), ".middle")
	dbPath := filepath.Join(home, "db.sqlite3")
	db, err := middletest.Open(dbPath, middletest.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tmux := newTmuxServer(t)
	late := filepath.Join(home, "worktrees", "acme", "api", "issue-51")
	if err := os.MkdirAll(late, 0o755); err != nil {
		t.Fatal(err)
	}
	quietPane := tmux.session("middle-acme-api-52", "sleep", "300")
	tmux.session("middle-acme-api-50", "sleep", "300")
	insertWorkflows(t, db,
		middleRow{id: "wf-quiet", epic: "50", state: "running", created: ago(time.Hour), updated: ago(8 * time.Minute), session: "middle-acme-api-50"},
		middleRow{id: "wf-late", epic: "51", state: "running", created: ago(time.Hour), updated: ago(16 * time.Minute), session: "middle-acme-api-51",
			worktree: late},
		middleRow{id: "wf-quiet-pane", epic: "52", state: "running", created: ago(time.Hour), updated: ago(8 * time.Minute), session: "middle-acme-api-52"},
		middleRow{id: "wf-idle-timeout", epic: "60", state: "failed", created: ago(time.Hour), updated: ago(10 * time.Minute)},
		middleRow{id: "wf-cancelled", epic: "61", state: "cancelled", created: ago(time.Hour), updated: ago(10 * time.Minute)},
		middleRow{id: "wf-compensated", epic: "62", state: "compensated", created: ago(time.Hour), updated: ago(10 * time.Minute),
			endReason: "Stop-hook-timed-out"},
		middleRow{id: "wf-orphan", epic: "63", state: "failed", created: ago(time.Hour), updated: ago(10 * time.Minute)},
		middleRow{id: "wf-gate", epic: "64", state: "compensated", created: ago(time.Hour), updated: ago(10 * time.Minute),
			endReason: "session-ended-before-Stop"},
	)
	for _, stmt := range []string{
		`INSERT INTO events (workflow_id, ts, type, payload_json) VALUES ('wf-idle-timeout', 1, 'watchdog.idle', NULL)`,
		`INSERT INTO events (workflow_id, ts, type, payload_json) VALUES ('wf-idle-timeout', 2, 'watchdog.failed', '{"reason":"idle-timeout"}')`,
		`INSERT INTO events (workflow_id, ts, type, payload_json) VALUES ('wf-orphan', 1, 'daemon.orphan-finalized', '{"finalState":"failed"}')`,
		`INSERT INTO events (workflow_id, ts, type, payload_json) VALUES ('wf-gate', 1, 'gate.failed', '{"gateName":"lint","exitCode":2,"stderrExcerpt":"x"}')`,
		`INSERT INTO events (workflow_id, ts, type, payload_json) VALUES ('wf-gate', 2, 'gate.failed', '{"gateName":"test","exitCode":1,"stderrExcerpt":"FAIL"}')`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	k := func(id string) string { return dbPath + "#" + id }
	before := storeBytes(t, home)
	t.Cleanup(func() { sameBytes(t, before, storeBytes(t, home)) })
	ended := []mappingRow{
		{row: "failed by the watchdog: its state and the watchdog's reason", key: k("wf-idle-timeout"),
			state: "finished", action: "none", reason: []string{"failed: idle-timeout"}, status: "withdrawn", pid: -1,
			values: map[string]string{"state": "failed", "watchdog_reason": "idle-timeout"}},
		{row: "cancelled: its state", key: k("wf-cancelled"),
			state: "finished", action: "none", reason: []string{"cancelled"}, status: "withdrawn", pid: -1},
		{row: "compensated: its state and its end_reason", key: k("wf-compensated"),
			state: "finished", action: "none", reason: []string{"compensated: Stop-hook-timed-out"}, status: "withdrawn", pid: -1,
			values: map[string]string{"end_reason": "Stop-hook-timed-out"}},
		{row: "finalized as an orphan on the daemon's restart", key: k("wf-orphan"),
			state: "finished", action: "none", reason: []string{"failed: daemon.orphan-finalized"}, status: "withdrawn", pid: -1,
			values: map[string]string{"orphan_finalized": "failed"}},
		{row: "a gate failed: the last one, with its exit code", key: k("wf-gate"),
			state: "finished", action: "none", reason: []string{"compensated: session-ended-before-Stop; gate.failed: test (exit 1)"}, status: "withdrawn", pid: -1,
			values: map[string]string{"gate_failed": "test (exit 1)"}},
	}

	t.Run("tmux cannot be asked", func(t *testing.T) {
		// A server dir of its own with no server in it: dispatchtop's tmux
		// cannot reach the one the agents run on.
		elsewhere := []string{"TMUX_TMPDIR=" + t.TempDir(), "TMUX="}
		doc := onceDocEnv(t, elsewhere, "middle:"+home)
		rows := append([]mappingRow{
			{row: "quiet 8 minutes, its process not looked up: stalled until middle's kill time", key: k("wf-quiet"),
				state: "running", flags: []string{"stalled"}, action: "wait", status: "running", pid: -1,
				reason: []string{"its process could not be looked up; no activity for 8m", "dead past kill-after, in "}},
			{row: "quiet 16 minutes, its process not looked up: dead past middle's kill time", key: k("wf-late"),
				state: "dead", action: "resume", status: "running", pid: -1,
				reason: []string{"its process could not be looked up; no activity for 16m", "past kill-after (15m00s)"}},
		}, ended...)
		for _, r := range rows {
			r.check(t, doc)
		}
		// --once's exit: nothing is dead when only the quiet row is there.
		quiet := filepath.Join(t.TempDir(), ".middle")
		qdb, err := middletest.Open(filepath.Join(quiet, "db.sqlite3"), middletest.Migrations)
		if err != nil {
			t.Fatal(err)
		}
		defer qdb.Close()
		insertWorkflows(t, qdb, middleRow{id: "wf-quiet", epic: "50", state: "running", created: ago(time.Hour), updated: ago(8 * time.Minute), session: "middle-acme-api-50"})
		cmd := exec.Command(binary, "--once", "middle:"+quiet)
		cmd.Dir = t.TempDir()
		cmd.Env = append(append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir()), elsewhere...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("--once over a row quiet 8 minutes whose process could not be looked up: %v\n%s", err, out)
		}
	})
	t.Run("tmux asked", func(t *testing.T) {
		doc := onceDocEnv(t, tmux.env, "middle:"+home)
		rows := append([]mappingRow{
			{row: "quiet 8 minutes, its pane alive: stalled by that pid, a kill candidate at 15 minutes", key: k("wf-quiet-pane"),
				state: "running", flags: []string{"stalled"}, action: "wait", status: "running", pid: quietPane,
				reason: []string{"alive but no activity for 8m", "kill candidate in "}},
		}, ended...)
		for _, r := range rows {
			r.check(t, doc)
		}
	})
}
