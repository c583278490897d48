package middle

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/dispatchtop/dispatchtop/sources/middle/middletest"
)

// migrations are middle's (see middletest).
var migrations = middletest.Migrations

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
	db, err := middletest.Open(path, ddl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
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
