// Package middle reads middle's store: the `workflows` table of
// `~/.middle/db.sqlite3`, one database for every repo, as node facts (see
// package sources). The mapping, with the middle source each rule comes
// from, is in docs/sources.md.
//
// middle records no pid: an agent runs in a tmux session, whose name the
// row keeps. A launching or running row that is the newest with its
// session name gets the pid of the session's pane (one `tmux list-panes`
// per read) and that process's create time, when the session is one
// middle would have made for it (tmux.go); every other row's pid is 0,
// and a note says why when a row that should have one has none.
// There is no parent column either: the rows of one Epic (same repo and
// epic_ref) are the rounds of one piece of work, each handing off to the
// next, so the newest round is the node and the older ones hang under it
// as its history.
package middle

import (
	"bytes"
	"database/sql"
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
	"github.com/dispatchtop/dispatchtop/sources/internal/sqlitestore"
)

const (
	// dbFile is the store's name in middle's home (`[global] db_path`,
	// default `~/.middle/db.sqlite3`).
	dbFile = "db.sqlite3"
	table  = "workflows"
	// eventsTable and signalsTable are read when the store has them: the
	// watchdog's reasons, a parked row's armed signal.
	eventsTable  = "events"
	signalsTable = "waitfor_signals"
	// launchTimeout is the watchdog's DEFAULT_LAUNCH_TIMEOUT_MS: a
	// launching row whose updated_at is older has failed to launch.
	launchTimeout = 90 * time.Second
	// transcriptTail is how much of a transcript's end is read first for
	// its last timestamp.
	transcriptTail = 64 << 10
)

// requiredColumns are those of migration 001's CREATE TABLE that the
// mapping reads: a table without them is not middle's. The columns later
// migrations add (archived_at 007, epic_ref 009, end_reason 012) read as
// NULL when a database predates them.
var requiredColumns = []string{"id", "kind", "repo", "epic_number", "adapter", "state", "created_at", "updated_at",
	"worktree_path", "session_name", "session_id", "transcript_path", "controlled_by", "last_heartbeat"}

var columns = []sqlitestore.Column{
	{Name: "id", Type: "TEXT", Default: "''"},
	{Name: "kind", Type: "TEXT", Default: "''"},
	{Name: "repo", Type: "TEXT", Default: "''"},
	{Name: "epic_number", Type: "INTEGER"},
	{Name: "adapter", Type: "TEXT", Default: "''"},
	{Name: "state", Type: "TEXT", Default: "''"},
	{Name: "created_at", Type: "INTEGER", Default: "0"},
	{Name: "updated_at", Type: "INTEGER", Default: "0"},
	{Name: "worktree_path", Type: "TEXT"},
	{Name: "session_name", Type: "TEXT"},
	{Name: "session_id", Type: "TEXT"},
	{Name: "transcript_path", Type: "TEXT"},
	{Name: "controlled_by", Type: "TEXT", Default: "''"},
	{Name: "last_heartbeat", Type: "INTEGER"},
	{Name: "epic_ref", Type: "TEXT"},
	{Name: "archived_at", Type: "INTEGER"},
	{Name: "end_reason", Type: "TEXT"},
}

// Source reads middle's workflows.
type Source struct {
	// BusyTimeout is how long a read waits for a locked database
	// (0: sqlitestore.DefaultBusyTimeout).
	BusyTimeout time.Duration
	// PaneLookup lists the live tmux sessions with their agents' pane
	// pids and creation times, for a read that has a row to judge by its
	// session, at most once per PaneTTL (nil: Tmux{}.Sessions, the user's
	// default server).
	PaneLookup func() (map[string]Session, error)
	// ProcessStarted is a pid's create time in float seconds since the
	// epoch (nil: the process probe's reading, through gopsutil).
	ProcessStarted func(pid int) (float64, error)
	// PaneTTL is how long one answer of tmux serves the reads that follow
	// it, while it gives every row it judges a live pane (0:
	// DefaultPaneTTL).
	PaneTTL time.Duration

	// clock is the time the answer ages by (nil: time.Now); tests set it.
	clock      func() time.Time
	panesAsked paneCache
}

