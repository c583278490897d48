package sqlitestore

// A store read at every commit of its writer (a TeaParty bus written many
// times a second) is held open between reads: a read through a held
// connection costs its queries, not an open, a parse of the schema and a
// prepare of every statement, which were four fifths of a commit's read
// (BenchmarkRereadOneCommit). Each read is still one short transaction of
// its own, taking no lock a writer waits on.
//
// Holding costs the system one thing: its last connection to close, while
// ours is open, does not find itself alone, so it neither checkpoints nor
// removes its -wal (which stays, holding what was committed, for its next
// open). So a connection is let go once its store has been idle for Idle,
// and no more than MaxHeld are held.
//
// A held store's commit mark (WALVersion) is read through files opened
// once, while the connection is held, and closed after it: the close of a
// descriptor drops every POSIX lock this process holds on the file, the
// held connection's own among them.

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dispatchtop/dispatchtop/sources"
)

// DefaultIdle is how long a held connection waits for its store's next
// read before it is let go: a bus of a hundred written 20 times a second
// in all is written every 5 s, and at 5 s its connection was opened and
// its statements prepared again at most commits (the dashboard's profile).
const DefaultIdle = 30 * time.Second

// MaxHeld bounds the connections a Held holds at once (each holds three
// descriptors of SQLite's and two of its own); a store past it is read by
// Open, as one read.
const MaxHeld = 128

// maxStmts bounds the statements a held connection keeps prepared.
const maxStmts = 64

// Held holds the read connections of the stores it reads. The zero Held is
// ready to use; Close lets every connection go.
type Held struct {
	// Idle is how long a store may go unread before its connection is let
	// go (0: DefaultIdle).
	Idle time.Duration

	mu    sync.Mutex
	conns map[string]*heldConn
	// opens and prepares count the connections opened and the statements
	// prepared: what holding saves.
	opens, prepares atomic.Int64
}

// heldConn is one store's held connection.
type heldConn struct {
	mu    sync.Mutex // one read at a time; the idle close waits for it
	path  string
	db    *sql.DB
	conn  *sql.Conn // the one connection, taken from db once
	ino   fileID
	stmts map[string]*sql.Stmt
	// begin and rollback are the read transaction's, prepared once and
	// kept apart from stmts, whose bound never closes them mid-read.
	begin, rollback *sql.Stmt
	// shm and wal are read by Version while the connection is held.
	shm, wal *os.File
	used     time.Time
	timer    *time.Timer
	closed   bool
}

// Read runs read in one short read transaction on the database at path,
// through its held connection (opened if none is, or if the file at path
// is not the one it holds). busy is as for Open.
func (h *Held) Read(path string, busy time.Duration, read func(*Snapshot) error) error {
	_, err := h.ReadIfMoved(path, busy, "", read)
	return err
}

// ReadIfMoved is Read, unless the store is held, the same file, and its
// commit mark is still since (the Snapshot.Mark of an earlier read), with
// no commit pending: nothing was committed since, read is not run, and
// moved is false. The mark is read through the files the connection
// holds: no query, no transaction. A since of "" always reads.
func (h *Held) ReadIfMoved(path string, busy time.Duration, since string, read func(*Snapshot) error) (moved bool, err error) {
	c, err := h.conn(path, busy)
	if err != nil {
		return true, err
	}
	if c == nil {
		snap, err := Open(path, busy)
		if err != nil {
			return true, err
		}
		defer snap.Close()
		h.opens.Add(1)
		return true, read(snap)
	}
	defer c.mu.Unlock()
	// The mark is taken before the transaction begins: the read sees at
	// least what it marks.
	mark := c.mark()
	if since != "" && mark == since {
		return false, nil
	}
	// The transaction is SQLite's own, begun and ended by statements on
	// the held connection: a database/sql Tx would hold the connection a
	// statement is prepared on, once, for every later read. BEGIN and
	// ROLLBACK are prepared once too: parsed at every read, they were a
	// tenth of a commit's (the dashboard's profile).
	if err := c.prepareTx(&h.prepares); err != nil {
		return true, Describe(c.path, err)
	}
	if _, err := c.begin.Exec(); err != nil {
		return true, Describe(c.path, err)
	}
	defer c.rollback.Exec()
	err = read(&Snapshot{Path: c.path, Mark: mark, held: c, prepares: &h.prepares})
	if c.shm == nil {
		// SQLite made them for the read if they were not there.
		c.shm, _ = os.Open(c.path + "-shm")
		c.wal, _ = os.Open(c.path + "-wal")
	}
	return true, err
}

