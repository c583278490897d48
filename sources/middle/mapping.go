package middle

// A row as node facts: its Epic's chain, its status, its question, its
// transcript's last timestamp, its fields (docs/sources.md, middle).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
)

// chain names the Epic a row works on; "" for a row of no Epic (a
// recommender or documentation run), which is a chain of its own.
func chain(w *workflow) string {
	ref := w.epicRef.String
	if !w.epicRef.Valid && w.epicNumber.Valid {
		ref = strconv.FormatInt(w.epicNumber.Int64, 10)
	}
	if ref == "" {
		return ""
	}
	return w.repo + "#" + ref
}

// newestRounds is, for each row, the newest row of its Epic (nil for a
// row of no Epic): rows come ordered by created_at, rowid, as middle's
// findActiveWorkflowBySession orders them. Each row's Epic is named once.
func newestRounds(rows []*workflow) []*workflow {
	chains := make([]string, len(rows))
	newest := map[string]*workflow{}
	for i, w := range rows {
		if c := chain(w); c != "" {
			chains[i] = c
			newest[c] = w
		}
	}
	out := make([]*workflow, len(rows))
	for i, c := range chains {
		if c != "" {
			out[i] = newest[c]
		}
	}
	return out
}

func key(dbPath string, w *workflow) string { return dbPath + "#" + w.id }

// node maps one row onto node facts; parentKey is the key of the newest
// round of its Epic ("" for the newest), p what tmux says of its session.
func node(dbPath string, w *workflow, parentKey string, p pane) *model.Node {
	hb := &model.Heartbeat{
		PID:               p.pid,
		Started:           p.started,
		Status:            status(w.state),
		Role:              w.kind,
		HeartbeatOptional: model.OptionalOf(model.HeartbeatOptional{Team: w.repo, TaskID: epic(w), Worktree: w.worktree.String}),
		HasParentField:    true,
	}
	hb.ParentHeartbeat = parentKey
	n := &model.Node{
		ID:            w.repo + "/" + w.id,
		Root:          filepath.Dir(dbPath),
		HeartbeatPath: w.key,
		HasHeartbeat:  true,
		Heartbeat:     hb,
		Source:        string(sources.Middle),
	}
	if w.worktree.Valid && isDir(w.worktree.String) {
		n.InfraDir = w.worktree.String
	}
	// The watchdog's baseline: the newest of the hook beat, updated_at and
	// the transcript's last timestamp (watchdog.ts).
	n.BeatMtime = millis(w.updated)
	if w.lastHeartbeat.Valid && millis(w.lastHeartbeat.Int64).After(n.BeatMtime) {
		n.BeatMtime = millis(w.lastHeartbeat.Int64)
	}
	n.ActivityMtime = n.BeatMtime
	if w.transcript.Valid && live(w.state) {
		t, err := lastTranscriptTime(w.transcript.String)
		switch {
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			n.AddProblem(model.Problem{Path: w.transcript.String, Error: err.Error()})
		case t.After(n.BeatMtime):
			n.BeatMtime, n.ActivityMtime = t, t
		}
	}
	switch w.state {
	case "launching":
		n.Traits.LaunchTimeout = launchTimeout
	case "waiting-human":
		// Parked: the session is killed, the worktree kept, a human asked.
		n.Traits.NoProcessExpected = true
		n.Blocked = parkedQuestion(w)
	case "rate-limited":
		// middle never moves a row out of rate-limited; shown paused, it
		// must never become dead for the session it no longer has.
		n.Traits.NoProcessExpected = true
	}
	if n.Blocked == nil && live(w.state) && n.InfraDir != "" {
		// The agent asked before the park (or the watchdog's handoff).
		if b, ok, err := readBlocked(n.InfraDir); ok {
			n.Blocked = b
		} else if err != nil {
			n.AddProblem(model.Problem{Path: blockedPath(n.InfraDir), Error: err.Error()})
		}
	}
	n.Traits.NeverKill = w.controlledBy == "human"
	// tmux could not be asked: an inconclusive status, on which the
	// watchdog skips its liveness check and lets its idle rules judge the
	// row (watchdog.ts, rule 2), failing it only at the idle kill time.
	n.Traits.ProcessUnseen = p.unseen
	// The watchdog's baseline is activity (hook events, the transcript,
	// the row's own writes), nothing that beats.
	n.Traits.SignOfLife = model.SignActivity
	// middle's work lands through its pull request, merged on GitHub; its
	// worktree is destroyed when the row ends: nothing is left to merge here.
	n.Traits.MergesItself = true
	sf, end := fields(w, p), ending(w)
	n.EditRare(func(r *model.Rare) { r.SourceFields, r.Ending = sf, end })
	return n
}

// ending is middle's own words on how a row ended that the status
// withdrawn does not say: the state (failed, cancelled, compensated),
// then why, as middle recorded it: the watchdog's reason, end_reason, a
// finalization as an orphan, the last gate that failed. "" for any other
// row.
func ending(w *workflow) string {
	switch w.state {
	case "failed", "cancelled", "compensated":
	default:
		return ""
	}
	var why []string
	if w.watchdogReason != "" {
		why = append(why, w.watchdogReason)
	}
	if w.endReason.Valid && w.endReason.String != "" {
		why = append(why, w.endReason.String)
	}
	if w.orphanFinalized != "" {
		why = append(why, "daemon.orphan-finalized")
	}
	if w.gateFailed != "" {
		why = append(why, "gate.failed: "+w.gateFailed)
	}
	if len(why) == 0 {
		return w.state
	}
	return w.state + ": " + strings.Join(why, "; ")
}

