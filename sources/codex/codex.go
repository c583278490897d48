// Package codex reads Codex CLI's state database, `state_<N>.sqlite` in
// `$CODEX_HOME` (default `~/.codex`): its `threads` and the spawn edges
// between them (`thread_spawn_edges`), as node facts (see package sources).
// The mapping, with the Codex source each rule comes from, is in
// docs/sources.md.
//
// Codex records no pid. A thread's process is the `codex` process that
// owns its home (procowner: its environment names the home, or it holds a
// file of the home open); of those, the one holding the thread's rollout
// open runs that thread (Codex keeps a live thread's rollout open for
// appends). With no owner alive, and none hidden from view, an open thread
// is dead; when an owner may be hiding (a codex process whose environment
// cannot be read) nothing is concluded from the owner's absence: the thread
// is judged by its rollout's age, and never offered a kill.
package codex

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/internal/procowner"
	"github.com/dispatchtop/dispatchtop/sources/internal/sqlitestore"
)

// Kind is the source's KIND.
const Kind sources.Kind = "codex"

const (
	threadsTable = "threads"
	edgesTable   = "thread_spawn_edges"
	// program is the command name of Codex's native binary.
	program = "codex"
)

// dbName matches the state database's name, `state_<STATE_DB_VERSION>.sqlite`
// (codex-rs/state/src/lib.rs STATE_DB_FILENAME).
var dbName = regexp.MustCompile(`^state_([0-9]+)\.sqlite$`)

// requiredColumns are those of migration 0001_threads that the mapping
// reads: a table without them is not Codex's.
var requiredColumns = []string{"id", "rollout_path", "created_at", "updated_at", "cwd", "title", "archived"}

// columns are the threads' columns the mapping reads, each with the field
// of a thread it fills: the one table both reads (readPlain's scan and
// readFast's decode) are driven by, so a new column is one row.
var columns = []column{
	{sqlitestore.Column{Name: "id", Type: "TEXT", Default: "''"}, func(t *thread) any { return &t.id }},
	{sqlitestore.Column{Name: "rollout_path", Type: "TEXT", Default: "''"}, func(t *thread) any { return &t.rollout }},
	{sqlitestore.Column{Name: "created_at", Type: "INTEGER", Default: "0"}, func(t *thread) any { return &t.created }},
	{sqlitestore.Column{Name: "updated_at", Type: "INTEGER", Default: "0"}, func(t *thread) any { return &t.updated }},
	{sqlitestore.Column{Name: "updated_at_ms", Type: "INTEGER", Default: "0"}, func(t *thread) any { return &t.updatedMs }}, // 0025
	{sqlitestore.Column{Name: "cwd", Type: "TEXT", Default: "''"}, func(t *thread) any { return &t.cwd }},
	{sqlitestore.Column{Name: "title", Type: "TEXT", Default: "''"}, func(t *thread) any { return &t.title }},
	{sqlitestore.Column{Name: "source", Type: "TEXT", Default: "''"}, func(t *thread) any { return &t.source }},
	{sqlitestore.Column{Name: "archived", Type: "INTEGER", Default: "0"}, func(t *thread) any { return &t.archived }},
	{sqlitestore.Column{Name: "parent_thread_id", Type: "TEXT", Default: "''"}, func(t *thread) any { return &t.parent }}, // 0036
	{sqlitestore.Column{Name: "agent_nickname", Type: "TEXT", Default: "''"}, func(t *thread) any { return &t.nickname }}, // 0013
	{sqlitestore.Column{Name: "agent_role", Type: "TEXT", Default: "''"}, func(t *thread) any { return &t.role }},         // 0013
}

// column is one column of the threads and the field it fills: a *string
// for a TEXT column, an *int64 for an INTEGER one.
type column struct {
	sqlitestore.Column
	field func(*thread) any
}

// sqlColumns are columns as sqlitestore selects them.
var sqlColumns = func() []sqlitestore.Column {
	out := make([]sqlitestore.Column, len(columns))
	for i, c := range columns {
		out[i] = c.Column
	}
	return out
}()