// New returns the middle source, asking the user's default tmux server.
func New() *Source { return &Source{} }

// Kind names the source.
func (*Source) Kind() sources.Kind { return sources.Middle }

// Thresholds are middle's watchdog's own: a row idle 5 minutes
// (DEFAULT_IDLE_THRESHOLD_MS) is stale, idle 15 minutes
// (DEFAULT_IDLE_KILL_THRESHOLD_MS) it is killed.
func (*Source) Thresholds() model.Thresholds {
	t := model.DefaultThresholds()
	t.Stale = 5 * time.Minute
	t.KillAfter = 15 * time.Minute
	return t
}

// homeDir is middle's home (`~/.middle`).
const homeDir = ".middle"

// dbPath is the database a root names, absolute: the root itself when it
// is named db.sqlite3 or is no directory, else the db.sqlite3 in it (a
// middle home). Whether it can be read is the read's to say.
func dbPath(root string) string {
	abs, err := filepath.Abs(root)
	if err != nil {
		abs = root
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() && filepath.Base(abs) != dbFile {
		return filepath.Join(abs, dbFile)
	}
	return abs
}

// isSQLite reports whether the file begins with SQLite's header.
func isSQLite(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 16)
	_, err = io.ReadFull(f, head)
	return err == nil && string(head) == "SQLite format 3\x00"
}

// Detect reports whether path is middle's store, by its layout: a
// db.sqlite3 given itself, whatever stands there, or a directory holding
// one that is middle's home (`.middle`) or begins with SQLite's header.
// A store there that cannot be read is middle's all the same, and its
// read says why (a corrupt or empty file, a directory, no permission),
// never the file protocol's "no tree found".
func (*Source) Detect(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	if filepath.Base(abs) == dbFile {
		return exists(abs)
	}
	db := filepath.Join(abs, dbFile)
	return isDir(abs) && exists(db) && (filepath.Base(abs) == homeDir || isSQLite(db))
}

// WatchPaths are the database and its -wal.
func (*Source) WatchPaths(path string) []string {
	p := dbPath(path)
	return []string{p, p + "-wal"}
}

// workflow is one row as middle writes it; times are epoch milliseconds.
type workflow struct {
	id, kind, repo, adapter, state string
	epicNumber                     sql.NullInt64
	epicRef                        sql.NullString
	created, updated               int64
	worktree, session, sessionID   sql.NullString
	transcript                     sql.NullString
	controlledBy                   string
	lastHeartbeat, archived        sql.NullInt64
	endReason                      sql.NullString
	// From the other tables, when they are there.
	watchdogReason  string // the latest watchdog.failed event's reason
	orphanFinalized string // the latest daemon.orphan-finalized event's finalState
	gateFailed      string // the latest gate.failed event's gate and exit code
	signal          string // the armed waitfor signal of a parked row
	// key is the row's key (see key), made once a read: the older rounds
	// of its Epic name it as their parent, sharing it, not a copy each.
	key string
}

// Read reads the workflows of the store at root in one short transaction.
func (s *Source) Read(root string, now time.Time) sources.Facts {
	path := dbPath(root)
	rows, err := s.read(path)
	if err != nil {
		return sources.Facts{Problems: []model.Problem{{Path: path, Error: err.Error()}}}
	}
	for _, w := range rows {
		w.key = key(path, w)
	}
	// What each row's node needs of the others (its Epic's newest round's
	// key) and of tmux (its pane), by index: a row mapped is let go, and a
	// million rows are not held beside their million nodes.
	parents := make([]string, len(rows))
	for i, newest := range newestRounds(rows) {
		if newest != nil && newest != rows[i] {
			parents[i] = newest.key
		}
	}
	var panes []pane
	if byRow := s.panes(rows); len(byRow) > 0 {
		panes = make([]pane, len(rows))
		for i, w := range rows {
			panes[i] = byRow[w]
		}
	}
	facts := sources.Facts{Nodes: make([]*model.Node, len(rows))}
	for i, w := range rows {
		var p pane
		if panes != nil {
			p = panes[i]
		}
		facts.Nodes[i] = node(path, w, parents[i], p)
		rows[i] = nil
	}
	return facts
}

