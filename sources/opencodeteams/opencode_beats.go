package opencodeteams

import (
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/internal/sqlitestore"
)

// An agent's sessionId names its session in the OpenCode server it is
// attached to, and OpenCode bumps that session's time_updated
// (Date.now(), ms) on every update of it (docs/sources.md, OpenCode): a
// beat the agent's own record, rewritten only at activation and when it
// calls the heartbeat tool, does not give. The database is OpenCode's at
// its default place, or the one Lookup names; read-only, one query a
// read, and only when some agent names a session.

// opencodeDBFile is OpenCode's database in its data directory.
const opencodeDBFile = "opencode.db"

// opencodeDB is the OpenCode database the agents' sessions are looked up
// in: Lookup's, else $XDG_DATA_HOME/opencode/opencode.db, else
// ~/.local/share/opencode/opencode.db ("" when neither can be told).
func (l *Lookup) opencodeDB() string {
	if l != nil && l.OpencodeDB != "" {
		return l.OpencodeDB
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "opencode", opencodeDBFile)
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "share", "opencode", opencodeDBFile)
}

// beatState is what the reads of one store keep of OpenCode's database:
// the sessions' times as of its commit mark, so that a read whose
// database did not move asks it nothing, and the nodes given their beats.
type beatState struct {
	// hold: read through a connection held between reads (a store
	// followed), not one opened for the read (a read of its own).
	hold bool
	held sqlitestore.Held
	db   string
	// mark is the database's as the times were read; valid is false when
	// there are none to trust (none read, a commit pending, a failure).
	mark  dbMark
	valid bool
	times map[string]time.Time // by session; the zero time: asked, not held
	// copies are the nodes given their beats, by the node they copied.
	copies map[*model.Node]beaten
	// queries counts the queries asked of the database.
	queries int
}

// dbMark is what says OpenCode's database moved: its commit mark in the
// WAL index (sqlitestore's Version), and the database's and its -wal's
// files (a database at rest, or not in WAL mode, has no mark).
type dbMark struct {
	ver      sources.Version
	db, wal  os.FileInfo
	exists   bool
	walThere bool
}

// same reports whether two marks say the database is as it was.
func (m dbMark) same(o dbMark) bool {
	return m.ver == o.ver && m.exists == o.exists && m.walThere == o.walThere &&
		sameFile(m.db, o.db) && sameFile(m.wal, o.wal)
}

