package actions

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/middle"
	"github.com/dispatchtop/dispatchtop/sources/middle/middletest"
)

// privateTmux is a tmux server of the test's own: its socket in a dir of
// its own (TMUX_TMPDIR) under a name of its own, no config, no $TMUX. It
// is killed, and its dir removed, when the test ends.
type privateTmux struct {
	t      *testing.T
	socket string
}

func newPrivateTmux(t *testing.T) *privateTmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux on PATH: middle's pids come from tmux panes")
	}
	dir, err := os.MkdirTemp("", "dt") // short: a socket path is at most ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMUX_TMPDIR", dir)
	t.Setenv("TMUX", "")
	s := &privateTmux{t: t, socket: fmt.Sprintf("dispatchtop-test-%d", os.Getpid())}
	t.Cleanup(func() {
		_ = exec.Command("tmux", "-L", s.socket, "kill-server").Run()
		os.RemoveAll(dir)
	})
	return s
}

func (s *privateTmux) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-f", os.DevNull, "-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// session starts a detached session named name running an innocent
// `sleep` (no shell), and returns the sleep's pid.
func (s *privateTmux) session(name string) int {
	s.t.Helper()
	s.run("new-session", "-d", "-s", name, "sleep", "300")
	pid, err := strconv.Atoi(s.run("list-panes", "-t", "="+name, "-F", "#{pane_pid}"))
	if err != nil {
		s.t.Fatal(err)
	}
	return pid
}

// SPEC §5.1, §10; docs/sources.md (middle): a workflow row's session_name
// is trusted only when it is the name middle gives that row's run and the
// session was created after the row; any other tmux session — `0`, `notes`,
// or one of middle's names made before the row — is not the row's agent,
// and its pane survives kill, the dashboard's x and recover --apply
// --kill-stalled, even when the row is stalled past kill-after.
func TestATmuxSessionMiddleDidNotMakeIsNeverKilled(t *testing.T) {
	tmux := newPrivateTmux(t)
	victims := map[string]int{ // by workflow id
		"wf-zero":  tmux.session("0"),
		"wf-notes": tmux.session("notes"),
		"wf-older": tmux.session("middle-acme-api-7"),
	}
	// Every session above was created at least a second before the rows
	// (tmux keeps a session's creation to the second).
	time.Sleep(1100 * time.Millisecond)

	dbPath := filepath.Join(t.TempDir(), ".middle", "db.sqlite3")
	db, err := middletest.Open(dbPath, middletest.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	now := time.Now()
	stalled := now.Add(-20 * time.Minute) // past middle's kill-after (15 min)
	for _, r := range []struct{ id, epic, session string }{
		{"wf-zero", "5", "0"},
		{"wf-notes", "6", "notes"},
		{"wf-older", "7", "middle-acme-api-7"},
	} {
		if _, err := db.Exec(`INSERT INTO workflows (id, kind, repo, epic_number, epic_ref, adapter, state, created_at, updated_at,
			bunqueue_execution_id, session_name, controlled_by) VALUES (?, 'implementation', 'acme/api', ?, ?, 'claude', 'running', ?, ?, ?, ?, 'middle')`,
			r.id, r.epic, r.epic, now.UnixMilli(), stalled.UnixMilli(), r.id, r.session); err != nil {
			t.Fatal(err)
		}
	}

	src := middle.New()
	src.PaneLookup = middle.Tmux{Socket: tmux.socket}.Sessions
	e := New(EngineOptions{Scan: scanner.Options{Roots: []string{dbPath}, Thresholds: model.DefaultThresholds(),
		Sources: []sources.Source{src}, Now: time.Now}})
	snap, err := e.scanRoots()
	if err != nil {
		t.Fatal(err)
	}
	for id, pid := range victims {
		node := "acme/api/" + id
		n := snap.Node(node)
		if n == nil {
			t.Fatalf("no node %s", node)
		}
		if n.PID() == pid || n.HasFlag(model.FlagKillCandidate) {
			t.Errorf("%s was given pane pid %d of a session middle did not make (flags %v, %s)", node, n.PID(), n.Flags, n.Reason)
		}
	}
	for id, pid := range victims {
		mustSurvive(t, e, "acme/api/"+id, pid)
	}
}
