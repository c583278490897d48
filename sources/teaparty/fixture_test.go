package teaparty

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/dispatchtop/dispatchtop/sources/teaparty/teapartytest"
)

// busDDL is what TeaParty runs on every open of a bus (see teapartytest).
var busDDL = teapartytest.DDL

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
	db, err := teapartytest.Open(path, ddl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func insertConv(t testing.TB, db *sql.DB, rows ...conv) {
	t.Helper()
	for _, c := range rows {
		err := teapartytest.Insert(db, teapartytest.Conversation{ID: c.id, Type: c.typ, State: c.state, CreatedAt: c.created,
			AwaitingInput: c.awaiting, Agent: c.agent, Parent: c.parent, RequestID: c.request, Slug: c.slug,
			Worktree: c.worktree, PID: c.pid, PIDStarted: c.pidStarted})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func insertMessage(t testing.TB, db *sql.DB, id, conversation, sender, content string, ts float64) {
	t.Helper()
	if err := teapartytest.InsertMessage(db, id, conversation, sender, content, ts); err != nil {
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
