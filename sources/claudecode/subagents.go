package claudecode

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// A session's subagents (the Task tool's) write their transcripts beside
// the session's own, projects/<slug>/<sessionId>/subagents/agent-<id>.jsonl
// (sonnes/chitragupt reader/claude/claude.go discoverSubagentFiles, and
// docs/specs/004-subagents.md): one JSON object a line, each with
// isSidechain true and the agentId. agent-acompact-*.jsonl is the
// session's own context compaction, no agent.
const (
	subagentsDir    = "subagents"
	subagentPrefix  = "agent-"
	compactPrefix   = "agent-acompact-"
	transcriptExt   = ".jsonl"
	endTurn         = "end_turn"
	subagentTailCap = 64 << 10 // the last line is read from at most this much of the file's end
)

// subagentLine is the part of a transcript line this reader needs.
type subagentLine struct {
	Type      string `json:"type"`
	AgentID   string `json:"agentId"`
	Timestamp string `json:"timestamp"`
	Message   *struct {
		StopReason *string `json:"stop_reason"`
	} `json:"message"`
}

// tail is what the last complete line of a transcript said, kept while
// the file's signature stays as it was: a transcript grows to megabytes,
// and only its end is read, only when it moved.
type tail struct {
	size  int64
	mtime time.Time
	ino   uint64
	line  subagentLine
	err   string // the line did not parse ("" when it did)
	empty bool   // no complete line yet
}

// tails keeps, per store, the tail of every transcript the last read saw.
var tails = struct {
	sync.Mutex
	byStore map[string]map[string]tail
}{byStore: map[string]map[string]tail{}}

// statPath is os.Stat (a variable: a test counts the looks a read makes).
var statPath = os.Stat

