// Package opencode reads OpenCode's database, `opencode.db` in its data
// directory (`$XDG_DATA_HOME/opencode`, default `~/.local/share/opencode`):
// its `session` table (packages/opencode/src/session/session.sql.ts), as
// node facts (see package sources). The mapping, with the OpenCode source
// each rule comes from, is in docs/sources.md.
//
// A session with a parent_id is a sub-agent's, under its parent; one with
// time_archived is finished; time_updated (Date.now() on every update) is
// its activity. OpenCode records no pid: a session's process is the
// `opencode` process serving the data directory (procowner: its
// environment points at the directory, or it holds the database open).
// One server serves every session, so none is given its pid (a kill would
// end them all): with no server alive, and none hidden from view, an
// unarchived session is dead; with one alive its age says nothing of death
// (it waits for a prompt); when one may be hiding, nothing is concluded.
// Versions of OpenCode that kept JSON under `storage/` are detected and
// said to be unread, never read as empty.
package opencode

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/internal/procowner"
	"github.com/dispatchtop/dispatchtop/sources/internal/sqlitestore"
)

// Kind is the source's KIND.
const Kind sources.Kind = "opencode"

const (
	dbFile = "opencode.db"
	table  = "session"
	// storageDir is where versions before the database kept JSON.
	storageDir = "storage"
)

// programs are the command names OpenCode's binary runs as.
var programs = []string{"opencode", ".opencode"}

// requiredColumns are those of SessionTable the mapping reads: a table
// without them is not OpenCode's.
var requiredColumns = []string{"id", "parent_id", "title", "time_created", "time_updated"}

var columns = []sqlitestore.Column{
	{Name: "id", Type: "TEXT", Default: "''"},
	{Name: "parent_id", Type: "TEXT", Default: "''"},
	{Name: "directory", Type: "TEXT", Default: "''"},
	{Name: "title", Type: "TEXT", Default: "''"},
	{Name: "agent", Type: "TEXT", Default: "''"},
	{Name: "version", Type: "TEXT", Default: "''"},
	{Name: "time_created", Type: "INTEGER", Default: "0"},
	{Name: "time_updated", Type: "INTEGER", Default: "0"},
	{Name: "time_archived", Type: "INTEGER"},
}

// Source reads OpenCode's sessions.
type Source struct {
	// BusyTimeout is how long a read waits for a locked database
	// (0: sqlitestore.DefaultBusyTimeout).
	BusyTimeout time.Duration
	// ProcDir is where processes are looked up ("": /proc).
	ProcDir string

	// programs are the command names the owner runs as (nil: programs);
	// tests name a copy of sleep.
	programs []string
}

// New returns the OpenCode source.
func New() *Source { return &Source{} }

// Kind names the source.
func (*Source) Kind() sources.Kind { return Kind }

// Thresholds are the defaults: OpenCode counts no age as stale itself.
func (*Source) Thresholds() model.Thresholds { return model.DefaultThresholds() }

// DefaultStore is OpenCode's data directory: $XDG_DATA_HOME/opencode, else
// ~/.local/share/opencode ("" when neither can be told).
func DefaultStore(getenv func(string) string, home string) string {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "opencode")
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "share", "opencode")
}

// DBPath is the database a root names: the root itself when it is named
// opencode.db or is no directory, else the opencode.db in it.
func DBPath(root string) string {
	abs, err := filepath.Abs(root)
	if err != nil {
		abs = root
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return filepath.Join(abs, dbFile)
	}
	return abs
}

// Detect reports whether path is OpenCode's data directory (holding
// opencode.db, or the storage/session JSON of older versions) or its
// database itself.
func (*Source) Detect(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	if filepath.Base(abs) == dbFile {
		return exists(abs)
	}
	if exists(filepath.Join(abs, dbFile)) {
		return true
	}
	fi, err := os.Stat(filepath.Join(abs, storageDir, "session"))
	return err == nil && fi.IsDir()
}

// WatchPaths are the database and its -wal.
func (*Source) WatchPaths(path string) []string {
	p := DBPath(path)
	return []string{p, p + "-wal"}
}

type session struct {
	id, parent, directory, title, agent, version string
	created, updated                             int64
	archived                                     *int64
}

// Read reads the sessions of the store at root in one short transaction.
func (s *Source) Read(root string, now time.Time) sources.Facts {
	path := DBPath(root)
	if !exists(path) {
		if dir := filepath.Join(filepath.Dir(path), storageDir); exists(dir) {
			return sources.Facts{Problems: []model.Problem{{Path: dir,
				Error: fmt.Sprintf("read %s: the JSON storage of OpenCode before its database is not read; no %s beside it", dir, dbFile)}}}
		}
	}
	rows, err := s.read(path)
	if err != nil {
		return sources.Facts{Problems: []model.Problem{{Path: path, Error: err.Error()}}}
	}
	owners := s.owners(filepath.Dir(path), path)
	facts := sources.Facts{Nodes: make([]*model.Node, 0, len(rows))}
	for _, r := range rows {
		facts.Nodes = append(facts.Nodes, node(path, r, owners, now))
	}
	return facts
}

