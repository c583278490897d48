package actions

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/model"
)

// startSleep starts a real `sleep` and ends it at cleanup.
func startSleep(t *testing.T) int {
	t.Helper()
	c := exec.Command("sleep", "300")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	return c.Process.Pid
}

// runningNode writes a running heartbeat for a fresh `sleep` in root/dir.
// parent is the heartbeat's parent_heartbeat; nil leaves the field out
// (old writers).
func runningNode(t *testing.T, root, dir string, parent *string) int {
	t.Helper()
	pid := startSleep(t)
	hb := map[string]any{"pid": pid, "role": "worker", "started": testproc.Started(t, pid), "status": "running"}
	if parent != nil {
		hb["parent_heartbeat"] = *parent
	}
	if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(root, dir, ".heartbeat"), hb)
	return pid
}

func heartbeatOf(root, dir string) *string {
	p := filepath.Join(root, dir, ".heartbeat")
	return &p
}

// plannedKills lists the node ids a kill plan signals, in order.
func plannedKills(plan []string) []string {
	var ids []string
	for _, line := range plan {
		if i := strings.Index(line, "(node "); i >= 0 {
			ids = append(ids, strings.TrimSuffix(strings.Fields(line[i+len("(node "):])[0], ","))
		}
	}
	return ids
}

// SPEC §2 (trees are scoped) and §5.1: `kill --tree X` plans only X's own
// session. X's `.children` naming Y does not put Y's processes in the plan
// when Y belongs to another session by its own word; it does when Y is an
// old writer's worker with no parent_heartbeat at all.
func TestKillTreeNeverCrossesASessionBoundary(t *testing.T) {
	lead := ""
	tests := []struct {
		name  string
		build func(t *testing.T, root string) string // writes Y (and its session), returns Y's dir
		want  []string                               // the nodes planned, bottom-up
	}{
		{name: "Y a session lead (parent_heartbeat empty)",
			build: func(t *testing.T, root string) string {
				runningNode(t, root, "Y", &lead)
				return "Y"
			}, want: []string{"X/a", "X"}},
		{name: "Y naming another session's lead as its parent",
			build: func(t *testing.T, root string) string {
				runningNode(t, root, "L", &lead)
				runningNode(t, root, "Y", heartbeatOf(root, "L"))
				return "Y"
			}, want: []string{"X/a", "X"}},
		{name: "Y nested in another session's dir",
			build: func(t *testing.T, root string) string {
				runningNode(t, root, "L", &lead)
				runningNode(t, root, "L/team/Y", nil)
				return "L/team/Y"
			}, want: []string{"X/a", "X"}},
		{name: "Y an old writer's worker (no parent_heartbeat field) is X's",
			build: func(t *testing.T, root string) string {
				runningNode(t, root, "Y", nil)
				return "Y"
			}, want: []string{"X/a", "Y", "X"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			runningNode(t, root, "X", &lead)
			runningNode(t, root, "X/a", heartbeatOf(root, "X"))
			y := tc.build(t, root)
			register(t, root, "X", y, "t", "1", "active")

			res, err := testEngine(root, model.Thresholds{}, Config{}).DryRun(context.Background(),
				Request{Action: model.ActionKill, Node: "X", Tree: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := plannedKills(res.Plan); strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("planned %v, want %v (plan %q)", got, tc.want, res.Plan)
			}
			if len(tc.want) == 2 && !strings.Contains(strings.Join(res.Plan, "\n"), "leave "+y+": ") {
				t.Errorf("plan %q does not say why %s is left alone", res.Plan, y)
			}
		})
	}
}

// SPEC §5.1 --tree, §2: a descendant that another session also claims (its
// .children names it) is not X's alone to end: --tree skips it and what is
// below it, says so in the plan and the journal, and leaves it running —
// also when the dashboard's snapshot chooses what is re-read (the other
// session's claim lies outside X's directory).
func TestKillTreeSkipsADescendantClaimedByAnotherSession(t *testing.T) {
	tests := []struct {
		name string
		run  func(e *Engine, req Request) (Result, error)
	}{
		{name: "by name", run: func(e *Engine, req Request) (Result, error) {
			return e.Run(context.Background(), req)
		}},
		{name: "with the dashboard's snapshot as the hint", run: func(e *Engine, req Request) (Result, error) {
			hint, err := e.scanRoots()
			if err != nil {
				return Result{}, err
			}
			return e.RunWithHint(context.Background(), req, hint)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			lead := ""
			x := runningNode(t, root, "X", &lead)
			a := runningNode(t, root, "X/a", heartbeatOf(root, "X"))
			z := runningNode(t, root, "X/z", nil)
			below := runningNode(t, root, "X/z/w", heartbeatOf(root, "X/z"))
			runningNode(t, root, "L", &lead)
			register(t, root, "L", "X/z", "t", "1", "active")
			e := testEngine(root, model.Thresholds{}, Config{})

			dry, err := tc.run(e, Request{Action: model.ActionKill, Node: "X", Tree: true, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := plannedKills(dry.Plan); strings.Join(got, " ") != "X/a X" {
				t.Fatalf("planned %v, want [X/a X] (plan %q)", got, dry.Plan)
			}
			if !strings.Contains(strings.Join(dry.Plan, "\n"), "skip X/z and below: also claimed by L") {
				t.Fatalf("plan %q does not say why X/z is skipped", dry.Plan)
			}

			res, err := tc.run(e, Request{Action: model.ActionKill, Node: "X", Tree: true, Grace: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != OutcomeDone || !strings.Contains(res.Message, "skipped X/z and below") {
				t.Fatalf("kill --tree: %s: %s", res.Outcome, res.Message)
			}
			for _, pid := range []int{x, a} {
				if !waitFor(2*time.Second, func() bool { return !processAlive(pid) }) {
					t.Fatalf("pid %d of X's own session survived", pid)
				}
			}
			for _, pid := range []int{z, below} {
				if !processAlive(pid) {
					t.Fatalf("pid %d, claimed by another session too, was killed", pid)
				}
			}
			js := journalFor(t, root, "X/z")
			if len(js) != 1 || js[0].Outcome != OutcomeSkipped || !strings.Contains(js[0].Message, "also claimed by L") {
				t.Fatalf("journal for X/z: %+v", js)
			}
		})
	}
}
