package sqlitestore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/sources"
)

// walWriter opens a database in WAL mode for writing, at SQLite's default
// synchronous, with a table t.
func walWriter(t *testing.T) (db string, exec func(q string)) {
	t.Helper()
	db = filepath.Join(t.TempDir(), "store.db")
	w := storefixtures.NewDB(t, db, []string{`PRAGMA journal_mode=WAL`, `CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)`})
	return db, func(q string) {
		t.Helper()
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// Every commit moves the mark, those that write over a restarted log (its
// size unchanged) too; a commit leaves nothing pending.
func TestWALVersionMovesAtEveryCommit(t *testing.T) {
	db, exec := walWriter(t)
	seen := map[string]int{}
	var sizes []int64
	for i := 0; i < 40; i++ {
		if i == 20 {
			// Backfilled with no reader: the next commit restarts the log
			// from its start, writing over the frames of the last one.
			exec(`PRAGMA wal_checkpoint(PASSIVE)`)
		}
		exec(`INSERT INTO t (v) VALUES (randomblob(10))`)
		v := WALVersion(db + "-wal")
		if v.Mark == "" || v.Pending {
			t.Fatalf("commit %d: version %+v, want a mark and nothing pending", i, v)
		}
		if j, ok := seen[v.Mark]; ok {
			t.Fatalf("commit %d has the mark of commit %d", i, j)
		}
		seen[v.Mark] = i
		fi, err := os.Stat(db + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, fi.Size())
	}
	if sizes[20] != sizes[19] {
		t.Errorf("the log was not written over in place after the checkpoint (size %d, then %d): the case is not shown", sizes[19], sizes[20])
	}
}

// Frames written past the committed mark (a transaction larger than the
// page cache spills to the -wal before it commits) are pending, under the
// mark of the last commit; the commit moves the mark and settles them.
func TestWALVersionIsPendingWhileACommitIsWritten(t *testing.T) {
	db, exec := walWriter(t)
	exec(`INSERT INTO t (v) VALUES (1)`)
	before := WALVersion(db + "-wal")
	exec(`PRAGMA cache_size=2`)
	exec(`BEGIN`)
	exec(`INSERT INTO t (v) SELECT randomblob(4000) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 50) SELECT i FROM n)`)
	during := WALVersion(db + "-wal")
	if !during.Pending || during.Mark != before.Mark {
		t.Errorf("a transaction's spilled frames: version pending %v, same mark %v; want pending under the last commit's mark", during.Pending, during.Mark == before.Mark)
	}
	exec(`COMMIT`)
	after := WALVersion(db + "-wal")
	if after.Pending || after.Mark == before.Mark {
		t.Errorf("after the commit: pending %v, mark moved %v; want settled and moved", after.Pending, after.Mark != before.Mark)
	}
}

// What has no WAL index has no version: a path not a -wal, a database at
// rest (its -shm gone with its last writer), a -shm too short.
func TestWALVersionIsZeroWithoutAWALIndex(t *testing.T) {
	atRest := newStore(t, `CREATE TABLE t (id INTEGER)`)
	short := filepath.Join(t.TempDir(), "short.db")
	for name, content := range map[string]string{"": "", "-wal": "", "-shm": strings.Repeat("x", 50)} {
		if err := os.WriteFile(short+name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	live, _ := walWriter(t)
	tests := []struct {
		name, path string
	}{
		{"the database, not its -wal", live},
		{"a database at rest", atRest + "-wal"},
		{"a -shm shorter than the header", short + "-wal"},
		{"no such file", filepath.Join(t.TempDir(), "none.db-wal")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if v := WALVersion(tc.path); v != (sources.Version{}) {
				t.Errorf("WALVersion(%s) = %+v, want the zero Version", tc.path, v)
			}
		})
	}
}