func (s *Source) read(path string) ([]*session, error) {
	snap, err := sqlitestore.Open(path, s.BusyTimeout)
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	_, rows, err := snap.SelectTable(table, requiredColumns, columns, "time_created, id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*session
	for rows.Next() {
		r := &session{}
		if err := rows.Scan(&r.id, &r.parent, &r.directory, &r.title, &r.agent, &r.version,
			&r.created, &r.updated, &r.archived); err != nil {
			return nil, sqlitestore.Describe(snap.Path, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, sqlitestore.Describe(snap.Path, err)
	}
	return out, nil
}

// owners looks up the opencode processes serving dataDir: $XDG_DATA_HOME
// names its parent, or, without one, $HOME/.local/share/opencode is it, or
// the database (or its -wal) is held open.
func (s *Source) owners(dataDir, db string) procowner.Lookup {
	names := s.programs
	if names == nil {
		names = programs
	}
	return procowner.Find(s.ProcDir, procowner.Spec{
		Names: names,
		Owns: func(env map[string]string) bool {
			if d := env["XDG_DATA_HOME"]; d != "" {
				return procowner.SameDir(filepath.Join(d, "opencode"), dataDir)
			}
			return env["HOME"] != "" && procowner.SameDir(filepath.Join(env["HOME"], ".local", "share", "opencode"), dataDir)
		},
		Files: []string{db, db + "-wal"},
	})
}

func key(db, id string) string { return db + "#" + id }

func node(db string, r *session, owners procowner.Lookup, now time.Time) *model.Node {
	st := model.StatusRunning
	if r.archived != nil {
		st = model.StatusCompleted
	}
	hb := &model.Heartbeat{
		Status:            st,
		Role:              firstOf(r.agent, "session"),
		HeartbeatOptional: model.OptionalOf(model.HeartbeatOptional{Worktree: r.directory}),
		HasParentField:    true,
	}
	if r.parent != "" {
		hb.ParentHeartbeat = key(db, r.parent)
	}
	n := &model.Node{
		ID:            r.id,
		Root:          filepath.Dir(db),
		HeartbeatPath: key(db, r.id),
		HasHeartbeat:  true,
		Heartbeat:     hb,
		Source:        string(Kind),
	}
	if r.updated > 0 {
		n.BeatMtime = time.UnixMilli(r.updated)
	}
	n.ActivityMtime = n.BeatMtime
	n.Traits.SignOfLife = model.SignActivity
	n.Traits.MergesItself = true
	var ended, owner string
	if st == model.StatusRunning {
		switch {
		case len(owners.Owners) > 0:
			// A server lives: the session waits for its next prompt, and
			// its age is no sign of death. No pid: the server's is every
			// session's, never one to kill for one.
			n.Traits.BeatNotRequired = true
			owner = "opencode pid " + pids(owners.Owners) + " serves " + filepath.Dir(db)
		case owners.Proven() && now.Sub(n.BeatMtime) > sources.HistoryAfter:
			// Long quiet with no server: a session that ended, history,
			// not a crash to recover (OpenCode archives few sessions).
			hb.Status = model.StatusWithdrawn
			owner = "none"
			n.EditRare(func(x *model.Rare) {
				x.Ending = "ended: no opencode process serves " + filepath.Dir(db) + " and it has been quiet past " + sources.HistoryAfter.String()
			})
		case owners.Proven():
			ended = "no opencode process serves " + filepath.Dir(db)
			owner = "none"
		default:
			n.Traits.BeatNotRequired = true
			owner = unverified(owners)
		}
	}
	sf := fields(r, owner)
	n.EditRare(func(x *model.Rare) { x.SourceFields, x.Ended = sf, ended })
	return n
}

func pids(ps []procowner.Process) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = strconv.Itoa(p.PID)
	}
	return strings.Join(out, ", ")
}

// unverified says why the data directory's server could not be told.
func unverified(l procowner.Lookup) string {
	if l.Unsupported != nil {
		return "unverified: " + l.Unsupported.Error()
	}
	out := make([]string, len(l.Hidden))
	for i, p := range l.Hidden {
		out[i] = strconv.Itoa(p)
	}
	return "unverified: opencode pid " + strings.Join(out, ", ") + " may not be looked at"
}

func fields(r *session, owner string) []model.Field {
	f := []model.Field{{Name: "session", Value: r.id}}
	f = model.AppendField(f, "title", r.title)
	f = model.AppendField(f, "directory", r.directory)
	f = model.AppendField(f, "agent", r.agent)
	f = model.AppendField(f, "version", r.version)
	if r.archived != nil {
		f = append(f, model.Field{Name: "time_archived", Value: time.UnixMilli(*r.archived).UTC().Format(time.RFC3339)})
	}
	f = model.AppendField(f, "owner", owner)
	return slices.Clip(f)
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

var _ sources.Source = (*Source)(nil)