// edgeColumns are the spawn edges' columns the mapping reads: an edge
// table without them is an unknown schema.
var edgeColumns = []string{"parent_thread_id", "child_thread_id", "status"}

// Source reads Codex CLI's state database.
type Source struct {
	// BusyTimeout is how long a read waits for a locked database
	// (0: sqlitestore.DefaultBusyTimeout).
	BusyTimeout time.Duration
	// ProcDir is where processes are looked up ("": /proc).
	ProcDir string

	// program is the command name the owner runs as ("": codex); tests
	// name a copy of sleep so that no codex of the host interferes.
	program string
}

// New returns the Codex CLI source.
func New() *Source { return &Source{} }

// Kind names the source.
func (*Source) Kind() sources.Kind { return Kind }

// Thresholds are the defaults: Codex counts no age as stale itself.
func (*Source) Thresholds() model.Thresholds { return model.DefaultThresholds() }

// DefaultStore is Codex's home: $CODEX_HOME, else ~/.codex ("" when
// neither can be told).
func DefaultStore(getenv func(string) string, home string) string {
	if h := getenv("CODEX_HOME"); h != "" {
		return h
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".codex")
}

// dbPath is the state database a root names: the root itself when it is
// a state_<N>.sqlite, else the newest-versioned one in it ("" for none).
func dbPath(root string) string {
	abs, err := filepath.Abs(root)
	if err != nil {
		abs = root
	}
	if dbName.MatchString(filepath.Base(abs)) {
		return abs
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return ""
	}
	best, bestN := "", -1
	for _, e := range entries {
		m := dbName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		if n, err := strconv.Atoi(m[1]); err == nil && n > bestN {
			best, bestN = filepath.Join(abs, e.Name()), n
		}
	}
	return best
}

// Detect reports whether path is Codex's home (a directory holding a
// state_<N>.sqlite) or such a database itself.
func (*Source) Detect(path string) bool {
	p := dbPath(path)
	if p == "" {
		return false
	}
	_, err := os.Lstat(p)
	return err == nil
}

// WatchPaths are the database and its -wal. A rollout's append moves no
// row; the scanner's tick re-reads the store for its mtime.
func (*Source) WatchPaths(path string) []string {
	p := dbPath(path)
	if p == "" {
		abs, _ := filepath.Abs(path)
		return []string{abs}
	}
	return []string{p, p + "-wal"}
}

// thread is one row as Codex writes it; times are epoch seconds
// (updated_at) and milliseconds (updated_at_ms, migration 0025).
type thread struct {
	id, rollout, cwd, title, source string
	created, updated, updatedMs     int64
	archived                        int64
	parent, nickname, role          string
	// From thread_spawn_edges, when the thread is a spawned child.
	edgeParent, edgeStatus string
}

// Read reads the threads of the store at root in one short transaction.
func (s *Source) Read(root string, now time.Time) sources.Facts {
	path := dbPath(root)
	if path == "" {
		abs, _ := filepath.Abs(root)
		return sources.Facts{Problems: []model.Problem{{Path: abs, Error: fmt.Sprintf("read %s: no state_<N>.sqlite", abs)}}}
	}
	rows, err := s.read(path)
	if err != nil {
		return sources.Facts{Problems: []model.Problem{{Path: path, Error: err.Error()}}}
	}
	home := filepath.Dir(path)
	owners := s.owners(home, path)
	facts := sources.Facts{Nodes: make([]*model.Node, 0, len(rows))}
	keys := keyMaker{db: path, home: home, parents: map[string]string{}, stats: newRolloutStats()}
	defer keys.stats.close()
	for _, t := range rows {
		facts.Nodes = append(facts.Nodes, s.node(&keys, t, owners, now))
	}
	return facts
}

// read reads the threads of the database at path, with their spawn edges,
// in one short transaction: in one query that SQLite answers in one row
// (readFast), or, when that row cannot be had or read, a row a thread
// (readPlain, the reading that defines it).
func (s *Source) read(path string) ([]*thread, error) {
	snap, err := sqlitestore.Open(path, s.BusyTimeout)
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	return readSnapshot(snap)
}

