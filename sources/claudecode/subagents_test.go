package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// Transcript lines as Claude Code writes them in a subagent's file
// (sonnes/chitragupt reader/claude/testdata/subagent_child.jsonl): each
// with isSidechain and the agentId; an assistant line mid-turn carries
// stop_reason null (DRMacIver/claude-reliability notes/transcript-format.md).
const (
	subUser    = `{"type":"user","isSidechain":true,"agentId":"ae267a1","timestamp":"2026-11-26T10:00:02Z","message":{"role":"user","content":"find the Go files"}}`
	subToolUse = `{"type":"assistant","isSidechain":true,"agentId":"ae267a1","timestamp":"2026-11-26T10:00:04Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Glob","input":{"pattern":"**/*.go"}}],"stop_reason":null}}`
	subEndTurn = `{"type":"assistant","isSidechain":true,"agentId":"ae267a1","timestamp":"2026-11-26T10:00:08Z","message":{"role":"assistant","content":[{"type":"text","text":"Found 3 Go files"}],"stop_reason":"end_turn"}}`
)

const subSession = "3d4e5f60-7a8b-4c9d-8e0f-1a2b3c4d5e6f"

// subagentPath is where Claude Code keeps the subagent agent of a session
// run in cwd.
func (s *claudeStore) subagent(cwd, agent, content string) string {
	s.t.Helper()
	return s.writeRaw("projects/"+projectSlug(cwd)+"/"+subSession+"/subagents/agent-"+agent+".jsonl", content)
}

