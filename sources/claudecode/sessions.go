package claudecode

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// Session statuses Claude Code writes (busy, idle, waiting; shell while a
// `!` command runs).
const (
	statusBusy    = "busy"
	statusIdle    = "idle"
	statusWaiting = "waiting"
	statusShell   = "shell"
)

// sessionFile is sessions/<pid>.json. Every field is a pointer: a field
// missing is told from one empty.
type sessionFile struct {
	PID             *int            `json:"pid"`
	ProcStart       json.RawMessage `json:"procStart"`
	StartedAt       *float64        `json:"startedAt"`
	SessionID       *string         `json:"sessionId"`
	CWD             *string         `json:"cwd"`
	Kind            *string         `json:"kind"`
	Entrypoint      *string         `json:"entrypoint"`
	Version         *string         `json:"version"`
	Status          *string         `json:"status"`
	WaitingFor      *string         `json:"waitingFor"`
	UpdatedAt       *float64        `json:"updatedAt"`
	StatusUpdatedAt *float64        `json:"statusUpdatedAt"`
	Name            *string         `json:"name"`
}

// sessionFileName reports the pid a file of sessions/ is named for:
// <pid>.json. The legacy pid-<n>.json (session_id and cwd only, no status,
// no procStart) and temp or dot files are not sessions.
func sessionFileName(name string) (int, bool) {
	stem, ok := strings.CutSuffix(name, ".json")
	if !ok || stem == "" {
		return 0, false
	}
	pid, err := strconv.Atoi(stem)
	return pid, err == nil && pid > 0 && strconv.Itoa(pid) == stem
}

func (r *reader) readSessions() {
	r.eachRecordEntry(sessionsDir, func(d recordDir, e os.DirEntry) {
		// A directory so named is read too: its read is a problem, not a
		// session skipped without a word.
		namePID, ok := sessionFileName(e.Name())
		if !ok {
			return
		}
		path := d.path + sep + e.Name()
		r.readSession(d, path[len(d.path)+1:], path, namePID)
	})
}