func (s *Source) read(path string) ([]*workflow, error) {
	snap, err := sqlitestore.Open(path, s.BusyTimeout)
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	// rowid breaks a tie of created_at as middle's own lookups do.
	schema, rows, err := snap.SelectTable(table, requiredColumns, columns, "created_at, rowid", eventsTable, signalsTable)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*workflow
	// The columns most rows share a value of hold one copy of each value,
	// not one a row: the nodes keep them.
	shared := sqlitestore.Shared{}
	for rows.Next() {
		w := &workflow{}
		if err := rows.Scan(&w.id, &w.kind, &w.repo, &w.epicNumber, &w.adapter, &w.state, &w.created, &w.updated,
			&w.worktree, &w.session, &w.sessionID, &w.transcript, &w.controlledBy, &w.lastHeartbeat,
			&w.epicRef, &w.archived, &w.endReason); err != nil {
			return nil, sqlitestore.Describe(snap.Path, err)
		}
		for _, s := range []*string{&w.kind, &w.repo, &w.adapter, &w.state, &w.controlledBy} {
			shared.Share(s)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, sqlitestore.Describe(snap.Path, err)
	}
	byID := make(map[string]*workflow, len(out))
	for _, w := range out {
		byID[w.id] = w
	}
	if schema.Has(eventsTable) {
		if err := readEvents(snap, byID); err != nil {
			return nil, err
		}
	}
	if cols := schema.Columns(signalsTable); cols != nil {
		if err := readSignals(snap, cols, byID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readEvents takes, of each row, the latest of the events that say why it
// ended: watchdog.failed's reason (the watchdog writes why it failed a row
// there, not in end_reason), daemon.orphan-finalized's finalState (a
// parked row whose execution was gone at the daemon's restart) and
// gate.failed's gate and exit code (a verify gate that failed on Stop),
// as middle records them (commit 2bbacdc: recovery.ts
// reconcileOrphanedSignals, build-deps.ts runVerifyGates).
func readEvents(snap *sqlitestore.Snapshot, byID map[string]*workflow) error {
	rows, err := snap.Query(`SELECT workflow_id, type, payload_json FROM events
		WHERE type IN ('watchdog.failed', 'daemon.orphan-finalized', 'gate.failed') ORDER BY ts, id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, typ string
		var payload sql.NullString
		if err := rows.Scan(&id, &typ, &payload); err != nil {
			return sqlitestore.Describe(snap.Path, err)
		}
		w := byID[id]
		var p struct {
			Reason     string `json:"reason"`
			FinalState string `json:"finalState"`
			GateName   string `json:"gateName"`
			ExitCode   *int   `json:"exitCode"`
		}
		if w == nil || json.Unmarshal([]byte(payload.String), &p) != nil {
			continue
		}
		switch {
		case typ == "watchdog.failed" && p.Reason != "":
			w.watchdogReason = p.Reason
		case typ == "daemon.orphan-finalized" && p.FinalState != "":
			w.orphanFinalized = p.FinalState
		case typ == "gate.failed" && p.GateName != "":
			w.gateFailed = p.GateName
			if p.ExitCode != nil {
				w.gateFailed += " (exit " + strconv.Itoa(*p.ExitCode) + ")"
			}
		}
	}
	return rows.Err()
}

// readSignals takes each parked row's armed signal (not fired): its name
// says what the human is asked for (`epic-<ref>-answered`,
// `blocked:<id>`: a question; `epic-<ref>-review-resolved`: a review).
// cols are the table's columns.
func readSignals(snap *sqlitestore.Snapshot, cols map[string]bool, byID map[string]*workflow) error {
	query := `SELECT workflow_id, signal_name FROM waitfor_signals`
	if cols["fired_at"] { // migration 002
		query += ` WHERE fired_at IS NULL`
	}
	rows, err := snap.Query(query + ` ORDER BY created_at`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			return sqlitestore.Describe(snap.Path, err)
		}
		if w := byID[id]; w != nil {
			w.signal = name
		}
	}
	return rows.Err()
}

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