// docs/sources.md, Claude Code, subagents: each row, under a session of a
// real process (alive, or killed).
func TestSubagentRows(t *testing.T) {
	tests := []struct {
		name    string
		content string
		dead    bool // the session's process was killed
		want    rowWant
	}{
		{name: "mid-turn (a tool call): running, its session's process", content: subUser + "\n" + subToolUse + "\n",
			want: rowWant{state: model.StateRunning, status: model.StatusRunning}},
		{name: "a line being written: the one before it is read", content: subUser + "\n" + subToolUse + "\n" + `{"type":"assi`,
			want: rowWant{state: model.StateRunning, status: model.StatusRunning}},
		{name: "no complete line yet: running", content: `{"type":"us`,
			want: rowWant{state: model.StateRunning, status: model.StatusRunning}},
		{name: "its last line ends the turn: finished", content: subUser + "\n" + subToolUse + "\n" + subEndTurn + "\n",
			want: rowWant{state: model.StateFinished, status: model.StatusCompleted}},
		{name: "its session's process gone: dead", content: subUser + "\n" + subToolUse + "\n", dead: true,
			want: rowWant{state: model.StateDead, reason: "gone"}},
		{name: "a last line that does not parse: a problem naming the file, never finished", content: subUser + "\n{not json\n",
			want: rowWant{state: model.StateRunning, status: model.StatusRunning, problem: []string{"last line", "not known to have finished"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			p := sleeper(t)
			s.session(p.Process.Pid, subSession, "busy", nil)
			path := s.subagent("/home/u/webapp", "ae267a1", tt.content)
			s.subagent("/home/u/webapp", "acompact-9f8e7d", subUser+"\n")
			now := time.Now()
			if tt.dead {
				if err := p.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				_ = p.Wait()
				now = now.Add(Source{}.Thresholds().ExitGrace + time.Millisecond)
			}
			nodes, facts := read(t, s.dir, now)
			n := nodes[path]
			tt.want.pid = p.Process.Pid
			tt.want.check(t, n, facts)
			if n.ID != subSession+"/agent-ae267a1" || n.Heartbeat.ParentHeartbeat != filepath.Join(s.dir, "sessions", strconv.Itoa(p.Process.Pid)+".json") {
				t.Errorf("id %s under %s, want the session's child", n.ID, n.Heartbeat.ParentHeartbeat)
			}
			for _, m := range facts.Nodes {
				if strings.Contains(m.ID, "acompact") {
					t.Errorf("the session's compaction %s is shown as an agent", m.ID)
				}
			}
		})
	}
}

// Only the transcript's end is read, and only when it moved: a transcript
// of megabytes whose first lines no reader of the whole would get past is
// read by its last line, and a file whose size, mtime and inode are as
// they were is not read again (its bytes changed in place, the last
// read's line holds).
func TestSubagentTranscriptIsReadByItsTail(t *testing.T) {
	s := newStore(t)
	p := sleeper(t)
	s.session(p.Process.Pid, subSession, "busy", nil)
	junk := strings.Repeat("{torn "+strings.Repeat("x", 1000)+"\n", 2048) // 2 MiB that do not parse
	path := s.subagent("/home/u/webapp", "ae267a1", junk+subEndTurn+"\n")
	nodes, facts := read(t, s.dir, time.Now())
	(rowWant{state: model.StateFinished, status: model.StatusCompleted, pid: -1}).check(t, nodes[path], facts)

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// The same bytes' count, rewritten in place: its last line now ends no
	// turn, but nothing says the file moved.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.Replace(subEndTurn, `"end_turn"`, `"tool_use"`, 1)
	if _, err := f.WriteAt([]byte(moved+"\n"), fi.Size()-int64(len(subEndTurn)+1)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	nodes, facts = read(t, s.dir, time.Now())
	if n := nodes[path]; n.Status() != model.StatusCompleted {
		t.Errorf("status %s: an unmoved transcript was read again", n.Status())
	}
	// It moves: read again.
	later := fi.ModTime().Add(time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	nodes, facts = read(t, s.dir, time.Now())
	(rowWant{state: model.StateRunning, status: model.StatusRunning, pid: -1}).check(t, nodes[path], facts)
}

// The project dir is found by the session's cwd, and where Claude Code
// named it otherwise, by looking for the session in every project; a
// session whose file is gone (it exited) has its transcripts kept, and
// shows none of them.
func TestSubagentsAreFoundByTheirSession(t *testing.T) {
	s := newStore(t)
	p := sleeper(t)
	s.session(p.Process.Pid, subSession, "busy", nil)
	other := s.writeRaw("projects/-home-u-webapp-renamed/"+subSession+"/subagents/agent-b1.jsonl", subUser+"\n")
	past := s.writeRaw("projects/-home-u-other/0a0b0c0d-1e2f-4a5b-8c9d-0e1f2a3b4c5d/subagents/agent-c1.jsonl", subUser+"\n")
	nodes, _ := read(t, s.dir, time.Now())
	if nodes[other] == nil {
		t.Errorf("the subagent of a project dir named otherwise is not found")
	}
	if nodes[past] != nil {
		t.Errorf("a past session's subagent is shown: %s", nodes[past].ID)
	}
}

// Two files in sessions/ for one session (the resumed session and the
// file its killed process left behind): its subagents are shown once,
// under one of them, never as two nodes of one transcript.
func TestSubagentOfASessionWithTwoFilesIsShownOnce(t *testing.T) {
	s := newStore(t)
	live := sleeper(t)
	s.session(live.Process.Pid, subSession, "busy", nil)
	// The file the killed process left, listed first (sessions/1.json
	// sorts before any other pid's).
	s.write("sessions/1.json", map[string]any{"pid": gonePID(t), "sessionId": subSession,
		"cwd": "/home/u/webapp", "status": "idle", "startedAt": time.Now().Add(-time.Hour).UnixMilli()})
	path := s.subagent("/home/u/webapp", "ae267a1", subUser+"\n")
	facts := Source{}.Read(s.dir, time.Now())
	count := 0
	for _, n := range facts.Nodes {
		if n.HeartbeatPath == path {
			count++
		}
	}
	if count != 1 {
		t.Fatalf("%d nodes of %s, want one", count, path)
	}
	nodes, _ := read(t, s.dir, time.Now())
	if n := nodes[path]; n == nil || n.PID() != live.Process.Pid || n.State != model.StateRunning {
		t.Errorf("the subagent hangs under %+v, want the live session's process %d, running", n, live.Process.Pid)
	}
}

// TestProjectDirIsLookedAtOnceARead counts the looks a read makes for its
// sessions' subagents: a project dir once, however many sessions of its
// cwd there are (it was looked at once a session), and each session's own
// subagents dir once.
func TestProjectDirIsLookedAtOnceARead(t *testing.T) {
	s := newStore(t)
	cwds := []string{"/home/u/a", "/home/u/a", "/home/u/a", "/home/u/a", "/home/u/b", "/home/u/b"}
	for i, cwd := range cwds {
		pid := 4_000_000 + i // gone
		s.write(fmt.Sprintf("sessions/%d.json", pid), map[string]any{"pid": pid, "sessionId": fmt.Sprintf("s-%d", i),
			"cwd": cwd, "status": "idle", "kind": "interactive"})
		s.writeRaw(fmt.Sprintf("projects/%s/s-%d.jsonl", projectSlug(cwd), i), "{}\n")
	}
	s.writeRaw("projects/"+projectSlug("/home/u/a")+"/s-0/subagents/agent-x.jsonl", `{"type":"user","agentId":"x","isSidechain":true}`+"\n")
	looks := map[string]int{}
	real := statPath
	t.Cleanup(func() { statPath = real })
	statPath = func(p string) (os.FileInfo, error) {
		looks[p]++
		return real(p)
	}
	facts := Source{BootTime: func() time.Time { return time.Time{} }}.Read(s.dir, time.Now())
	for _, cwd := range []string{"/home/u/a", "/home/u/b"} {
		if got := looks[filepath.Join(s.dir, projectsDir, projectSlug(cwd))]; got != 1 {
			t.Errorf("project of %s looked at %d times, want once", cwd, got)
		}
	}
	for i, cwd := range cwds {
		if got := looks[filepath.Join(s.dir, projectsDir, projectSlug(cwd), fmt.Sprintf("s-%d", i), subagentsDir)]; got != 1 {
			t.Errorf("subagents of s-%d looked at %d times, want once", i, got)
		}
	}
	if len(facts.Nodes) != len(cwds)+1 {
		t.Errorf("read %d nodes, want the %d sessions and the subagent", len(facts.Nodes), len(cwds))
	}
}
