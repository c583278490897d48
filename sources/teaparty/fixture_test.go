package teaparty

import (
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
)

// busDDL is TeaParty's own DDL for a bus (see storefixtures).
var busDDL = storefixtures.TeaPartyBusDDL

// conv is one conversations row.
type conv struct {
	id, typ, state string
	created        float64
	awaiting       int
	agent, parent  string
	request, slug  string
	worktree       string
	pid            int
	pidStarted     float64
}

// newBus creates a bus at path as TeaParty does and returns its writer,
// closed when the test ends.
func newBus(t testing.TB, path string, ddl []string) *sql.DB {
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
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	return db
}

func insertConv(t testing.TB, db *sql.DB, rows ...conv) {
	t.Helper()
	for _, c := range rows {
		if c.state == "" {
			c.state = stateActive
		}
		_, err := db.Exec(`INSERT INTO conversations (id, type, state, created_at, awaiting_input, agent_name,
			parent_conversation_id, request_id, project_slug, worktree_path, pid, pid_started)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.id, c.typ, c.state, c.created, c.awaiting, c.agent, c.parent, c.request, c.slug, c.worktree, c.pid, c.pidStarted)
		if err != nil {
			t.Fatal(err)
		}
	}
}

func insertMessage(t testing.TB, db *sql.DB, id, conversation, sender, content string, ts float64) {
	t.Helper()
	if _, err := db.Exec(`INSERT INTO messages VALUES (?, ?, ?, ?, ?)`, id, conversation, sender, content, ts); err != nil {
		t.Fatal(err)
	}
}

// tree is a project's TeaParty home with one job.
type tree struct {
	home, jobs, job, jobBus, management string
}

const jobName = "job-20260507-101500--add-dark-mode"

func newTree(t testing.TB) tree {
	t.Helper()
	home := filepath.Join(t.TempDir(), "webapp", homeDir)
	tr := tree{
		home:       home,
		jobs:       filepath.Join(home, jobsDir),
		job:        filepath.Join(home, jobsDir, jobName),
		management: filepath.Join(home, managementDir, busFile),
	}
	tr.jobBus = filepath.Join(tr.job, busFile)
	return tr
}

// workerDir makes a worker's session dir under its dispatcher's dir and
// returns it (its worktree is `<dir>/worktree`).
func workerDir(t testing.TB, parentDir, sid string) string {
	t.Helper()
	dir := filepath.Join(parentDir, tasksDir, sid)
	if err := os.MkdirAll(filepath.Join(dir, "worktree"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyFixture copies a static fixture into dir under name.
func copyFixture(t testing.TB, fixture, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sources", "teaparty", fixture))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
