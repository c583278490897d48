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
//
// middle.go holds the Source; store.go the reading of the store, mapping.go
// a row as node facts, tmux.go the sessions its rows name.
package middle

import (
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
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
	// queries counts the reads of the database, scanned the workflows
	// rows they scanned: what a read after a commit keeps low.
	queries, scanned atomic.Int64
	// held holds the database's connection while a live read follows it.
	held sqlitestore.Held
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
//
// A database whose connection is held is not opened to look at its header:
// the close of that descriptor would drop the held connection's locks.
func (s *Source) Detect(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	if filepath.Base(abs) == dbFile {
		return exists(abs)
	}
	db := filepath.Join(abs, dbFile)
	return isDir(abs) && exists(db) && (filepath.Base(abs) == homeDir || s.held.Holds(db) || isSQLite(db))
}

// WatchPaths are the database and its -wal.
func (*Source) WatchPaths(path string) []string {
	p := dbPath(path)
	return []string{p, p + "-wal"}
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
