package sqlitestore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
)

// count reads t's rows through h.
func count(t *testing.T, h *Held, db string) int {
	t.Helper()
	var n int
	err := h.Read(db, 0, func(s *Snapshot) error {
		rows, err := s.Query(`SELECT count(*) FROM t`)
		if err != nil {
			return err
		}
		defer rows.Close()
		rows.Next()
		return rows.Scan(&n)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A store read again and again through its held connection is opened
// once, its statements prepared once, and every read sees every commit
// made before it: a read is still one short transaction of its own.
func TestHeldReadOpensOnceAndSeesEveryCommit(t *testing.T) {
	db, exec := walWriter(t)
	h := &Held{Idle: time.Minute}
	defer h.Close()
	for i := range 5 {
		if got := count(t, h, db); got != i {
			t.Fatalf("read %d: %d rows, want %d", i, got, i)
		}
		exec(`INSERT INTO t (v) VALUES (x'00')`)
	}
	// The query, and the transaction's BEGIN and ROLLBACK.
	if opens, prepares := h.opens.Load(), h.prepares.Load(); opens != 1 || prepares != 3 {
		t.Errorf("%d opens and %d prepares for 5 reads of one query, want 1 and 3", opens, prepares)
	}
	if !h.Holds(db) {
		t.Errorf("the store read is not held")
	}
	h.Close()
	if h.Holds(db) {
		t.Errorf("the store is held after Close")
	}
}

// The connection is let go once the store is idle: the system's own last
// close then finds itself alone and removes its -wal, as it would with no
// reader there (a held connection delays that, never prevents it).
func TestHeldLetsGoOfAnIdleStore(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "store.db")
	w, err := storefixtures.Open(db, []string{`PRAGMA journal_mode=WAL`, `CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)`})
	if err != nil {
		t.Fatal(err)
	}
	h := &Held{Idle: 50 * time.Millisecond}
	defer h.Close()
	count(t, h, db)
	deadline := time.Now().Add(5 * time.Second)
	for h.held() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle connection is still held")
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.Close()
	if _, err := os.Stat(db + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the writer's last close left its -wal (%v): the reader still held the store", err)
	}
}

// A store replaced under its held connection (renamed over, as an atomic
// write replaces a file) is read anew, never through the old file.
func TestHeldReadsAReplacedStoreAnew(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "store.db")
	writeStore := func(path string, rows int) {
		w := storefixtures.NewDB(t, path, []string{`PRAGMA journal_mode=WAL`, `CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)`})
		for range rows {
			if _, err := w.Exec(`INSERT INTO t (v) VALUES (x'00')`); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
	}
	writeStore(db, 1)
	h := &Held{Idle: time.Minute}
	defer h.Close()
	if got := count(t, h, db); got != 1 {
		t.Fatalf("%d rows, want 1", got)
	}
	other := filepath.Join(dir, "other.db")
	writeStore(other, 3)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(db + suffix)
		if _, err := os.Stat(other + suffix); err == nil {
			if err := os.Rename(other+suffix, db+suffix); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := count(t, h, db); got != 3 {
		t.Errorf("%d rows after the store was replaced, want 3", got)
	}
}

// The commit mark read through a held store is the one WALVersion reads,
// and moves at every commit.
func TestHeldVersionIsTheWALVersion(t *testing.T) {
	db, exec := walWriter(t)
	h := &Held{Idle: time.Minute}
	defer h.Close()
	count(t, h, db)
	last := h.Version(db + "-wal")
	for range 3 {
		exec(`INSERT INTO t (v) VALUES (x'00')`)
		v := h.Version(db + "-wal")
		if v != WALVersion(db+"-wal") || v == last || v.Mark == "" {
			t.Fatalf("held version %+v, WALVersion %+v, last %+v", v, WALVersion(db+"-wal"), last)
		}
		last = v
	}
}

// A held store is read again only once its commit mark moved from the
// one an earlier read took before it began (a commit; a checkpoint that
// restarts the log, then a commit): with nothing committed since, the
// read is not run. A mark of no read always reads.
func TestHeldReadIfMovedReadsOnlyAfterACommit(t *testing.T) {
	db, exec := walWriter(t)
	exec(`INSERT INTO t (v) VALUES (x'00')`)
	h := &Held{Idle: time.Minute}
	defer h.Close()
	// read reads through h unless nothing moved since the mark since; it
	// returns the read's mark and whether it ran.
	read := func(since string) (string, bool) {
		t.Helper()
		var mark string
		ran := false
		moved, err := h.ReadIfMoved(db, 0, since, func(s *Snapshot) error { mark, ran = s.Mark, true; return nil })
		if err != nil {
			t.Fatal(err)
		}
		if moved != ran {
			t.Errorf("moved %v, but the read ran: %v", moved, ran)
		}
		return mark, ran
	}
	read("") // opens the connection, and the files the mark is read through
	tests := []struct {
		name  string
		write func()
		moved bool
	}{
		{name: "nothing written", write: func() {}},
		{name: "a commit", write: func() { exec(`INSERT INTO t (v) VALUES (x'01')`) }, moved: true},
		{name: "a checkpoint, then a commit over the log's start", write: func() {
			exec(`PRAGMA wal_checkpoint(PASSIVE)`)
			exec(`INSERT INTO t (v) VALUES (x'02')`)
		}, moved: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mark, _ := read("")
			if mark == "" {
				t.Fatal("a held read took no mark")
			}
			tc.write()
			if _, ran := read(mark); ran != tc.moved {
				t.Errorf("read: %v, want %v", ran, tc.moved)
			}
		})
	}
	if _, ran := read(""); !ran {
		t.Errorf("a read with no mark did not run")
	}
}
