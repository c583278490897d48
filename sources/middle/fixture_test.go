package middle

import (
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// migrations are middle's, those that shape the tables read here, in the
// order middle applies them (packages/dispatcher/src/db/migrations/ at
// commit cf356bae8056e4cac8c278ef24f6e1887d0d8868); openDb sets WAL first.
var migrations = []string{
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

// wf is one workflows row; an empty string or 0 is written as NULL where
// the column is nullable.
type wf struct {
	id, kind, repo, epic, adapter, state string
	created, updated                     int64
	worktree, session, sessionID         string
	transcript, controlledBy             string
	lastHeartbeat, archived              int64
	endReason                            string
}

// newStore creates middle's database at path, migrated as middle migrates
// it, and returns its writer, closed when the test ends.
func newStore(t testing.TB, path string, ddl []string) *sql.DB {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	// A URI, as the reader opens it: a '?' in the path is not a query.
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: path}).String())
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	for _, stmt := range ddl {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%.60s: %v", stmt, err)
		}
	}
	return db
}

func null[T comparable](v T) any {
	var zero T
	if v == zero {
		return nil
	}
	return v
}

func insertWorkflow(t testing.TB, db *sql.DB, rows ...wf) {
	t.Helper()
	for _, w := range rows {
		if w.kind == "" {
			w.kind = "implementation"
		}
		if w.repo == "" {
			w.repo = "acme/api"
		}
		if w.adapter == "" {
			w.adapter = "claude"
		}
		if w.controlledBy == "" {
			w.controlledBy = "middle"
		}
		var epicNumber any
		if w.epic != "" {
			epicNumber = w.epic
		}
		_, err := db.Exec(`INSERT INTO workflows (id, kind, repo, epic_number, epic_ref, adapter, state, created_at, updated_at,
			bunqueue_execution_id, worktree_path, session_name, session_id, transcript_path, controlled_by, last_heartbeat,
			archived_at, end_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			w.id, w.kind, w.repo, epicNumber, null(w.epic), w.adapter, w.state, w.created, w.updated,
			w.id, null(w.worktree), null(w.session), null(w.sessionID), null(w.transcript), w.controlledBy,
			null(w.lastHeartbeat), null(w.archived), null(w.endReason))
		if err != nil {
			t.Fatal(err)
		}
	}
}

// fixture copies a static fixture into dir under name.
func fixture(t testing.TB, name, dir, as string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sources", "middle", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, as)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
