// Package storefixtures builds the SQLite stores other systems write, as
// those systems create them, for the tests of every package that reads one:
// the DDL is each system's own, in its order, so a fixture is a store the
// system could have left.
package storefixtures

import (
	"bytes"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the pure-Go driver, registered as "sqlite"
)

// TeaPartyBusDDL is what TeaParty runs on every open of a bus, in its order
// (teaparty/messaging/conversations.py, SqliteMessageBus.__init__, at
// commit 3ad6bdc424401c5ad61fed33909871e329645d9a).
var TeaPartyBusDDL = []string{
	`PRAGMA journal_mode=WAL`,
	`CREATE TABLE IF NOT EXISTS messages (
                id TEXT PRIMARY KEY,
                conversation TEXT NOT NULL,
                sender TEXT NOT NULL,
                content TEXT NOT NULL,
                timestamp REAL NOT NULL
            )`,
	`CREATE INDEX IF NOT EXISTS idx_messages_conv_ts ON messages (conversation, timestamp)`,
	`CREATE TABLE IF NOT EXISTS conversations (
                id TEXT PRIMARY KEY,
                type TEXT NOT NULL,
                state TEXT NOT NULL DEFAULT 'active',
                created_at REAL NOT NULL,
                awaiting_input INTEGER NOT NULL DEFAULT 0
            )`,
	`ALTER TABLE conversations ADD COLUMN agent_name TEXT NOT NULL DEFAULT ''`,
	`ALTER TABLE conversations ADD COLUMN parent_conversation_id TEXT NOT NULL DEFAULT ''`,
	`ALTER TABLE conversations ADD COLUMN request_id TEXT NOT NULL DEFAULT ''`,
	`ALTER TABLE conversations ADD COLUMN project_slug TEXT NOT NULL DEFAULT ''`,
	`ALTER TABLE conversations ADD COLUMN worktree_path TEXT NOT NULL DEFAULT ''`,
	`ALTER TABLE conversations ADD COLUMN pid INTEGER NOT NULL DEFAULT 0`,
	`ALTER TABLE conversations ADD COLUMN pid_started REAL NOT NULL DEFAULT 0.0`,
	`CREATE INDEX IF NOT EXISTS idx_conversations_parent ON conversations (parent_conversation_id)`,
	`CREATE INDEX IF NOT EXISTS idx_conversations_project ON conversations (project_slug)`,
	`CREATE TABLE IF NOT EXISTS agent_contexts (
                context_id TEXT PRIMARY KEY,
                initiator_agent_id TEXT NOT NULL,
                recipient_agent_id TEXT NOT NULL,
                parent_context_id TEXT NOT NULL DEFAULT '',
                session_id TEXT NOT NULL DEFAULT '',
                status TEXT NOT NULL DEFAULT 'open',
                pending_count INTEGER NOT NULL DEFAULT 0,
                created_at REAL NOT NULL,
                conversation_status TEXT NOT NULL DEFAULT 'open',
                agent_worktree_path TEXT NOT NULL DEFAULT ''
            )`,
}