// readSnapshot reads the threads and their edges in snap.
func readSnapshot(snap *sqlitestore.Snapshot) ([]*thread, error) {
	schema, err := snap.Schema(threadsTable, edgesTable)
	if err != nil {
		return nil, err
	}
	have, err := schema.Require(threadsTable, requiredColumns)
	if err != nil {
		return nil, err
	}
	edges := schema.Columns(edgesTable) != nil
	if edges {
		if _, err := schema.Require(edgesTable, edgeColumns); err != nil {
			return nil, err
		}
	}
	ts, ok, err := readFast(snap, have, edges)
	if err != nil || ok {
		return ts, err
	}
	return readPlain(snap, have, edges)
}

// readPlain reads the threads a row a thread, each column scanned, then
// the edges a row an edge: the definition of what readFast reads.
func readPlain(snap *sqlitestore.Snapshot, have map[string]bool, edges bool) ([]*thread, error) {
	rows, err := snap.Query(sqlitestore.SelectQuery(threadsTable, have, sqlColumns, threadsOrder))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*thread
	byID := map[string]*thread{}
	dest := make([]any, len(columns))
	for rows.Next() {
		t := &thread{}
		for i, c := range columns {
			dest[i] = c.field(t)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, sqlitestore.Describe(snap.Path, err)
		}
		out = append(out, t)
		byID[t.id] = t
	}
	if err := rows.Err(); err != nil {
		return nil, sqlitestore.Describe(snap.Path, err)
	}
	if edges {
		if err := readEdges(snap, byID); err != nil {
			return nil, err
		}
	}
	sortThreads(out)
	return out, nil
}

// threadsOrder is the threads' ORDER BY: none, sortThreads orders them.
const threadsOrder = ""

