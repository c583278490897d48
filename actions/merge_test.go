package actions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/model"
)

// finishedChild writes a finished session p with a completed child p/c
// (CfA DONE) registered with team and taskID, and a worktree when asked.
func finishedChild(t *testing.T, root, team, taskID string, worktree bool) string {
	t.Helper()
	writeNode(t, root, nodeSpec{dir: "p", status: "completed", age: time.Minute})
	infra := writeNode(t, root, nodeSpec{dir: "p/c", status: "completed", parent: "p", cfa: "DONE", age: time.Minute})
	register(t, root, "p", "p/c", team, taskID, "active")
	if worktree {
		os.MkdirAll(filepath.Join(infra, "worktree"), 0o755)
	}
	return infra
}

// SPEC §5.5, §9: placeholders carrying $(…), backticks, ';', quotes or
// spaces reach the command as one literal argument each, never a shell.
func TestPlaceholdersReachTheCommandAsOneLiteralArgument(t *testing.T) {
	root := t.TempDir()
	work := t.TempDir()
	team := `a team; touch ` + filepath.Join(work, "pwned-team")
	taskID := `$(touch ` + filepath.Join(work, "pwned-dollar") + `) ` + "`touch " + filepath.Join(work, "pwned-tick") + "`" + ` "dq" 'sq' {id}`
	infra := finishedChild(t, root, team, taskID, true)
	out := filepath.Join(t.TempDir(), "argv")
	cfg := Config{Merge: CommandConfig{Argv: helperArgv("argv", out, "{task_id}", "--team={team}", "{worktree}", "{id}:{role}", "{cfa_state}", "{parent_heartbeat}", "{heartbeat}", "{infra_dir}")}}
	res, err := testEngine(root, model.Thresholds{}, cfg).Run(context.Background(), Request{Action: model.ActionMerge, Node: "p/c"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeDone {
		t.Fatalf("merge: %s: %s", res.Outcome, res.Message)
	}
	got := dispatches(t, out)
	want := []string{taskID, "--team=" + team, filepath.Join(infra, "worktree"), "p/c:worker", "DONE",
		filepath.Join(root, "p", ".heartbeat"), filepath.Join(infra, ".heartbeat"), infra}
	if len(got) != 1 || strings.Join(got[0], "\x00") != strings.Join(want, "\x00") {
		t.Fatalf("argv %q\nwant %q", got, want)
	}
	for _, f := range []string{"pwned-team", "pwned-dollar", "pwned-tick"} {
		if _, err := os.Stat(filepath.Join(work, f)); err == nil {
			t.Fatalf("%s exists: a placeholder reached a shell", f)
		}
	}
}

// SPEC §5.4: merge's preconditions, the .merged marker and failures.
func TestMerge(t *testing.T) {
	tests := []struct {
		name        string
		setup       func(t *testing.T, root string)
		argv        func(out string) []string
		wantOutcome string
		wantMsg     string
		wantMerged  bool
	}{
		{name: "a finished child of a finished parent merges", wantOutcome: OutcomeDone, wantMerged: true},
		{name: "a running parent owns the merge", wantOutcome: OutcomeRefused, wantMsg: "is running", setup: func(t *testing.T, root string) {
			p := startHelper(t, "sleep")
			writeNode(t, root, nodeSpec{dir: "p", pid: p.Process.Pid, started: testproc.Started(t, p.Process.Pid), status: "running"})
		}},
		{name: "work that did not succeed is not merged", wantOutcome: OutcomeRefused, wantMsg: "has not succeeded", setup: func(t *testing.T, root string) {
			writeNode(t, root, nodeSpec{dir: "p/c", pid: testproc.Gone(t), started: 1, status: "running", parent: "p", cfa: "EXECUTE", age: time.Hour})
		}},
		{name: "an already merged node is not merged again", wantOutcome: OutcomeRefused, wantMsg: "already merged", wantMerged: true, setup: func(t *testing.T, root string) {
			os.WriteFile(filepath.Join(root, "p/c/.merged"), []byte("{}\n"), 0o644)
		}},
		{name: "no worktree for {worktree} refuses", wantOutcome: OutcomeRefused, wantMsg: "has no worktree", setup: func(t *testing.T, root string) {
			os.Remove(filepath.Join(root, "p/c/worktree"))
		}},
		{name: "no merge command configured names the key", wantOutcome: OutcomeRefused, wantMsg: "merge.argv", argv: func(string) []string { return nil }},
		{name: "a failing command is a failure and leaves no marker", wantOutcome: OutcomeFailed, wantMsg: "exit status 1", argv: func(string) []string { return helperArgv("fail") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			finishedChild(t, root, "t", "1", true)
			if tc.setup != nil {
				tc.setup(t, root)
			}
			out := filepath.Join(t.TempDir(), "argv")
			argv := helperArgv("argv", out, "{worktree}")
			if tc.argv != nil {
				argv = tc.argv(out)
			}
			res, err := testEngine(root, model.Thresholds{}, Config{Merge: CommandConfig{Argv: argv}}).Run(context.Background(), Request{Action: model.ActionMerge, Node: "p/c"})
			if (err != nil) != (tc.wantOutcome == OutcomeFailed) {
				t.Fatalf("err %v for outcome %s", err, res.Outcome)
			}
			if res.Outcome != tc.wantOutcome || !strings.Contains(res.Message, tc.wantMsg) {
				t.Fatalf("got %s %q, want %s saying %q", res.Outcome, res.Message, tc.wantOutcome, tc.wantMsg)
			}
			_, statErr := os.Stat(filepath.Join(root, "p/c/.merged"))
			if (statErr == nil) != tc.wantMerged {
				t.Fatalf(".merged exists: %v, want %v", statErr == nil, tc.wantMerged)
			}
			if n := len(dispatches(t, out)); (n == 1) != (tc.wantOutcome == OutcomeDone) {
				t.Fatalf("merge command ran %d times", n)
			}
			js := journalFor(t, root, "p/c")
			if len(js) != 1 || js[0].Outcome != tc.wantOutcome {
				t.Fatalf("journal: %+v", js)
			}
		})
	}
}

// SPEC §5.4: merges of one node racing from several engines run the merge
// command once; the others find it merged.
func TestConcurrentMergesRunOnce(t *testing.T) {
	root := t.TempDir()
	finishedChild(t, root, "t", "1", true)
	out := filepath.Join(t.TempDir(), "argv")
	cfg := Config{Merge: CommandConfig{Argv: helperArgv("argv", out, "{id}")}}
	var wg sync.WaitGroup
	results := make([]Result, 6)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _ = testEngine(root, model.Thresholds{}, cfg).Run(context.Background(), Request{Action: model.ActionMerge, Node: "p/c"})
		}()
	}
	wg.Wait()
	done := 0
	for _, r := range results {
		if r.Outcome == OutcomeDone {
			done++
		} else if !strings.Contains(r.Message, "already merged") {
			t.Fatalf("unexpected: %s %q", r.Outcome, r.Message)
		}
	}
	if done != 1 || len(dispatches(t, out)) != 1 {
		t.Fatalf("%d merges done, command ran %d times; want 1 and 1", done, len(dispatches(t, out)))
	}
}