func sameFile(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == b
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// markOf reads the database's mark, before the read it vouches for: a
// commit racing the read moves it for the next.
func (st *beatState) markOf(db string) dbMark {
	var m dbMark
	if !st.hold {
		return m // a read of its own asks every session, with no mark to trust
	}
	if fi, err := os.Stat(db); err == nil {
		m.db, m.exists = fi, true
	}
	if fi, err := os.Stat(db + "-wal"); err == nil {
		m.wal, m.walThere = fi, true
	}
	if m.walThere {
		m.ver = st.held.Version(db + "-wal")
	}
	return m
}

// sessionBeats gives each agent whose session OpenCode's database holds
// that session's time_updated as its beat, when newer than its record's.
// No database there is no problem (OpenCode may keep it elsewhere, or run
// on another host); one that cannot be read is, naming it. The database is
// asked only for sessions it was not asked for since its mark last moved.
//
// A node is given its beat on a copy, which replaces it in nodes: the node
// itself may be the last read's, kept, and a read that gave it the beat
// in place gave it another "session updated" field at every read. The
// copies the last read made are kept by the node they copied and the time
// they were given; a node given the same time again is given that copy.
func (s Source) sessionBeats(nodes []*model.Node, facts *sources.Facts, st *beatState) {
	copies := st.copies
	st.copies = nil
	db, ok := s.beatsDB()
	if !ok {
		st.valid = false
		return
	}
	bySession := map[string][]int{}
	for i, n := range nodes {
		if id := sessionOf(n); id != "" {
			bySession[id] = append(bySession[id], i)
		}
	}
	if len(bySession) == 0 {
		st.ask(db, nil) // its mark, for the next read to see it did not move
		return
	}
	ids := make([]string, 0, len(bySession))
	for id := range bySession {
		ids = append(ids, id)
	}
	if err := st.ask(db, ids); err != nil {
		facts.Problems = append(facts.Problems, model.Problem{Path: db,
			Error: err.Error() + ": the agents' OpenCode sessions give no beat"})
		return
	}
	st.copies = make(map[*model.Node]beaten, len(bySession))
	for id, is := range bySession {
		t := st.times[id]
		if t.IsZero() {
			continue
		}
		for _, i := range is {
			nodes[i] = st.give(nodes[i], t, copies)
		}
	}
}

// beatsDB is the database the agents' beats are read from, and whether
// it is to be read: not when records alone are read, nor when there is
// none there. It is looked for before the agents' sessions are gathered:
// with none there, a read does not go through a thousand agents' fields
// for nothing.
func (s Source) beatsDB() (string, bool) {
	if s.Lookup != nil && s.Lookup.RecordsOnly {
		return "", false
	}
	db := s.Lookup.opencodeDB()
	if db == "" {
		return "", false
	}
	if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	return db, true
}

// give is base given its session's time t: the copy last made of it for
// that time (in last), or a new one; kept in st.copies.
func (st *beatState) give(base *model.Node, t time.Time, last map[*model.Node]beaten) *model.Node {
	if st.copies == nil {
		st.copies = map[*model.Node]beaten{}
	}
	if b, ok := last[base]; ok && b.at.Equal(t) {
		st.copies[base] = b
		return b.node
	}
	c := *base
	c.EditRare(func(r *model.Rare) {
		r.SourceFields = append(r.SourceFields, model.Field{Name: "session updated", Value: formatTime(t)})
	})
	if t.After(c.BeatMtime) {
		c.BeatMtime, c.ActivityMtime = t, t
		c.Traits.SignOfLife = model.SignActivity
	}
	st.copies[base] = beaten{at: t, node: &c}
	return &c
}

// unmoved reports whether db is the database the last read asked and its
// mark has not moved since: its times hold for every session asked.
func (st *beatState) unmoved(db string) bool {
	return st.valid && st.db == db && st.markOf(db).same(st.mark)
}

// ask reads time_updated of the sessions ids not asked since the
// database's mark last moved (every one when it moved), in one read
// transaction that never blocks OpenCode's writer.
func (st *beatState) ask(db string, ids []string) error {
	mark := st.markOf(db)
	if !st.valid || st.db != db || !mark.same(st.mark) {
		st.times = map[string]time.Time{}
	}
	st.db, st.mark, st.valid = db, mark, false
	var missing []string
	for _, id := range ids {
		if _, ok := st.times[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		st.queries++
		updated, err := st.read(db, missing)
		if err != nil {
			return err
		}
		for _, id := range missing {
			st.times[id] = updated[id]
		}
	}
	// A commit written but not yet marked is read again at the next read.
	st.valid = !mark.ver.Pending
	return nil
}

// read reads the sessions' times, through the held connection when the
// store is followed.
func (st *beatState) read(db string, ids []string) (map[string]time.Time, error) {
	if !st.hold {
		snap, err := sqlitestore.Open(db, 0)
		if err != nil {
			return nil, err
		}
		defer snap.Close()
		return readSessionsUpdated(snap, ids)
	}
	var out map[string]time.Time
	err := st.held.Read(db, 0, func(snap *sqlitestore.Snapshot) error {
		var err error
		out, err = readSessionsUpdated(snap, ids)
		return err
	})
	return out, err
}

// beaten is a node given its session's beat: the copy, and the time.
type beaten struct {
	at   time.Time
	node *model.Node
}

// sessionOf is the OpenCode session an agent node names ("" none).
func sessionOf(n *model.Node) string {
	if n.Source != string(sources.OpencodeTeams) {
		return ""
	}
	for _, f := range n.SourceFields() {
		if f.Name == "session" {
			return f.Value
		}
	}
	return ""
}

// readSessionsUpdated reads time_updated of the sessions named.
func readSessionsUpdated(snap *sqlitestore.Snapshot, ids []string) (map[string]time.Time, error) {
	args := make([]any, 0, len(ids))
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := snap.Query(`SELECT id, time_updated FROM session WHERE id IN (?`+strings.Repeat(",?", len(args)-1)+`)`, args...)
	if err != nil {
		return nil, sqlitestore.Describe(snap.Path, err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var id string
		var ms sql.NullInt64
		if err := rows.Scan(&id, &ms); err != nil {
			return nil, sqlitestore.Describe(snap.Path, err)
		}
		if ms.Valid && ms.Int64 > 0 {
			out[id] = time.UnixMilli(ms.Int64)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, sqlitestore.Describe(snap.Path, err)
	}
	return out, nil
}