// status maps a workflow state onto the heartbeat vocabulary (SPEC §1).
func status(state string) string {
	switch state {
	case "pending", "launching":
		return "starting"
	case "running", "waiting-human":
		return "running"
	case "rate-limited":
		return "paused"
	case "completed":
		return "completed"
	case "failed", "compensated", "cancelled":
		return "withdrawn"
	}
	return state // unknown: shown as written, flagged by the classifier
}

// live: a row whose agent runs or is waited for.
func live(state string) bool {
	switch state {
	case "pending", "launching", "running", "waiting-human":
		return true
	}
	return false
}

// parkedQuestion is what a parked row waits for. blocked.json is deleted
// when the row parks (the question goes to the Epic), so it is read when
// still there, and the armed signal says what is asked otherwise.
func parkedQuestion(w *workflow) *model.Blocked {
	if w.worktree.Valid {
		if b, ok, _ := readBlocked(w.worktree.String); ok {
			return b
		}
	}
	b := &model.Blocked{Path: w.id}
	switch {
	case strings.HasSuffix(w.signal, "-review-resolved"):
		b.Kind, b.Question = "review", "pull request waiting for review"
	case w.signal != "":
		b.Kind, b.Question = "question", "question posted on the Epic"
	default:
		b.Kind, b.Question = "cap", "a round cap was reached; a human decides what next"
	}
	return b
}

func blockedPath(worktree string) string {
	return filepath.Join(worktree, protocol.MiddleDir, protocol.BlockedFile)
}

// readBlocked reads `<worktree>/.middle/blocked.json`; ok when it exists
// (its presence counts even when it cannot be parsed, SPEC §1).
func readBlocked(worktree string) (*model.Blocked, bool, error) {
	p := blockedPath(worktree)
	fi, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		return nil, false, err
	}
	b := &model.Blocked{Path: p, Since: fi.ModTime()}
	raw, err := protocol.ReadFile(p, protocol.MaxDocumentSize)
	if err != nil {
		return b, true, err
	}
	parsed, err := protocol.ParseBlocked(raw)
	if err != nil {
		return b, true, fmt.Errorf("read %s: %w", p, err)
	}
	parsed.Path, parsed.Since = p, fi.ModTime()
	return &parsed, true, nil
}

// lastTranscriptTime is the timestamp of the last line of a JSONL
// transcript that has one, as middle's readTranscriptState takes it (not
// the file's mtime); zero when no line has one. The tail is read, and a
// longer one when the tail is one long line (a large tool result).
func lastTranscriptTime(path string) (time.Time, error) {
	f, err := protocol.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return time.Time{}, fmt.Errorf("read %s: %w", path, err)
	}
	for _, window := range []int64{transcriptTail, protocol.MaxDocumentSize} {
		off := max(fi.Size()-window, 0)
		tail := make([]byte, fi.Size()-off)
		if _, err := f.ReadAt(tail, off); err != nil && !errors.Is(err, io.EOF) {
			return time.Time{}, fmt.Errorf("read %s: %w", path, err)
		}
		if t, ok := lastTimestamp(tail); ok {
			return t, nil
		}
		if off == 0 {
			break
		}
	}
	return time.Time{}, nil
}

// lastTimestamp finds the last line of b with a timestamp that parses.
func lastTimestamp(b []byte) (time.Time, bool) {
	lines := bytes.Split(b, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		var line struct {
			Timestamp string `json:"timestamp"`
		}
		if json.Unmarshal(lines[i], &line) != nil || line.Timestamp == "" {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, line.Timestamp); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func fields(w *workflow, p pane) []model.Field {
	// Made on the stack, kept at its size: appended to, a million rows'
	// fields took a slab up to twice as large as they are.
	var held [18]model.Field
	f := append(held[:0],
		model.Field{Name: "workflow", Value: w.id},
		model.Field{Name: "kind", Value: w.kind},
		model.Field{Name: "repo", Value: w.repo},
		model.Field{Name: "state", Value: w.state})
	f = model.AppendField(f, "epic", epic(w))
	f = model.AppendField(f, "adapter", w.adapter)
	f = model.AppendField(f, "controlled_by", w.controlledBy)
	f = model.AppendField(f, "tmux_session", w.session.String)
	f = model.AppendField(f, "tmux", p.note)
	f = model.AppendField(f, "session_id", w.sessionID.String)
	f = model.AppendField(f, "transcript", w.transcript.String)
	f = model.AppendField(f, "end_reason", w.endReason.String)
	f = model.AppendField(f, "watchdog_reason", w.watchdogReason)
	f = model.AppendField(f, "orphan_finalized", w.orphanFinalized)
	f = model.AppendField(f, "gate_failed", w.gateFailed)
	f = model.AppendField(f, "signal", w.signal)
	if w.archived.Valid {
		f = append(f, model.Field{Name: "archived_at", Value: millis(w.archived.Int64).UTC().Format(time.RFC3339)})
	}
	return slices.Clone(f)
}

func epic(w *workflow) string {
	if w.epicRef.Valid {
		return w.epicRef.String
	}
	if w.epicNumber.Valid {
		return strconv.FormatInt(w.epicNumber.Int64, 10)
	}
	return ""
}

// millis converts middle's epoch milliseconds (Date.now()) to a time.
func millis(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
