package teaparty

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

// A bus that cannot be read yields no nodes and a problem naming the file
// and the cause; the other buses of the store are still read.
func TestUnreadableBusIsAProblemNamingTheFile(t *testing.T) {
	tests := []struct {
		name  string
		make  func(t *testing.T, path string)
		cause string
	}{
		{name: "corrupt file", cause: "not a database", make: func(t *testing.T, path string) {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, bytes.Repeat([]byte("not sqlite "), 512), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "missing table", cause: `no table "conversations"`, make: func(t *testing.T, path string) {
			newBus(t, path, busDDL[:3])
		}},
		{name: "unknown schema", cause: `lacks column state`, make: func(t *testing.T, path string) {
			newBus(t, path, []string{`PRAGMA journal_mode=WAL`, `CREATE TABLE conversations (id TEXT PRIMARY KEY, type TEXT, created_at REAL)`})
		}},
		// TeaParty creates messages, all five columns, on every open of a
		// bus: one without them is no bus of its, whether or not a row
		// would have its messages read (a job's workers need none).
		{name: "messages lacking columns", cause: `table "messages" lacks column sender, content, timestamp`, make: func(t *testing.T, path string) {
			db := newBus(t, path, append([]string{busDDL[0], `CREATE TABLE messages (id TEXT PRIMARY KEY, conversation TEXT NOT NULL)`}, busDDL[3:]...))
			insertConv(t, db, conv{id: jobID, typ: typeJob, created: 1746638100}, conv{id: "dispatch:ab12", typ: typeDispatch, parent: jobID, created: 1746638100})
		}},
		// TeaParty's open of a bus whose conversations is a view fails
		// (its ALTERs are refused, then its CREATE INDEX raises): it never
		// writes one, so a view is no bus of its, rows or none.
		{name: "conversations a view", cause: `"conversations" is a view`, make: func(t *testing.T, path string) {
			db := newBus(t, path, conversationsView)
			if _, err := db.Exec(`INSERT INTO rows (id, type, state, created_at) VALUES (?, 'job', 'active', 1746638100)`, jobID); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "conversations an empty view", cause: `"conversations" is a view`, make: func(t *testing.T, path string) {
			newBus(t, path, conversationsView)
		}},
		{name: "messages a view", cause: `"messages" is a view`, make: func(t *testing.T, path string) {
			db := newBus(t, path, append([]string{busDDL[0],
				`CREATE TABLE log (id TEXT PRIMARY KEY, conversation TEXT NOT NULL, sender TEXT NOT NULL, content TEXT NOT NULL, timestamp REAL NOT NULL)`,
				`CREATE VIEW messages AS SELECT * FROM log`}, busDDL[3:]...))
			insertConv(t, db, conv{id: jobID, typ: typeJob, created: 1746638100})
		}},
		// SPEC §9: whatever is not a regular file at a bus's name is a
		// problem at once, never a read that blocks or a bus skipped.
		{name: "a directory", cause: "not a regular file (directory)", make: func(t *testing.T, path string) {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a FIFO", cause: "not a regular file (named pipe)", make: func(t *testing.T, path string) {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}},
		{name: "a symlink to /dev/zero", cause: "not a regular file (character device)", make: func(t *testing.T, path string) {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "locked file", cause: "locked", make: func(t *testing.T, path string) {
			// A writer in rollback-journal mode holding its exclusive lock:
			// the reader waits its busy timeout, then gives up.
			db := newBus(t, path, append([]string{`PRAGMA journal_mode=DELETE`}, busDDL[1:]...))
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
			tr := newTree(t)
			tc.make(t, tr.jobBus)
			good := filepath.Join(tr.jobs, "job-20260507-120000--other", busFile)
			insertConv(t, newBus(t, good, busDDL), conv{id: "job:webapp:20260507-120000", typ: typeJob, created: 1746638100})
			facts := (&Source{BusyTimeout: 100 * time.Millisecond}).Read(tr.home, now)
			if len(facts.Problems) != 1 {
				t.Fatalf("problems %v, want one", facts.Problems)
			}
			p := facts.Problems[0]
			if p.Path != tr.jobBus || !strings.Contains(p.Error, tr.jobBus) || !strings.Contains(p.Error, tc.cause) || strings.Contains(p.Error, "\n") {
				t.Errorf("problem %+v: want one line naming %s and %q", p, tr.jobBus, tc.cause)
			}
			if len(facts.Nodes) != 1 || !strings.Contains(facts.Nodes[0].HeartbeatPath, "job-20260507-120000--other") {
				t.Errorf("nodes %d: want the other job's alone", len(facts.Nodes))
			}
		})
	}
}

// conversationsView is a bus whose conversations, every column there, is
// a view of another table (rows).
var conversationsView = []string{busDDL[0], busDDL[1], busDDL[2],
	`CREATE TABLE rows (id TEXT PRIMARY KEY, type TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'active', created_at REAL NOT NULL,
		awaiting_input INTEGER NOT NULL DEFAULT 0, agent_name TEXT NOT NULL DEFAULT '', parent_conversation_id TEXT NOT NULL DEFAULT '',
		request_id TEXT NOT NULL DEFAULT '', project_slug TEXT NOT NULL DEFAULT '', worktree_path TEXT NOT NULL DEFAULT '',
		pid INTEGER NOT NULL DEFAULT 0, pid_started REAL NOT NULL DEFAULT 0.0)`,
	`CREATE VIEW conversations AS SELECT * FROM rows`,
}

// TeaParty writes its bus in WAL mode while dispatchtop reads it. A reader
// that reads again and again while a writer inserts and updates rows gets
// no error, misses no committed row, and leaves the database and its -wal
// as the writer left them (SQLite's -shm is its own).
func TestReadWhileTeaPartyWrites(t *testing.T) {
	tr := newTree(t)
	db := newBus(t, tr.jobBus, busDDL)
	insertConv(t, db, conv{id: jobID, typ: typeJob, created: 1746638100})
	const rows = 200
	var committed atomic.Int64
	done := make(chan error, 1)
	go func() {
		for i := range rows {
			id := fmt.Sprintf("dispatch:%012d", i)
			if _, err := db.Exec(`INSERT INTO conversations (id, type, state, created_at, parent_conversation_id) VALUES (?, 'dispatch', 'active', ?, ?)`,
				id, 1746638200.0+float64(i), jobID); err != nil {
				done <- err
				return
			}
			if _, err := db.Exec(`UPDATE conversations SET pid = ?, pid_started = ? WHERE id = ?`, 40000+i, 1746638300.0, id); err != nil {
				done <- err
				return
			}
			if i%3 == 0 {
				if _, err := db.Exec(`UPDATE conversations SET state = 'closed' WHERE id = ?`, id); err != nil {
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
		facts := src.Read(tr.home, now)
		if len(facts.Problems) > 0 {
			t.Fatalf("read while writing: %v", facts.Problems)
		}
		if int64(len(facts.Nodes)) < before+1 {
			t.Fatalf("read %d nodes after %d rows were committed", len(facts.Nodes), before)
		}
		for _, n := range facts.Nodes {
			if s := n.Heartbeat.Status; s != "starting" && s != "running" && s != "completed" {
				t.Fatalf("node %s: status %q", n.ID, s)
			}
		}
	}
	if n := len(src.Read(tr.home, now).Nodes); n != rows+1 {
		t.Fatalf("read %d nodes at the end, want %d", n, rows+1)
	}

	// With the writer's connection still open (so nothing checkpoints),
	// the reader's reads change neither the database nor its -wal.
	dbBefore, walBefore := fileBytes(t, tr.jobBus), fileBytes(t, tr.jobBus+"-wal")
	for range 20 {
		src.Read(tr.home, now)
	}
	if !bytes.Equal(dbBefore, fileBytes(t, tr.jobBus)) || !bytes.Equal(walBefore, fileBytes(t, tr.jobBus+"-wal")) {
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

// A bus at rest (TeaParty stopped: its last connection checkpointed and
// removed the -wal and -shm) reads as well as a live one.
func TestBusAtRestIsRead(t *testing.T) {
	tr := newTree(t)
	db := newBus(t, tr.jobBus, busDDL)
	insertConv(t, db, conv{id: workerID, typ: typeDispatch, created: createdAt})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tr.jobBus + "-wal"); !os.IsNotExist(err) {
		t.Fatalf("the -wal outlived the writer: %v", err)
	}
	nodes, problems := read(t, tr.home)
	if len(problems) > 0 || nodes[tr.jobBus+"#"+workerID] == nil {
		t.Fatalf("nodes %v, problems %v", keys(nodes), problems)
	}
}

// SQLite stores what it is given: a row whose pid or created_at holds text
// reads with those as 0, and costs no other row.
func TestRowOfWrongTypesReadsAsZeroAndLosesNoOtherRow(t *testing.T) {
	tr := newTree(t)
	db := newBus(t, tr.jobBus, busDDL)
	insertConv(t, db, conv{id: workerID, typ: typeDispatch, created: createdAt})
	if _, err := db.Exec(`INSERT INTO conversations (id, type, state, created_at, pid, pid_started) VALUES ('dispatch:bad', 'dispatch', 'active', 'yesterday', 'abc', x'00ff')`); err != nil {
		t.Fatal(err)
	}
	nodes, problems := read(t, tr.home)
	if len(problems) > 0 {
		t.Fatalf("problems %v", problems)
	}
	bad := nodes[tr.jobBus+"#dispatch:bad"]
	if bad == nil || nodes[tr.jobBus+"#"+workerID] == nil {
		t.Fatalf("nodes %v", keys(nodes))
	}
	if bad.Heartbeat.PID != 0 || bad.Heartbeat.Status != "starting" {
		t.Errorf("bad row: pid %d, status %q", bad.Heartbeat.PID, bad.Heartbeat.Status)
	}
}
