package middle

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The rounds of one Epic are one piece of work: the newest is the node, the
// older ones (each handed off to the next) hang under it; a run of no Epic
// stands alone.
func TestOlderRoundsOfAnEpicHangUnderTheNewest(t *testing.T) {
	h := newHome(t)
	insertWorkflow(t, h.writer,
		wf{id: "wf-f6", epic: "45", state: "completed", created: 1750500000000, updated: 1750550000000},
		wf{id: "wf-f7", epic: "45", state: "running", created: 1750550001000, updated: 1750699900000},
		wf{id: "wf-x1", epic: "45", repo: "acme/web", state: "completed", created: 1750500000000, updated: 1750550000000},
		wf{id: "wf-h9", kind: "recommender", state: "failed", created: 1750670000000, updated: 1750671800000},
	)
	nodes := readNodes(t, h.dir)
	tests := []struct{ node, parent string }{
		{node: "45|wf-f6", parent: h.db + "#wf-f7"},
		{node: "45|wf-f7", parent: ""},
		{node: "45|wf-x1", parent: ""}, // another repo's Epic 45
		{node: "|wf-h9", parent: ""},
	}
	for _, tc := range tests {
		n := nodes[tc.node]
		if n == nil {
			t.Fatalf("no node %s", tc.node)
		}
		if n.Heartbeat.ParentHeartbeat != tc.parent {
			t.Errorf("%s: parent %q, want %q", tc.node, n.Heartbeat.ParentHeartbeat, tc.parent)
		}
	}
}

// A database from before migrations 007, 009 and 012 still reads: the
// columns they add read as NULL, and the Epic comes from epic_number.
func TestDatabaseBeforeTheLaterMigrationsReads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".middle")
	db := newStore(t, filepath.Join(dir, dbFile), migrations[:4])
	if _, err := db.Exec(`INSERT INTO workflows (id, kind, repo, epic_number, adapter, state, created_at, updated_at, controlled_by)
		VALUES ('wf-old', 'implementation', 'acme/api', 7, 'claude', 'completed', 1750500000000, 1750550000000, 'middle')`); err != nil {
		t.Fatal(err)
	}
	nodes := readNodes(t, dir)
	if n := nodes["7|wf-old"]; n == nil || n.Heartbeat.Status != "completed" {
		t.Fatalf("nodes %v", nodes)
	}
}

func TestDetect(t *testing.T) {
	h := newHome(t)
	other := filepath.Join(t.TempDir(), "notes.sqlite3")
	newStore(t, other, migrations[:1])
	fake := filepath.Join(t.TempDir(), dbFile)
	if err := os.WriteFile(fake, []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A home whose database cannot be read is middle's by its layout: its
	// read says why, not the file protocol's "no tree found".
	home := func(plant func(db string) error) string {
		dir := filepath.Join(t.TempDir(), ".middle")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := plant(filepath.Join(dir, dbFile)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	writeFile := func(b string) func(string) error {
		return func(p string) error { return os.WriteFile(p, []byte(b), 0o644) }
	}
	otherDir := filepath.Dir(fake)
	tests := []struct {
		name, path string
		want       bool
	}{
		{name: "a middle home", path: h.dir, want: true},
		{name: "the database itself", path: h.db, want: true},
		{name: "another SQLite file", path: other, want: false},
		{name: "a db.sqlite3 given itself that is not SQLite", path: fake, want: true},
		{name: "a dir not named .middle holding a db.sqlite3 that is not SQLite", path: otherDir, want: false},
		{name: "a home whose db.sqlite3 is corrupt", path: home(writeFile("not a database")), want: true},
		{name: "a home whose db.sqlite3 is empty", path: home(writeFile("")), want: true},
		{name: "a home whose db.sqlite3 is a directory", path: home(func(p string) error { return os.Mkdir(p, 0o755) }), want: true},
		{name: "a home without db.sqlite3", path: home(func(string) error { return nil }), want: false},
		{name: "an empty dir", path: t.TempDir(), want: false},
		{name: "a missing path", path: filepath.Join(t.TempDir(), "nope"), want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := New().Detect(tc.path); got != tc.want {
				t.Errorf("Detect(%s) = %v, want %v", tc.path, got, tc.want)
			}
		})
	}
}

func TestWatchPathsAreTheDatabaseAndItsWAL(t *testing.T) {
	h := newHome(t)
	got := New().WatchPaths(h.dir)
	if len(got) != 2 || got[0] != h.db || got[1] != h.db+"-wal" {
		t.Errorf("watch %v", got)
	}
}

// middle's watchdog: idle 5 minutes is stale, 15 minutes is killed.
func TestThresholdsAreMiddlesWatchdogs(t *testing.T) {
	th := New().Thresholds()
	if th.Stale != 5*time.Minute || th.KillAfter != 15*time.Minute {
		t.Errorf("thresholds %+v", th)
	}
}

// A store that cannot be read yields no nodes and a problem naming the file
// and the cause.
func TestUnreadableStoreIsAProblemNamingTheFile(t *testing.T) {
	tests := []struct {
		name  string
		make  func(t *testing.T, path string)
		cause string
	}{
		{name: "corrupt file", cause: "not a database", make: func(t *testing.T, path string) {
			// The header is SQLite's, the rest is not.
			b := append([]byte("SQLite format 3\x00"), bytes.Repeat([]byte{0xff}, 4096)...)
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "missing table", cause: `no table "workflows"`, make: func(t *testing.T, path string) {
			newStore(t, path, []string{`PRAGMA journal_mode = WAL;`, `CREATE TABLE schema_version (version INTEGER PRIMARY KEY);`})
		}},
		{name: "unknown schema", cause: "lacks column last_heartbeat", make: func(t *testing.T, path string) {
			newStore(t, path, []string{`CREATE TABLE workflows (id TEXT PRIMARY KEY, kind TEXT, repo TEXT, epic_number INTEGER, adapter TEXT, state TEXT,
				created_at INTEGER, updated_at INTEGER, worktree_path TEXT, session_name TEXT, session_id TEXT, transcript_path TEXT, controlled_by TEXT)`})
		}},
		{name: "empty file", cause: "empty file, not a database yet", make: func(t *testing.T, path string) {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a directory", cause: "not a regular file (directory)", make: func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a FIFO", cause: "not a regular file (named pipe)", make: func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}},
		{name: "locked file", cause: "locked", make: func(t *testing.T, path string) {
			db := newStore(t, path, append([]string{`PRAGMA journal_mode = DELETE;`}, migrations[1:]...))
			conn, err := db.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.ExecContext(context.Background(), `ROLLBACK`); conn.Close() })
			if _, err := conn.ExecContext(context.Background(), `BEGIN EXCLUSIVE`); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, dbFile)
			tc.make(t, path)
			facts := (&Source{BusyTimeout: 100 * time.Millisecond}).Read(dir, now)
			if len(facts.Nodes) != 0 || len(facts.Problems) != 1 {
				t.Fatalf("nodes %d, problems %v: want none and one", len(facts.Nodes), facts.Problems)
			}
			p := facts.Problems[0]
			if p.Path != path || !strings.Contains(p.Error, path) || !strings.Contains(p.Error, tc.cause) || strings.Contains(p.Error, "\n") {
				t.Errorf("problem %+v: want one line naming %s and %q", p, path, tc.cause)
			}
		})
	}
}