// sortThreads puts the threads in the order ORDER BY created_at, id
// gives (integers, then TEXT of the BINARY collation: bytes), sorted here
// rather than by SQLite, whose sorter cost a read of a thousand threads
// some 1.4 ms of CPU before the first row (SPEC §8, the agents' stores).
// The sort is stable: threads of one id keep the table's order.
func sortThreads(ts []*thread) {
	slices.SortStableFunc(ts, func(a, b *thread) int {
		if c := cmp.Compare(a.created, b.created); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
}

// edgesQuery reads each edge's parent, child and status as text.
const edgesQuery = `SELECT IFNULL(CAST(parent_thread_id AS TEXT), ''), IFNULL(CAST(child_thread_id AS TEXT), ''),
		IFNULL(CAST(status AS TEXT), '') FROM ` + edgesTable

// readEdges takes each spawned child's edge: its parent and whether the
// parent still holds it open (DirectionalThreadSpawnEdgeStatus: open,
// closed). A child of several edges takes the last in the table's order;
// a thread whose id several rows hold, the last of those rows.
func readEdges(snap *sqlitestore.Snapshot, byID map[string]*thread) error {
	rows, err := snap.Query(edgesQuery)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var parent, child, status string
		if err := rows.Scan(&parent, &child, &status); err != nil {
			return sqlitestore.Describe(snap.Path, err)
		}
		setEdge(byID, parent, child, status)
	}
	return rows.Err()
}

// setEdge gives the child its edge.
func setEdge(byID map[string]*thread, parent, child, status string) {
	if t := byID[child]; t != nil {
		t.edgeParent, t.edgeStatus = parent, status
	}
}

// ownerSet is what one read learnt of the home's codex processes.
type ownerSet struct {
	lookup procowner.Lookup
	// started is each owner's create time, for the pid's identity.
	started map[int]float64
	// open is each owner's open files, its fd table read once a read, at
	// the first thread asked about (a thousand threads, one read).
	open map[int]map[string]bool
}

// owners looks up the codex processes that own home: $CODEX_HOME names it,
// or, without one, $HOME/.codex is it, or a file of it (the database, its
// -wal) is held open.
func (s *Source) owners(home, db string) ownerSet {
	lookup := procowner.Find(s.ProcDir, procowner.Spec{
		Names: []string{firstOf(s.program, program)},
		Owns: func(env map[string]string) bool {
			if h, ok := env["CODEX_HOME"]; ok && h != "" {
				return procowner.SameDir(h, home)
			}
			if h := env["CODEX_SQLITE_HOME"]; h != "" && procowner.SameDir(h, home) {
				return true
			}
			return env["HOME"] != "" && procowner.SameDir(filepath.Join(env["HOME"], ".codex"), home)
		},
		Files: []string{db, db + "-wal"},
	})
	set := ownerSet{lookup: lookup, started: map[int]float64{}, open: map[int]map[string]bool{}}
	for _, p := range lookup.Owners {
		if st, err := protocol.ProcessStarted(p.PID); err == nil {
			set.started[p.PID] = st
		}
	}
	return set
}

// runner is the owner holding the thread's rollout open, 0 for none.
func (s *Source) runner(o ownerSet, rollout string) int {
	if rollout == "" {
		return 0
	}
	for _, p := range o.lookup.Owners {
		if _, ok := o.started[p.PID]; !ok {
			continue
		}
		open, read := o.open[p.PID]
		if !read {
			open = procowner.OpenFiles(s.ProcDir, p.PID)
			o.open[p.PID] = open
		}
		if open[filepath.Clean(rollout)] {
			return p.PID
		}
	}
	return 0
}

func key(db, id string) string { return db + "#" + id }

// keyMaker makes one read's keys: the home made once, not once a thread,
// and a parent's key once for all its children (a thread that spawned
// five hundred is named by one string).
type keyMaker struct {
	db, home string
	parents  map[string]string
	// stats stats the read's rollouts.
	stats *rolloutStats
}

func (k *keyMaker) parent(id string) string {
	if p, ok := k.parents[id]; ok {
		return p
	}
	p := key(k.db, id)
	k.parents[id] = p
	return p
}

// parentOf is the thread's parent: the spawn edge's, else the column's.
func parentOf(t *thread) string {
	if t.edgeParent != "" {
		return t.edgeParent
	}
	return t.parent
}

// status maps a thread onto the heartbeat vocabulary (SPEC §1): archived
// or an edge its parent closed is completed; an open thread runs; an edge
// status Codex does not write is shown as written (unknown_status).
func status(t *thread) string {
	switch {
	case t.archived != 0:
		return model.StatusCompleted
	case t.edgeStatus == "" || t.edgeStatus == "open":
		return model.StatusRunning
	case t.edgeStatus == "closed":
		return model.StatusCompleted
	}
	return "edge " + t.edgeStatus
}

// threadNode is what a thread's node is made of, allocated as one block:
// the node, its heartbeat, its rare facts and its fields, four
// allocations a thread made one (a home of a thousand threads is read at
// each --once; SPEC §8, the agents' stores).
type threadNode struct {
	node   model.Node
	hb     model.Heartbeat
	rare   model.Rare
	fields [maxFields]model.Field
}

func (s *Source) node(k *keyMaker, t *thread, o ownerSet, now time.Time) *model.Node {
	blk := &threadNode{}
	db := k.db
	st := status(t)
	hb := &blk.hb
	*hb = model.Heartbeat{
		Status:            st,
		Role:              firstOf(t.role, "thread"),
		HeartbeatOptional: model.OptionalOf(model.HeartbeatOptional{Team: t.nickname}),
		HasParentField:    true,
	}
	if p := parentOf(t); p != "" {
		hb.ParentHeartbeat = k.parent(p)
	}
	n := &blk.node
	*n = model.Node{
		ID:            t.id,
		Root:          k.home,
		HeartbeatPath: key(db, t.id),
		HasHeartbeat:  true,
		Heartbeat:     hb,
		Source:        string(Kind),
	}
	rare := &blk.rare
	// Activity: the rollout's last write, else the row's updated_at.
	n.BeatMtime = updatedAt(t)
	if t.rollout != "" && st == model.StatusRunning {
		if mtime, err := k.stats.modTime(t.rollout); err == nil {
			if mtime.After(n.BeatMtime) {
				n.BeatMtime = mtime
			}
		} else if !os.IsNotExist(err) {
			rare.Problems = []model.Problem{{Path: t.rollout, Error: fmt.Sprintf("read %s: %v", t.rollout, err)}}
		}
	}
	n.ActivityMtime = n.BeatMtime
	n.Traits.SignOfLife = model.SignActivity
	// Codex merges nothing: a finished thread leaves nothing here to merge.
	n.Traits.MergesItself = true
	var owner string
	if st == model.StatusRunning {
		switch pid := s.runner(o, t.rollout); {
		case pid > 0:
			hb.PID, hb.Started = pid, o.started[pid]
			owner = "pid " + strconv.Itoa(pid) + " holds the rollout open"
		case len(o.lookup.Owners) > 0:
			// An owner lives but is not seen holding this thread: it may
			// have it loaded between writes. Unproven: judged by age,
			// never killed (there is no pid).
			n.Traits.ProcessUnseen = true
			owner = "a codex process owns the home; none holds this rollout open"
		case o.lookup.Proven() && now.Sub(n.BeatMtime) > sources.HistoryAfter:
			// Long quiet with no process: a conversation that ended (a user
			// quits Codex far more often than it crashes), history, not a
			// crash to recover; reading it dead would fail every CI run on a
			// machine with a used Codex home.
			hb.Status = model.StatusWithdrawn
			owner = "none"
			rare.Ending = "ended: no codex process owns " + k.home + " and it has been quiet past " + sources.HistoryAfter.String()
		case o.lookup.Proven():
			rare.Ended = "no codex process owns " + k.home
			owner = "none"
		default:
			n.Traits.ProcessUnseen = true
			owner = unverified(o.lookup)
		}
	}
	rare.SourceFields = fields(blk.fields[:0], t, owner)
	n.Rare = rare // never empty: its fields name the thread
	return n
}

// unverified says why the home's owner could not be told.
func unverified(l procowner.Lookup) string {
	if l.Unsupported != nil {
		return "unverified: " + l.Unsupported.Error()
	}
	pids := make([]string, len(l.Hidden))
	for i, p := range l.Hidden {
		pids[i] = strconv.Itoa(p)
	}
	return "unverified: codex pid " + strings.Join(pids, ", ") + " may not be looked at"
}

// updatedAt is the row's last update: updated_at_ms when the store has it,
// else updated_at in seconds (migration 0025 reads a value past 2020 in
// milliseconds as milliseconds already).
func updatedAt(t *thread) time.Time {
	switch {
	case t.updatedMs > 0:
		return time.UnixMilli(t.updatedMs)
	case t.updated >= 1577836800000:
		return time.UnixMilli(t.updated)
	case t.updated > 0:
		return time.Unix(t.updated, 0)
	}
	return time.Time{}
}

// maxFields is the most fields a thread has.
const maxFields = 10

// fields appends the thread's fields to f, whose room (maxFields) they fit.
func fields(f []model.Field, t *thread, owner string) []model.Field {
	f = append(f, model.Field{Name: "thread", Value: t.id})
	f = model.AppendField(f, "title", t.title)
	f = model.AppendField(f, "cwd", t.cwd)
	f = model.AppendField(f, "source", t.source)
	f = model.AppendField(f, "agent_nickname", t.nickname)
	f = model.AppendField(f, "agent_role", t.role)
	f = model.AppendField(f, "edge_status", t.edgeStatus)
	if t.archived != 0 {
		f = append(f, model.Field{Name: "archived", Value: "1"})
	}
	f = model.AppendField(f, "rollout", t.rollout)
	f = model.AppendField(f, "owner", owner)
	return slices.Clip(f)
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

var _ sources.Source = (*Source)(nil)