// readSubagents maps the subagents of every session read onto nodes under
// their session. Only sessions with a file in sessions/ are looked at:
// projects/ keeps every past session's transcripts, which ran once.
func (r *reader) readSubagents() {
	projects := filepath.Join(r.store, projectsDir)
	tails.Lock()
	prev := tails.byStore[r.store]
	tails.Unlock()
	seen := map[string]tail{}
	var listed []os.DirEntry
	listedOnce := false
	// Sessions of one cwd share its project dir, looked at once a read, not
	// once a session (a home's sessions are of a few projects).
	projectThere := map[string]bool{}
	// Two files for one session (a resumed session and the file its killed
	// process left): its subagents hang under the newest process's.
	sessions := slices.Clone(r.sessions)
	slices.SortStableFunc(sessions, func(a, b *model.Node) int { return cmp.Compare(b.Heartbeat.Started, a.Heartbeat.Started) })
	for _, n := range sessions {
		sid := fieldOf(n, "session id")
		if sid == "" || strings.ContainsAny(sid, `/\`) || sid == "." || sid == ".." {
			continue
		}
		cwd := fieldOf(n, "cwd")
		project := filepath.Join(projects, projectSlug(cwd))
		dir := filepath.Join(project, sid, subagentsDir)
		there, looked := projectThere[project]
		if !looked {
			_, err := statPath(project)
			there = err == nil
			projectThere[project] = there
		}
		if !there || cwd == "" {
			// The slug is Claude Code's, not a published rule: with no
			// project dir of that name, look in every project for the
			// session before concluding none. (With one, a session
			// without a subagents dir there has none: most have none.)
			if !listedOnce {
				listed, listedOnce = r.listDir(projects), true
			}
			dir = ""
			for _, p := range listed {
				cand := filepath.Join(projects, p.Name(), sid, subagentsDir)
				if fi, err := statPath(cand); err == nil && fi.IsDir() {
					dir = cand
					break
				}
			}
			if dir == "" {
				continue
			}
		}
		if _, err := statPath(dir); err != nil {
			continue
		}
		for _, e := range r.listDir(dir) {
			name := e.Name()
			if e.IsDir() || !strings.HasPrefix(name, subagentPrefix) || strings.HasPrefix(name, compactPrefix) || !strings.HasSuffix(name, transcriptExt) {
				continue
			}
			r.readSubagent(n, filepath.Join(dir, name), prev, seen)
		}
	}
	tails.Lock()
	tails.byStore[r.store] = seen
	tails.Unlock()
}

// projectSlug is the dir Claude Code keeps a cwd's transcripts in: the
// path with every character but a letter or digit made '-'
// (/home/u/.config/app: -home-u--config-app).
func projectSlug(cwd string) string {
	b := []byte(cwd)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// readSubagent maps one transcript onto a node under its session: its
// process is the session's (a subagent runs inside it), its activity the
// file's last write; its last line ending the turn says it finished.
func (r *reader) readSubagent(lead *model.Node, path string, prev, seen map[string]tail) {
	if _, dup := seen[path]; dup {
		// Two files in sessions/ for one session: its subagents hang
		// under the newest's, once.
		return
	}
	fi, err := os.Stat(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.problem(path, "%v", err)
		}
		return
	}
	t, ok := prev[path]
	if !ok || t.size != fi.Size() || !t.mtime.Equal(fi.ModTime()) || t.ino != inode(fi) {
		t, err = readTail(path, fi)
		if err != nil {
			r.problem(path, "%v", err)
			return
		}
	}
	seen[path] = t
	agent := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), subagentPrefix), transcriptExt)
	n := &model.Node{
		ID:            lead.ID + "/" + subagentPrefix + agent,
		HeartbeatPath: path,
		HasHeartbeat:  true,
		Source:        string(Kind),
		BeatMtime:     fi.ModTime(),
		ActivityMtime: fi.ModTime(),
		Heartbeat: &model.Heartbeat{
			PID:             lead.Heartbeat.PID,
			Started:         lead.Heartbeat.Started,
			Role:            "subagent",
			Status:          model.StatusRunning,
			ParentHeartbeat: lead.HeartbeatPath,
			HasParentField:  true,
		},
		// It writes its transcript as it works, but a long tool call
		// writes nothing: its session's process says it lives.
		Traits: model.Traits{BeatNotRequired: true, SignOfLife: model.SignActivity, StartSlack: lead.Traits.StartSlack},
	}
	last := ""
	switch {
	case t.err != "":
		r.problem(path, "read %s: its last line: %s: not known to have finished", path, t.err)
	case t.empty:
		last = "(no complete line yet)"
	default:
		last = t.line.Type
		if t.line.Message != nil && t.line.Message.StopReason != nil {
			last += ", stop_reason " + *t.line.Message.StopReason
		}
		if t.line.Type == "assistant" && t.line.Message != nil && t.line.Message.StopReason != nil && *t.line.Message.StopReason == endTurn {
			n.Heartbeat.Status = model.StatusCompleted
		}
	}
	n.Rare = &model.Rare{SourceFields: fields(
		"agent id", agent,
		"session id", fieldOf(lead, "session id"),
		"transcript", path,
		"last line", last,
		"last line at", t.line.Timestamp,
	)}
	r.facts.Nodes = append(r.facts.Nodes, n)
}

// readTail reads the last complete line of the transcript at path, from
// at most subagentTailCap bytes of its end: a line being appended (no
// newline yet) is not read, the one before it is.
func readTail(path string, fi os.FileInfo) (tail, error) {
	t := tail{size: fi.Size(), mtime: fi.ModTime(), ino: inode(fi)}
	f, err := protocol.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return t, err
	}
	defer f.Close()
	off := max(fi.Size()-subagentTailCap, 0)
	buf := make([]byte, fi.Size()-off)
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return t, fmt.Errorf("read %s: %w", path, err)
	}
	buf = buf[:n]
	end := bytes.LastIndexByte(buf, '\n')
	if end < 0 {
		if off > 0 {
			t.err = fmt.Sprintf("no line ends in its last %d bytes", subagentTailCap)
		}
		t.empty = t.err == ""
		return t, nil
	}
	buf = buf[:end]
	start := bytes.LastIndexByte(buf, '\n') + 1
	if start == 0 && off > 0 {
		t.err = fmt.Sprintf("its last line is longer than %d bytes", subagentTailCap)
		return t, nil
	}
	if err := json.Unmarshal(bytes.TrimSpace(buf[start:]), &t.line); err != nil {
		t.err = err.Error()
	}
	return t, nil
}

// inode is the file's inode (0 where the system has none).
func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// fieldOf is the value of the node's source field name ("" when absent).
func fieldOf(n *model.Node, name string) string {
	for _, f := range n.SourceFields() {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}