// MiddleMigrations are middle's, those that shape the tables read here, in the
// order middle applies them (packages/dispatcher/src/db/migrations/ at
// commit cf356bae8056e4cac8c278ef24f6e1887d0d8868); openDb sets WAL first.
var MiddleMigrations = []string{
	`PRAGMA journal_mode = WAL;`,
	// 001_initial.sql
	`CREATE TABLE workflows (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('implementation', 'recommender')),
  repo TEXT NOT NULL,           -- 'owner/name'
  epic_number INTEGER,          -- the dispatched Epic or standalone issue; null for recommender
  adapter TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN (
    'pending', 'launching', 'running', 'waiting-human', 'rate-limited',
    'completed', 'compensated', 'failed', 'cancelled'
  )),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  bunqueue_execution_id TEXT,   -- foreign reference into bunqueue's tables
  worktree_path TEXT,
  session_name TEXT,
  session_token TEXT,
  session_id TEXT,              -- the CLI's own session id, from the SessionStart hook
  transcript_path TEXT,         -- on-disk JSONL transcript; retained after the tmux session ends so --resume stays available
  controlled_by TEXT NOT NULL DEFAULT 'middle' CHECK (controlled_by IN ('middle', 'human')),
  current_sub_issue INTEGER,    -- which sub-issue/phase the agent is on; null for standalone
  pr_number INTEGER,            -- the one PR for this Epic
  pr_branch TEXT,
  last_heartbeat INTEGER,
  meta_json TEXT                -- adapter-specific scratch
);

CREATE INDEX idx_workflows_state ON workflows(state);
CREATE INDEX idx_workflows_repo ON workflows(repo);
CREATE INDEX idx_workflows_heartbeat ON workflows(last_heartbeat);

CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  workflow_id TEXT NOT NULL REFERENCES workflows(id),
  ts INTEGER NOT NULL,
  type TEXT NOT NULL,           -- normalized event name
  payload_json TEXT,            -- truncated to 16KB
  FOREIGN KEY (workflow_id) REFERENCES workflows(id) ON DELETE CASCADE
);

CREATE INDEX idx_events_workflow_ts ON events(workflow_id, ts);
CREATE INDEX idx_events_ts ON events(ts);    -- for retention scans

CREATE TABLE rate_limit_state (
  adapter TEXT PRIMARY KEY,
  status TEXT NOT NULL CHECK (status IN ('AVAILABLE', 'RATE_LIMITED', 'UNKNOWN')),
  reset_at INTEGER,             -- unix ms, null when AVAILABLE/UNKNOWN
  observed_at INTEGER NOT NULL,
  source TEXT,                  -- 'exit', 'stop-hook', 'manual'
  detail TEXT
);

CREATE TABLE repo_config (
  repo TEXT PRIMARY KEY,
  config_json TEXT NOT NULL,    -- snapshot of .middle/config.toml at last sync
  state_issue_number INTEGER,
  last_recommender_run INTEGER,
  paused_until INTEGER,         -- if non-null, no auto-dispatch
  last_synced_at INTEGER NOT NULL
);

CREATE TABLE waitfor_signals (
  signal_name TEXT PRIMARY KEY,
  workflow_id TEXT NOT NULL REFERENCES workflows(id),
  created_at INTEGER NOT NULL,
  payload_json TEXT
);

CREATE TABLE schema_version (
  version INTEGER PRIMARY KEY
);
INSERT INTO schema_version VALUES (1);`,
	// 002_waitfor_fired.sql
	`ALTER TABLE waitfor_signals ADD COLUMN fired_at INTEGER;

INSERT OR IGNORE INTO schema_version VALUES (2);`,
	// 003_documentation_workflow_kind.sql
	`CREATE TABLE workflows_new (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('implementation', 'recommender', 'documentation')),
  repo TEXT NOT NULL,           -- 'owner/name'
  epic_number INTEGER,          -- the dispatched Epic or standalone issue; null for recommender/documentation
  adapter TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN (
    'pending', 'launching', 'running', 'waiting-human', 'rate-limited',
    'completed', 'compensated', 'failed', 'cancelled'
  )),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  bunqueue_execution_id TEXT,   -- foreign reference into bunqueue's tables
  worktree_path TEXT,
  session_name TEXT,
  session_token TEXT,
  session_id TEXT,              -- the CLI's own session id, from the SessionStart hook
  transcript_path TEXT,         -- on-disk JSONL transcript; retained after the tmux session ends so --resume stays available
  controlled_by TEXT NOT NULL DEFAULT 'middle' CHECK (controlled_by IN ('middle', 'human')),
  current_sub_issue INTEGER,    -- which sub-issue/phase the agent is on; null for standalone
  pr_number INTEGER,            -- the one PR for this Epic
  pr_branch TEXT,
  last_heartbeat INTEGER,
  meta_json TEXT                -- adapter-specific scratch
);

INSERT INTO workflows_new SELECT * FROM workflows;

DROP TABLE workflows;

ALTER TABLE workflows_new RENAME TO workflows;

CREATE INDEX idx_workflows_state ON workflows(state);
CREATE INDEX idx_workflows_repo ON workflows(repo);
CREATE INDEX idx_workflows_heartbeat ON workflows(last_heartbeat);`,
	// 007_retention.sql (its workflows part)
	`ALTER TABLE workflows ADD COLUMN archived_at INTEGER; -- epoch ms when archived; null = live

CREATE INDEX idx_workflows_archived ON workflows(archived_at);`,
	// 009_workflows_epic_ref.sql
	`ALTER TABLE workflows ADD COLUMN epic_ref TEXT;
UPDATE workflows SET epic_ref = CAST(epic_number AS TEXT) WHERE epic_number IS NOT NULL;`,
	// 012_workflows_end_reason.sql
	`ALTER TABLE workflows ADD COLUMN end_reason TEXT;`,
}

