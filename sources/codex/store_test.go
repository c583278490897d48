package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
)

func TestDetect(t *testing.T) {
	h := newHome(t)
	empty := t.TempDir()
	other := filepath.Join(t.TempDir(), "db.sqlite3")
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want bool
	}{
		{"a Codex home", h.dir, true},
		{"its state database", h.db, true},
		{"a directory without one", empty, false},
		{"another database", other, false},
		{"a path that is not there", filepath.Join(empty, "nope"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := New().Detect(tt.path); got != tt.want {
				t.Errorf("Detect(%s) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}

// The newest layout version is read when a home holds several
// state_<N>.sqlite (Codex removes older ones at startup; one may linger).
func TestNewestStateVersionIsRead(t *testing.T) {
	h := newHome(t)
	old := filepath.Join(h.dir, "state_4.sqlite")
	if err := os.WriteFile(old, []byte("not read"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := dbPath(h.dir); got != h.db {
		t.Errorf("dbPath = %s, want %s", got, h.db)
	}
	newer := filepath.Join(h.dir, "state_12.sqlite")
	storefixtures.NewDB(t, newer, stateDDL)
	if got := dbPath(h.dir); got != newer {
		t.Errorf("dbPath = %s, want %s", got, newer)
	}
	if got := New().WatchPaths(h.dir); len(got) != 2 || got[0] != newer || got[1] != newer+"-wal" {
		t.Errorf("WatchPaths = %v", got)
	}
}

// Drift: a store that is not what the mapping reads is a problem naming
// the file and what it lacks, never a crash and never a node.
func TestDriftIsAProblemNamingFileAndField(t *testing.T) {
	tests := []struct {
		name  string
		ddl   []string
		cause string
	}{
		{"no threads table", []string{`CREATE TABLE other (id TEXT)`}, `no table "threads"`},
		{"threads lacks a column", []string{`CREATE TABLE threads (id TEXT, rollout_path TEXT, created_at INTEGER, updated_at INTEGER, cwd TEXT, title TEXT)`},
			`lacks column archived`},
		{"edges lack a column", append([]string{`CREATE TABLE threads (id TEXT, rollout_path TEXT, created_at INTEGER, updated_at INTEGER, cwd TEXT, title TEXT, archived INTEGER)`},
			`CREATE TABLE thread_spawn_edges (parent_thread_id TEXT, child_thread_id TEXT)`), `"thread_spawn_edges" lacks column status`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "state_5.sqlite")
			storefixtures.NewDB(t, db, tt.ddl)
			facts := New().Read(filepath.Dir(db), time.Now())
			if len(facts.Nodes) != 0 || len(facts.Problems) != 1 {
				t.Fatalf("nodes %d problems %v", len(facts.Nodes), facts.Problems)
			}
			p := facts.Problems[0]
			if p.Path != db || !strings.Contains(p.Error, db) || !strings.Contains(p.Error, tt.cause) {
				t.Errorf("problem = %+v, want %s naming %s", p, tt.cause, db)
			}
		})
	}
}

// An older store without the columns later migrations add (updated_at_ms,
// parent_thread_id, agent_nickname) and without spawn edges reads whole.
func TestOldSchemaWithoutLaterColumnsReads(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state_1.sqlite")
	w := storefixtures.NewDB(t, db, stateDDL[1:3])
	now := time.Now()
	if _, err := w.Exec(`INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title,
		sandbox_policy, approval_mode) VALUES ('t1', '', ?, ?, 'cli', 'openai', '/w', 't', 'read-only', 'on-request')`, now.Unix(), now.Unix()); err != nil {
		t.Fatal(err)
	}
	facts := New().Read(filepath.Dir(db), now)
	if len(facts.Problems) != 0 || len(facts.Nodes) != 1 {
		t.Fatalf("nodes %d problems %v", len(facts.Nodes), facts.Problems)
	}
	if got := facts.Nodes[0].BeatMtime.Unix(); got != now.Unix() {
		t.Errorf("beat = %d, want updated_at %d", got, now.Unix())
	}
}

// A FIFO where the database goes is refused, not opened (it would block).
func TestNonRegularDatabaseIsRefused(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state_5.sqlite")
	if err := syscall.Mkfifo(db, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan []string, 1)
	go func() {
		facts := New().Read(dir, time.Now())
		var errs []string
		for _, p := range facts.Problems {
			errs = append(errs, p.Error)
		}
		done <- errs
	}()
	select {
	case errs := <-done:
		if len(errs) != 1 || !strings.Contains(errs[0], db) {
			t.Errorf("problems = %v", errs)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("read blocked on a FIFO")
	}
}

// docs/sources.md: Codex writes its database while dispatchtop reads it,
// and dispatchtop never writes it: no read fails, no committed thread is
// missing, and the database's files are as the writer left them.
func TestReadsWhileCodexWritesLoseNoRowAndChangeNoByte(t *testing.T) {
	h := newHome(t)
	now := time.Now()
	src := &Source{program: testProgram}
	write := func(i int) error {
		id := fmt.Sprintf("t-%04d", i)
		if _, err := h.writer.Exec(`INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title,
			sandbox_policy, approval_mode) VALUES (?, '', ?, ?, 'cli', 'openai', '/w', 't', 'read-only', 'on-request')`, id, now.Unix(), now.Unix()); err != nil {
			return err
		}
		if i > 0 {
			if _, err := h.writer.Exec(`INSERT INTO thread_spawn_edges VALUES ('t-0000', ?, 'open')`, id); err != nil {
				return err
			}
		}
		_, err := h.writer.Exec(`UPDATE threads SET updated_at = updated_at + 1 WHERE id = ?`, id)
		return err
	}
	readAll := func(committed int) {
		t.Helper()
		facts := src.Read(h.dir, now)
		if len(facts.Problems) > 0 {
			t.Fatalf("read with %d threads committed: %v", committed, facts.Problems)
		}
		if len(facts.Nodes) < committed {
			t.Fatalf("read with %d threads committed: %d nodes", committed, len(facts.Nodes))
		}
	}
	const beside, between = 200, 40
	storefixtures.ReadsBesideWrites(t, h.dir, beside, between, write, readAll)
	if err := h.writer.Close(); err != nil {
		t.Fatal(err)
	}
	files := storefixtures.DirBytes(t, h.dir)
	readAll(beside + between)
	storefixtures.RequireSameBytes(t, "a read of the database at rest", files, storefixtures.DirBytes(t, h.dir))
}
