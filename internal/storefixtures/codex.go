package storefixtures

// CodexStateDDL is Codex's state database as its migrations shape the tables
// read here (openai/codex codex-rs/state/migrations: 0001_threads.sql,
// 0013_threads_agent_nickname.sql, 0025_thread_timestamps_millis.sql,
// 0036_threads_parent_thread_id.sql, the thread_spawn_edges table and
// 0041_thread_spawn_edges_parent_child.sql, at the commits docs/sources.md
// names), in their order; the runtime opens it in WAL mode.
var CodexStateDDL = []string{
	`PRAGMA journal_mode=WAL`,
	`CREATE TABLE threads (
    id TEXT PRIMARY KEY,
    rollout_path TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    source TEXT NOT NULL,
    model_provider TEXT NOT NULL,
    cwd TEXT NOT NULL,
    title TEXT NOT NULL,
    sandbox_policy TEXT NOT NULL,
    approval_mode TEXT NOT NULL,
    tokens_used INTEGER NOT NULL DEFAULT 0,
    archived INTEGER NOT NULL DEFAULT 0,
    archived_at INTEGER,
    git_sha TEXT,
    git_branch TEXT,
    git_origin_url TEXT
)`,
	`CREATE INDEX idx_threads_updated_at ON threads(updated_at DESC, id DESC)`,
	`ALTER TABLE threads ADD COLUMN agent_nickname TEXT`,
	`ALTER TABLE threads ADD COLUMN agent_role TEXT`,
	`ALTER TABLE threads ADD COLUMN created_at_ms INTEGER`,
	`ALTER TABLE threads ADD COLUMN updated_at_ms INTEGER`,
	`CREATE TRIGGER threads_updated_at_ms_after_insert AFTER INSERT ON threads WHEN NEW.updated_at_ms IS NULL
BEGIN UPDATE threads SET updated_at_ms = NEW.updated_at * 1000 WHERE id = NEW.id; END`,
	`ALTER TABLE threads ADD COLUMN parent_thread_id TEXT`,
	`CREATE TABLE thread_spawn_edges (
    parent_thread_id TEXT NOT NULL,
    child_thread_id TEXT NOT NULL PRIMARY KEY,
    status TEXT NOT NULL
)`,
	`CREATE INDEX idx_thread_spawn_edges_parent_child ON thread_spawn_edges(parent_thread_id, child_thread_id)`,
}