// NewDB creates the database at path by running ddl, and returns its
// writer (one connection), closed when the test ends.
func NewDB(t testing.TB, path string, ddl []string) *sql.DB {
	t.Helper()
	db, err := Open(path, ddl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Open opens the database at path (its dir created if needed) for writing,
// through one connection, and runs ddl on it: the full schema for a store
// as its system creates it, nil for one that exists, a part of it for an
// older or a broken one.
func Open(path string, ddl []string) (*sql.DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("db %s: %w", path, err)
	}
	// A URI, as the readers open it: a '?' in the path is not a query.
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: path}).String())
	if err != nil {
		return nil, fmt.Errorf("db %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	for _, stmt := range ddl {
		if _, err := db.Exec(stmt); err != nil {
			db.Close()
			return nil, fmt.Errorf("db %s: %.60s: %w", path, stmt, err)
		}
	}
	return db, nil
}

// DirBytes is the content of every regular file directly in dir, by name:
// what a reader of a store there must leave as it found it.
func DirBytes(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

// RequireSameBytes fails the test, saying what, when after differs from
// before: a file added, removed or changed. What SQLite itself makes to
// read a WAL database is left out: the -shm (the index its readers and
// writers share, which a read may create or update), and an empty -wal
// created where there was none (a read of a database at rest needs one; it
// holds nothing, and SQLite reads an empty -wal as none).
func RequireSameBytes(t testing.TB, what string, before, after map[string][]byte) {
	t.Helper()
	var diff []string
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range []map[string][]byte{before, after} {
			for name := range m {
				if !seen[name] && !strings.HasSuffix(name, "-shm") {
					seen[name] = true
					if !yield(name) {
						return
					}
				}
			}
		}
	}) {
		b, inBefore := before[name]
		a, inAfter := after[name]
		switch {
		case !inBefore && strings.HasSuffix(name, "-wal") && len(a) == 0:
		case !inBefore:
			diff = append(diff, name+" added")
		case !inAfter:
			diff = append(diff, name+" removed")
		case !bytes.Equal(a, b):
			diff = append(diff, name+" changed")
		}
	}
	if len(diff) > 0 {
		t.Fatalf("%s changed the store's files: %s", what, strings.Join(diff, ", "))
	}
}

// ReadsBesideWrites drives the first two phases of a writer-beside-reader
// test: write(i) commits rows 0..beside-1 as fast as it can while readAll
// reads again and again (given how many rows were committed before the
// read began), then rows beside..beside+between-1 one at a time, each read
// after its commit and checked to leave dir's files as the writer left
// them. A writer that takes longer than 30 s is a hang.
func ReadsBesideWrites(t testing.TB, dir string, beside, between int, write func(i int) error, readAll func(committed int)) {
	t.Helper()
	var committed atomic.Int64
	done := make(chan error, 1)
	go func() {
		for i := range beside {
			if err := write(i); err != nil {
				done <- err
				return
			}
			committed.Store(int64(i + 1))
		}
		done <- nil
	}()
	reads := 0
	for hang := time.After(30 * time.Second); ; reads++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("writer: %v", err)
			}
		case <-hang:
			t.Fatal("writer hung")
		default:
			readAll(int(committed.Load()))
			continue
		}
		break
	}
	t.Logf("%d reads beside %d commits", reads, beside)

	for i := beside; i < beside+between; i++ {
		if err := write(i); err != nil {
			t.Fatal(err)
		}
		files := DirBytes(t, dir)
		readAll(i + 1)
		RequireSameBytes(t, fmt.Sprintf("a read after commit %d", i), files, DirBytes(t, dir))
	}
}
