package actions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §3, §5: recover carries out the action it planned, and only while it
// is still the node's recommended action: a node that changed between the
// plan and its step (it asked a human, beat again, or its lead came back)
// is refused, journaled, and left alone.
func TestRecoverStepRefusedWhenTheRecommendationChanged(t *testing.T) {
	// stuckNode writes a node alive but not beating for an hour: a kill
	// candidate. It returns the pid that must survive.
	stuckNode := func(t *testing.T, root string) int {
		p := startHelper(t, "sleep")
		writeNode(t, root, nodeSpec{dir: "stuck", pid: p.Process.Pid, started: testproc.Started(t, p.Process.Pid), status: "running", age: time.Hour})
		return p.Process.Pid
	}
	// orphanedDead writes a finished lead and its dead child: the child is
	// resumable, since no running lead owns its recovery.
	orphanedDead := func(t *testing.T, root string) int {
		writeNode(t, root, nodeSpec{dir: "lead", status: "completed", age: time.Minute})
		writeNode(t, root, nodeSpec{dir: "lead/c", pid: testproc.Gone(t), started: 1, status: "running", parent: "lead", age: 10 * time.Minute, cfa: "EXECUTE"})
		return 0
	}
	tests := []struct {
		name    string
		node    string
		planned model.Action
		setup   func(t *testing.T, root string) int
		change  func(t *testing.T, root string)
	}{
		{name: "kill: blocked.json appears", node: "stuck", planned: model.ActionKill, setup: stuckNode, change: func(t *testing.T, root string) {
			writeJSON(t, filepath.Join(root, "stuck", "blocked.json"), map[string]any{"question": "which branch?"})
		}},
		{name: "kill: the node beats again", node: "stuck", planned: model.ActionKill, setup: stuckNode, change: func(t *testing.T, root string) {
			now := time.Now()
			if err := os.Chtimes(filepath.Join(root, "stuck", ".heartbeat"), now, now); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "resume: its lead runs again and owns the recovery", node: "lead/c", planned: model.ActionResume, setup: orphanedDead, change: func(t *testing.T, root string) {
			p := startHelper(t, "sleep")
			writeNode(t, root, nodeSpec{dir: "lead", pid: p.Process.Pid, started: testproc.Started(t, p.Process.Pid), status: "running"})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			survivor := tc.setup(t, root)
			out := filepath.Join(t.TempDir(), "argv")
			e := testEngine(root, model.Thresholds{}, resumeConfig(out))
			e.hook = func(step string) error {
				if step == "recover:planned" {
					tc.change(t, root)
				}
				return nil
			}
			results, err := e.Recover(context.Background(), true, true)
			if err != nil {
				t.Fatal(err)
			}
			var got *Result
			for i := range results {
				if results[i].NodeID == tc.node {
					got = &results[i]
				}
			}
			if got == nil {
				t.Fatalf("no step for %s: %+v", tc.node, results)
			}
			if got.Action != tc.planned || !got.Refused || !strings.Contains(got.Message, "planned") {
				t.Fatalf("%s: %s %s %q, want the planned %s refused", tc.node, got.Action, got.Outcome, got.Message, tc.planned)
			}
			time.Sleep(100 * time.Millisecond)
			if survivor != 0 && !processAlive(survivor) {
				t.Fatal("the node was killed though it no longer was a kill candidate")
			}
			if d := dispatches(t, out); len(d) != 0 {
				t.Fatalf("dispatched %v though the step was refused", d)
			}
			js := journalFor(t, root, tc.node)
			if len(js) != 1 || js[0].Outcome != OutcomeRefused || js[0].Action != tc.planned {
				t.Fatalf("journal for %s: %+v", tc.node, js)
			}
		})
	}
}