// middle writes its database in WAL mode while dispatchtop reads it. A
// reader that reads again and again while a writer inserts and updates
// rows gets no error, misses no committed row, and leaves the database and
// its -wal as the writer left them (SQLite's -shm is its own).
func TestReadWhileMiddleWrites(t *testing.T) {
	h := newHome(t)
	const rows = 200
	var committed atomic.Int64
	done := make(chan error, 1)
	go func() {
		for i := range rows {
			id := fmt.Sprintf("wf-%04d", i)
			ms := nowMs - int64(rows-i)*1000
			if _, err := h.writer.Exec(`INSERT INTO workflows (id, kind, repo, epic_ref, adapter, state, created_at, updated_at, controlled_by)
				VALUES (?, 'implementation', 'acme/api', ?, 'claude', 'pending', ?, ?, 'middle')`, id, fmt.Sprint(i), ms, ms); err != nil {
				done <- err
				return
			}
			for _, state := range []string{"launching", "running"} {
				if _, err := h.writer.Exec(`UPDATE workflows SET state = ?, updated_at = ?, last_heartbeat = ? WHERE id = ?`, state, ms+1, ms+1, id); err != nil {
					done <- err
					return
				}
			}
			committed.Store(int64(i + 1))
		}
		done <- nil
	}()
	src := New()
	deadline := time.After(30 * time.Second)
	for reading := true; reading; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("writer: %v", err)
			}
			reading = false
		case <-deadline:
			t.Fatal("writer hung")
		default:
		}
		before := committed.Load()
		facts := src.Read(h.dir, now)
		if len(facts.Problems) > 0 {
			t.Fatalf("read while writing: %v", facts.Problems)
		}
		if int64(len(facts.Nodes)) < before {
			t.Fatalf("read %d nodes after %d rows were committed", len(facts.Nodes), before)
		}
	}
	if n := len(src.Read(h.dir, now).Nodes); n != rows {
		t.Fatalf("read %d nodes at the end, want %d", n, rows)
	}
	dbBefore, walBefore := fileBytes(t, h.db), fileBytes(t, h.db+"-wal")
	for range 20 {
		src.Read(h.dir, now)
	}
	if !bytes.Equal(dbBefore, fileBytes(t, h.db)) || !bytes.Equal(walBefore, fileBytes(t, h.db+"-wal")) {
		t.Fatal("the reader changed the database or its -wal")
	}
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// SQLite stores what it is given: a row whose times hold text reads with
// those as 0 (or NULL), and costs no other row.
func TestRowOfWrongTypesLosesNoOtherRow(t *testing.T) {
	h := newHome(t)
	insertWorkflow(t, h.writer, wf{id: "wf-a1", epic: "42", state: "running", created: nowMs - 1000, updated: nowMs - 1000})
	if _, err := h.writer.Exec(`INSERT INTO workflows (id, kind, repo, adapter, state, created_at, updated_at, controlled_by, last_heartbeat)
		VALUES ('wf-bad', 'recommender', 'acme/api', 'claude', 'running', 'soon', 'later', 'middle', 'never')`); err != nil {
		t.Fatal(err)
	}
	nodes := readNodes(t, h.dir)
	if nodes["42|wf-a1"] == nil || nodes["|wf-bad"] == nil {
		t.Fatalf("nodes %v", nodes)
	}
}
