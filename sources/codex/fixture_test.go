package codex

import (
	"database/sql"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
)

// stateDDL is Codex's (see storefixtures).
var stateDDL = storefixtures.CodexStateDDL

// home is a Codex home: its state database with its writer, and the
// directory rollouts are written under.
type home struct {
	dir, db string
	writer  *sql.DB
}

func newHome(t testing.TB) *home {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".codex")
	db := filepath.Join(dir, "state_5.sqlite")
	return &home{dir: dir, db: db, writer: storefixtures.NewDB(t, db, stateDDL)}
}

// thread inserts a thread as Codex's upsert does, its rollout written under
// sessions/YYYY/MM/DD; updated is epoch seconds. It returns the rollout.
func (h *home) thread(t testing.TB, id string, updated int64, archived bool, parent string) string {
	t.Helper()
	rollout := filepath.Join(h.dir, "sessions", "2026", "05", "07", "rollout-2026-05-07T10-00-00-"+id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(rollout), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rollout, []byte(`{"type":"session_meta"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	arch := 0
	if archived {
		arch = 1
	}
	var par any
	if parent != "" {
		par = parent
	}
	_, err := h.writer.Exec(`INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title,
		sandbox_policy, approval_mode, archived, parent_thread_id) VALUES (?, ?, ?, ?, 'cli', 'openai', ?, ?, 'read-only', 'on-request', ?, ?)`,
		id, rollout, updated-60, updated, h.dir, "title of "+id, arch, par)
	if err != nil {
		t.Fatal(err)
	}
	return rollout
}

func (h *home) edge(t testing.TB, parent, child, status string) {
	t.Helper()
	if _, err := h.writer.Exec(`INSERT INTO thread_spawn_edges (parent_thread_id, child_thread_id, status) VALUES (?, ?, ?)`,
		parent, child, status); err != nil {
		t.Fatal(err)
	}
}

// fakeCodex starts a copy of sleep named name (as Codex's binary would be
// named) with env, its stdin the file hold when given (a rollout held open
// as Codex's writer holds it). It is killed when the test ends.
func fakeCodex(t testing.TB, name string, env []string, hold string) *exec.Cmd {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	bin := filepath.Join(t.TempDir(), name)
	copyFile(t, sleep, bin)
	cmd := exec.Command(bin, "60")
	cmd.Env = env
	if hold != "" {
		f, err := os.Open(hold)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
