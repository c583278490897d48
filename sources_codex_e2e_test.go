package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
)

// docs/sources.md, Codex CLI, as `--once --json` shows it: a child thread
// whose rollout a real `codex` of the home holds open runs with that pid,
// and, its parent archived, is orphaned; a thread no codex holds, in a
// home a codex owns, is never a kill candidate; with the codex gone, the
// open child is dead and nothing is offered kill.
func TestCodexThreadsOnceJSON(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	home := filepath.Join(t.TempDir(), ".codex")
	db := filepath.Join(home, "state_5.sqlite")
	w := storefixtures.NewDB(t, db, storefixtures.CodexStateDDL)
	now := time.Now()
	rollouts := map[string]string{}
	for _, id := range []string{"th-parent", "th-child", "th-idle"} {
		r := filepath.Join(home, "sessions", "2026", "05", "07", "rollout-"+id+".jsonl")
		if err := os.MkdirAll(filepath.Dir(r), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(r, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		rollouts[id] = r
		archived := 0
		if id == "th-parent" {
			archived = 1
		}
		if _, err := w.Exec(`INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title,
			sandbox_policy, approval_mode, archived) VALUES (?, ?, ?, ?, 'cli', 'openai', '/w', 't', 'read-only', 'on-request', ?)`,
			id, r, now.Unix(), now.Unix(), archived); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Exec(`INSERT INTO thread_spawn_edges VALUES ('th-parent', 'th-child', 'open')`); err != nil {
		t.Fatal(err)
	}

	// A real process named codex, of this home, holding the child's rollout.
	bin := filepath.Join(t.TempDir(), "codex")
	in, _ := os.Open(sleep)
	out, _ := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	io.Copy(out, in)
	in.Close()
	out.Close()
	hold, err := os.Open(rollouts["th-child"])
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "60")
	cmd.Env = []string{"CODEX_HOME=" + home}
	cmd.Stdin = hold
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hold.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	doc := onceDoc(t, "codex:"+home)
	child := doc.byKey[db+"#th-child"]
	if child == nil {
		t.Fatalf("no child node: %v", doc.byKey)
	}
	if doc.parentOf[child.Key] != db+"#th-parent" {
		t.Errorf("child under %q", doc.parentOf[child.Key])
	}
	if child.PID == nil || *child.PID != cmd.Process.Pid || child.State != "running" || !slices.Contains(child.Flags, "orphaned") {
		t.Errorf("child: pid %v state %s flags %v (%s), want pid %d running orphaned", child.PID, child.State, child.Flags, child.Reason, cmd.Process.Pid)
	}
	idle := doc.byKey[db+"#th-idle"]
	if idle == nil || idle.State != "running" || slices.Contains(idle.Flags, "kill_candidate") {
		t.Errorf("idle thread: %+v", idle)
	}

	cmd.Process.Kill()
	cmd.Wait()
	doc = onceDoc(t, "codex:"+home)
	for _, id := range []string{"th-child", "th-idle"} {
		n := doc.byKey[db+"#"+id]
		if n == nil || n.State != "dead" || n.Action == "kill" {
			t.Errorf("%s with no codex alive: %+v", id, n)
		}
	}
}