// readSession maps one session file onto a session node: the record name
// of the sessions' dir d, whose path is path.
func (r *reader) readSession(d recordDir, name, path string, namePID int) {
	var sf sessionFile
	raw, fi, ok := r.readRecordAt(d, name, path, &sf)
	if !ok {
		return
	}
	if sf.PID == nil || *sf.PID <= 0 {
		// No pid: nothing tells whether it runs. Not guessed.
		r.problem(path, "read %s: pid: %s: the session is not shown", path, absentOr(sf.PID))
		return
	}
	pid := *sf.PID
	if pid != namePID {
		r.problem(path, "read %s: pid %d is not the %d the file is named for", path, pid, namePID)
	}
	id := str(sf.SessionID)
	if id == "" || strings.ContainsAny(id, `/\`) {
		r.problem(path, "read %s: sessionId: %s", path, absentOrQuoted(sf.SessionID))
		id = "pid-" + strconv.Itoa(pid)
	}
	if prev := r.bySession[id]; prev != nil {
		// Two live files for one session: a resumed session and the
		// process that left its file behind. Each keeps its node.
		r.problem(path, "read %s: session %s is also %s", path, id, prev.HeartbeatPath)
		id += "@" + strconv.Itoa(pid)
	}

	n := &model.Node{
		ID:            id,
		HeartbeatPath: path,
		HasHeartbeat:  true,
		Source:        string(Kind),
		BeatMtime:     newer(millis(sf.StatusUpdatedAt), millis(sf.UpdatedAt)),
		Heartbeat: &model.Heartbeat{
			PID:            pid,
			Role:           str(sf.Kind),
			HasParentField: true, // a session lead
		},
		// No beat: the file is rewritten when the status changes, and an
		// idle session writes nothing for days. The pid decides.
		Traits: model.Traits{BeatNotRequired: true, SignOfLife: model.SignUpdate},
	}
	if n.BeatMtime.IsZero() {
		n.BeatMtime = fi.ModTime
	}

	procStart := rawString(sf.ProcStart)
	started, err := procStartTime(procStart, r.boot, r.goos)
	switch {
	case err != nil:
		r.problem(path, "read %s: procStart: %v: the pid is not checked against it", path, err)
	case started.IsZero() && sf.StartedAt != nil:
		// startedAt is stamped once the process is up: later than its
		// create time by seconds, minutes under load.
		started = millis(sf.StartedAt)
		n.Traits.StartSlack = StartedAtSlack
	}
	n.Heartbeat.Started = model.EpochSeconds(started)

	status := str(sf.Status)
	switch status {
	case statusBusy, statusShell:
		n.Heartbeat.Status = model.StatusRunning
	case statusIdle:
		n.Heartbeat.Status = model.StatusRunning
		n.Traits.RecordIdle = true
	case statusWaiting:
		n.Heartbeat.Status = model.StatusRunning
		q := str(sf.WaitingFor)
		if q == "" {
			q = "waiting (no waitingFor)"
		}
		n.Blocked = &model.Blocked{Path: path, Question: q, Kind: "claude-code", Since: millis(sf.StatusUpdatedAt)}
	default:
		// Unknown: shown as the system words it (unknown_status), never
		// guessed finished or dead.
		r.problem(path, "read %s: status: %s is not one of busy, idle, waiting, shell", path, absentOrQuoted(sf.Status))
		n.Heartbeat.Status = status
		if sf.Status == nil {
			n.Heartbeat.Status = "(absent)"
		}
	}

	f := fields(
		"session id", str(sf.SessionID),
		"name", str(sf.Name),
		"status", status,
		"waiting for", str(sf.WaitingFor),
		"kind", str(sf.Kind),
		"entrypoint", str(sf.Entrypoint),
		"version", str(sf.Version),
		"cwd", str(sf.CWD),
		"proc start", procStart,
	)
	n.Rare = &model.Rare{SourceFields: f, HeartbeatRaw: raw}
	n.InfraDir = r.resumeDir(path, sf)
	r.bySession[str(sf.SessionID)] = n
	r.sessions = append(r.sessions, n)
	r.facts.Nodes = append(r.facts.Nodes, n)
}

// rawString is a JSON string's value, or a number's text ("" when absent
// or null).
func rawString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var num json.Number
	if json.Unmarshal(raw, &num) == nil {
		return num.String()
	}
	return ""
}

func absentOr(p *int) string {
	if p == nil {
		return "absent"
	}
	return strconv.Itoa(*p) + " is not a process id"
}

func absentOrQuoted(p *string) string {
	if p == nil {
		return "absent"
	}
	return quoted(*p)
}

// sessionNode is the node of the running session sessionID, nil when no
// session file names it.
func (r *reader) sessionNode(sessionID string) *model.Node {
	if sessionID == "" {
		return nil
	}
	return r.bySession[sessionID]
}

// ResumeDir is the directory, under the journal's of the root, where
// dispatchtop keeps its own files for a Claude Code session: the resume's
// marker, retry count and log (SPEC §5.2). Claude Code's store is never
// written, and neither is the session's cwd (the user's project): a
// session resumes (`claude --resume <sessionId>`) in its cwd, but its
// state lies here, inside the root, where every dashboard acting on the
// root finds it.
func ResumeDir(root, sessionID string) string {
	return filepath.Join(root, protocol.JournalDir, string(Kind), sessionID)
}

// resumeDir is the session's ResumeDir when Claude Code can resume it:
// a sessionId to resume and an absolute cwd to resume it in. Without
// them the node has no dir, and resume is refused as for any record
// without one.
func (r *reader) resumeDir(path string, sf sessionFile) string {
	id, cwd := str(sf.SessionID), str(sf.CWD)
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." || !filepath.IsAbs(cwd) {
		return ""
	}
	return ResumeDir(r.root, id)
}

// supersede finishes the files a session's earlier processes left behind
// once it was resumed: two files in sessions/ name one sessionId (the
// resumed session's, and the one its killed process left, which Claude
// Code does not remove). Each but the newest whose process is gone is
// `completed`, "resumed as" the newest, and has no dir: the session runs
// on there, and is never resumed again from the old file. An older file
// whose process still lives is judged by its pid as any other.
func (r *reader) supersede() {
	byID := map[string][]*model.Node{}
	for _, n := range r.sessions {
		if id := fieldOf(n, "session id"); id != "" {
			byID[id] = append(byID[id], n)
		}
	}
	for _, ns := range byID {
		if len(ns) < 2 {
			continue
		}
		newest := ns[0]
		for _, n := range ns[1:] {
			if n.Heartbeat.Started > newest.Heartbeat.Started ||
				n.Heartbeat.Started == newest.Heartbeat.Started && n.BeatMtime.After(newest.BeatMtime) {
				newest = n
			}
		}
		for _, n := range ns {
			if n == newest || !processGone(n.Heartbeat.PID) {
				continue
			}
			n.Heartbeat.Status = model.StatusCompleted
			n.Traits.RecordIdle = false
			n.Blocked = nil
			n.InfraDir = ""
			n.EditRare(func(rr *model.Rare) { rr.Ending = "resumed as " + newest.HeartbeatPath })
		}
	}
}

// processGone reports whether no process has pid (ESRCH); one that cannot
// be signalled (another user's) is not gone.
func processGone(pid int) bool {
	return pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