// conn is the held connection of the store at path, locked; nil (and no
// error) when MaxHeld are held already.
func (h *Held) conn(path string, busy time.Duration) (*heldConn, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, Describe(path, err)
	}
	ino, err := idOf(abs)
	if c := h.heldAs(abs, ino, err); c != nil {
		// Held: the files were looked at when it was opened, and SQLite
		// opens none of them by path again while it holds them.
		if c.lock() {
			return c, nil
		}
		return h.conn(path, busy) // let go meanwhile: opened again
	}
	if err := checkFiles(abs); err != nil {
		return nil, err
	}
	h.mu.Lock()
	c := h.conns[abs]
	if c != nil && c.ino != ino {
		delete(h.conns, abs)
		h.mu.Unlock()
		c.close() // the store was replaced
		h.mu.Lock()
		c = h.conns[abs]
	}
	if c == nil {
		if len(h.conns) >= MaxHeld {
			h.mu.Unlock()
			return nil, nil
		}
		db, err := openDB(abs, busy)
		if err != nil {
			h.mu.Unlock()
			return nil, err
		}
		conn, err := db.Conn(context.Background())
		if err != nil {
			db.Close()
			h.mu.Unlock()
			return nil, Describe(abs, err)
		}
		h.opens.Add(1)
		c = &heldConn{path: abs, db: db, conn: conn, ino: ino, stmts: map[string]*sql.Stmt{}}
		if h.conns == nil {
			h.conns = map[string]*heldConn{}
		}
		h.conns[abs] = c
		idle := h.Idle
		if idle <= 0 {
			idle = DefaultIdle
		}
		c.timer = time.AfterFunc(idle, func() { h.letGo(c, idle) })
	}
	h.mu.Unlock()
	if !c.lock() {
		return h.conn(path, busy)
	}
	return c, nil
}

// heldAs is the connection held of the store at abs when the file there
// is still the one it holds (ino; err, the look at it failed), else nil.
func (h *Held) heldAs(abs string, ino fileID, err error) *heldConn {
	if err != nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.conns[abs]; c != nil && c.ino == ino {
		return c
	}
	return nil
}

// lock locks c for a read and notes it used; false (and c not locked)
// when it was let go since it was found.
func (c *heldConn) lock() bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	c.used = time.Now()
	return true
}

// letGo closes c if it was not read for idle, or looks again when it
// would be.
func (h *Held) letGo(c *heldConn, idle time.Duration) {
	h.mu.Lock()
	c.mu.Lock()
	if wait := idle - time.Since(c.used); wait > 0 && !c.closed {
		c.timer.Reset(wait)
		c.mu.Unlock()
		h.mu.Unlock()
		return
	}
	if h.conns[c.path] == c {
		delete(h.conns, c.path)
	}
	c.mu.Unlock()
	h.mu.Unlock()
	c.close()
}

// close closes the connection, then the files Version reads (after: the
// connection's locks are then let go by SQLite itself).
func (c *heldConn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	c.timer.Stop()
	for _, st := range c.stmts {
		st.Close()
	}
	for _, st := range []*sql.Stmt{c.begin, c.rollback} {
		if st != nil {
			st.Close()
		}
	}
	c.conn.Close()
	c.db.Close()
	for _, f := range []*os.File{c.shm, c.wal} {
		if f != nil {
			f.Close()
		}
	}
}

// prepareTx prepares the read transaction's BEGIN and ROLLBACK, once
// while the connection is held.
func (c *heldConn) prepareTx(prepares *atomic.Int64) error {
	if c.rollback != nil {
		return nil
	}
	ctx := context.Background()
	begin, err := c.conn.PrepareContext(ctx, `BEGIN`)
	if err != nil {
		return err
	}
	rollback, err := c.conn.PrepareContext(ctx, `ROLLBACK`)
	if err != nil {
		begin.Close()
		return err
	}
	c.begin, c.rollback = begin, rollback
	prepares.Add(2)
	return nil
}

// prepared is the statement of query prepared on the held connection,
// once while it is held.
func (c *heldConn) prepared(query string, prepares *atomic.Int64) (*sql.Stmt, error) {
	if st := c.stmts[query]; st != nil {
		return st, nil
	}
	if len(c.stmts) >= maxStmts {
		// Statements built per read (an IN of as many ids as moved) must
		// not grow the cache for as long as the store is written.
		for q, st := range c.stmts {
			st.Close()
			delete(c.stmts, q)
		}
	}
	st, err := c.conn.PrepareContext(context.Background(), query)
	if err != nil {
		return nil, err
	}
	c.stmts[query] = st
	prepares.Add(1)
	return st, nil
}

// held is how many connections are held.
func (h *Held) held() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// Close lets every held connection go.
func (h *Held) Close() {
	h.mu.Lock()
	conns := h.conns
	h.conns = nil
	h.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// Version is WALVersion of the -wal at wal, read through the files its
// held connection keeps open when the store is held.
func (h *Held) Version(wal string) sources.Version {
	db, ok := strings.CutSuffix(wal, "-wal")
	if !ok {
		return sources.Version{}
	}
	h.mu.Lock()
	c := h.conns[db]
	h.mu.Unlock()
	if c == nil {
		return WALVersion(wal)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.shm == nil || c.wal == nil {
		return WALVersion(wal)
	}
	return walVersion(c.shm, c.wal)
}

// mark is the store's commit mark read through the files c holds, ""
// when it has none yet or a commit is pending (c locked).
func (c *heldConn) mark() string {
	if c.shm == nil || c.wal == nil {
		return ""
	}
	if v := walVersion(c.shm, c.wal); !v.Pending {
		return v.Mark
	}
	return ""
}

// Holds reports whether the database at path is held: a source looking
// at its header must not open it (the close would drop the held
// connection's locks).
func (h *Held) Holds(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conns[abs] != nil
}
