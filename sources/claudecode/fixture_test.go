package claudecode

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The fixtures are a ~/.claude as Claude Code writes it, field by field as
// third-party readers observed it (docs/sources.md, ## Claude Code):
//
//   - sessions/<pid>.json: pid, sessionId, cwd, procStart, status, name,
//     kind, startedAt, updatedAt (blavka/agents-tree
//     src/agents_tree/providers/claude.py, _query_live); procStart as
//     /proc/<pid>/stat field 22 verbatim, statusUpdatedAt (epoch ms),
//     version, entrypoint, and the legacy pid-<n>.json beside them
//     (herdrdev/herdr#3414, on 2.1.236 and 2.1.278); status busy, idle,
//     waiting, shell (Station-Sciences/bot-crossing#50).
//   - jobs/<id>/state.json: state, sessionId, name, detail, intent, cwd,
//     createdAt, updatedAt, firstTerminalAt, cliVersion
//     (joshrotenberg/claude-wrapper src/jobs.rs, on 2.1.143).
//   - teams/<team>/config.json (mbourmaud/hive src/agent_teams/mod.rs: the
//     place): leadSessionId, members with agentId, name, agentType, model,
//     joinedAt, tmuxPaneId, cwd; backendType and isActive are the reading of
//     the issue that asked for this source, not confirmed by a reader here;
//     inboxes/<name>.json holds messages (from, text, timestamp, read) whose
//     protocol messages carry a JSON text: plan_approval_request,
//     shutdown_request, shutdown_approved, idle_notification
//     (iliaal/compound-engineering-plugin message-formats.md);
//     plan_approval_response goes back from the lead.
//   - projects/<slug>/<sessionId>/subagents/agent-<id>.jsonl: a subagent's
//     transcript, lines with isSidechain, agentId, type, timestamp
//     (sonnes/chitragupt reader/claude/claude.go).

// claudeStore is a store being written for a test.
type claudeStore struct {
	t   testing.TB
	dir string
}

func newStore(t testing.TB) *claudeStore {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".claude")
	if err := os.MkdirAll(filepath.Join(dir, sessionsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	return &claudeStore{t: t, dir: dir}
}

// write writes v as JSON at rel, as Claude Code writes a record.
func (s *claudeStore) write(rel string, v any) string {
	s.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		s.t.Fatal(err)
	}
	return s.writeRaw(rel, string(b))
}

func (s *claudeStore) writeRaw(rel, content string) string {
	s.t.Helper()
	p := filepath.Join(s.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// session writes sessions/<pid>.json for a process, with the fields a
// current Claude Code writes; extra replaces or adds fields (nil deletes).
func (s *claudeStore) session(pid int, sessionID, status string, extra map[string]any) string {
	s.t.Helper()
	now := time.Now().UnixMilli()
	rec := map[string]any{
		"pid":             pid,
		"sessionId":       sessionID,
		"cwd":             "/home/u/webapp",
		"procStart":       procStartOf(s.t, pid),
		"startedAt":       now,
		"kind":            "interactive",
		"entrypoint":      "cli",
		"version":         "2.1.278",
		"status":          status,
		"updatedAt":       now,
		"statusUpdatedAt": now,
		"name":            "fix-login",
	}
	for k, v := range extra {
		if v == nil {
			delete(rec, k)
			continue
		}
		rec[k] = v
	}
	return s.write("sessions/"+strconv.Itoa(pid)+".json", rec)
}

// procStartOf is what Claude Code writes as procStart for pid: on Linux
// the start ticks of /proc/<pid>/stat (field 22), elsewhere `ps` lstart.
func procStartOf(t testing.TB, pid int) string {
	t.Helper()
	if runtime.GOOS == "linux" {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		// Fields after the command's closing parenthesis start at field 3.
		rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
		return strings.Fields(rest)[22-3]
	}
	out, err := exec.Command("ps", "-o", "lstart=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// sleeper starts a process that lives until the test ends (or it is
// killed) and returns it.
func sleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	p := exec.Command("sleep", "300")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Process.Kill(); _ = p.Wait() })
	return p
}

// gonePID is the pid of a process that ran and was reaped.
func gonePID(t *testing.T) int {
	t.Helper()
	p := exec.Command("true")
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	return p.Process.Pid
}
