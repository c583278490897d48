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

// SPEC §5.5: the command is the operator's. A relative argv[0] is resolved
// against dispatchtop's working directory, as the operator wrote it, never
// against the node's infra dir the command runs in; and a placeholder in
// argv[0] would let a watched directory choose the command: refused.
func TestCommandIsNeverChosenByTheWatchedTree(t *testing.T) {
	script := func(t *testing.T, path, out, who string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\necho "+who+" >> '"+out+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name      string
		action    model.Action
		node      string
		argv0     string
		wantRan   string // which tool ran; "" for a refusal
		wantRefus string // what the refusal names
	}{
		{name: "resume: a relative argv[0] is the operator's", action: model.ActionResume, node: "s", argv0: "bin/tool", wantRan: "operator"},
		{name: "merge: a relative argv[0] is the operator's", action: model.ActionMerge, node: "p/c", argv0: "bin/tool", wantRan: "operator"},
		{name: "resume: a placeholder in argv[0] is refused", action: model.ActionResume, node: "s", argv0: "{infra_dir}/bin/tool", wantRefus: "resume.argv[0]"},
		{name: "merge: a placeholder in argv[0] is refused", action: model.ActionMerge, node: "p/c", argv0: "{worktree}/../bin/tool", wantRefus: "merge.argv[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, cwd := t.TempDir(), t.TempDir()
			deadNode(t, root, "EXECUTE")
			finishedChild(t, root, "t", "1", true)
			out := filepath.Join(t.TempDir(), "ran")
			script(t, filepath.Join(cwd, "bin", "tool"), out, "operator")
			for _, node := range []string{"s", "p/c"} {
				script(t, filepath.Join(root, node, "bin", "tool"), out, "tree")
			}
			t.Chdir(cwd)
			argv := []string{tc.argv0, "{id}"}
			cfg := Config{Resume: CommandConfig{Argv: argv}, Merge: CommandConfig{Argv: argv}}
			res, err := testEngine(root, model.Thresholds{}, cfg).Run(context.Background(), Request{Action: tc.action, Node: tc.node})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantRefus != "" {
				if !res.Refused || !strings.Contains(res.Message, tc.wantRefus) {
					t.Fatalf("%s %q, want a refusal naming %s", res.Outcome, res.Message, tc.wantRefus)
				}
			} else if res.Outcome != OutcomeDone {
				t.Fatalf("%s %q", res.Outcome, res.Message)
			}
			if tc.wantRan != "" {
				waitFor(5*time.Second, func() bool { _, err := os.Stat(out); return err == nil })
			}
			time.Sleep(50 * time.Millisecond)
			b, _ := os.ReadFile(out)
			if got := strings.TrimSpace(string(b)); got != tc.wantRan {
				t.Fatalf("ran %q, want %q", got, tc.wantRan)
			}
		})
	}
}

// SPEC §5.5: a placeholder value that begins with "-" would reach the
// command as an option (a task id "-rf", a directory named "--force"): it
// is refused, naming the placeholder and the value, unless the template
// puts that argument after a literal "--" element, where the command reads
// it as an operand.
func TestPlaceholderValueBeginningWithADashIsRefused(t *testing.T) {
	tests := []struct {
		name      string
		action    model.Action
		node      string // the dir of the node; "-rf" makes {id} begin with a dash
		taskID    string
		noTeam    bool     // the registry entry has an empty team
		argv      []string // after the helper's own arguments
		wantRefus string   // what the refusal names; "" when the command runs
		wantArgs  []string
	}{
		{name: "a task id -rf as a whole argument is refused", action: model.ActionMerge, taskID: "-rf",
			argv: []string{"{task_id}"}, wantRefus: `{task_id} of node p/c is "-rf"`},
		{name: "after a literal -- it is an operand", action: model.ActionMerge, taskID: "-rf",
			argv: []string{"--", "{task_id}"}, wantArgs: []string{"--", "-rf"}},
		{name: "a -- after it does not help", action: model.ActionMerge, taskID: "-rf",
			argv: []string{"{task_id}", "--"}, wantRefus: `{task_id} of node p/c is "-rf"`},
		{name: "a -- inside an element is no separator", action: model.ActionMerge, taskID: "-rf",
			argv: []string{"x--", "{task_id}"}, wantRefus: `{task_id} of node p/c is "-rf"`},
		{name: "an empty value before it does not hide it", action: model.ActionMerge, taskID: "-rf", noTeam: true,
			argv: []string{"{team}{task_id}"}, wantRefus: `{task_id} of node p/c is "-rf"`},
		{name: "the operator's own option keeps its value", action: model.ActionMerge, taskID: "-rf",
			argv: []string{"--task={task_id}"}, wantArgs: []string{"--task=-rf"}},
		{name: "a value inside an argument is not an option", action: model.ActionMerge, taskID: "-rf",
			argv: []string{"x{task_id}"}, wantArgs: []string{"x-rf"}},
		{name: "resume: a node dir named -rf, as {id}, is refused", action: model.ActionResume, node: "-rf",
			argv: []string{"{id}"}, wantRefus: `{id} of node -rf is "-rf"`},
		{name: "resume: after -- the dir named -rf is an operand", action: model.ActionResume, node: "-rf",
			argv: []string{"--", "{id}"}, wantArgs: []string{"--", "-rf"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			node := "p/c"
			if tc.action == model.ActionResume {
				node = tc.node
				writeNode(t, root, nodeSpec{dir: node, pid: testproc.Gone(t), started: float64(time.Now().Add(-time.Hour).Unix()), status: "running", age: 10 * time.Minute, cfa: "EXECUTE"})
			} else {
				team := "t"
				if tc.noTeam {
					team = ""
				}
				finishedChild(t, root, team, tc.taskID, true)
			}
			out := filepath.Join(t.TempDir(), "argv")
			cmd := helperArgv("argv", append([]string{out}, tc.argv...)...)
			cfg := Config{Resume: CommandConfig{Argv: cmd}, Merge: CommandConfig{Argv: cmd}}
			res, err := testEngine(root, model.Thresholds{}, cfg).Run(context.Background(), Request{Action: tc.action, Node: filepath.Join(root, node)})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantRefus != "" {
				if !res.Refused || !strings.Contains(res.Message, tc.wantRefus) || strings.Contains(res.Message, "\n") {
					t.Fatalf("%s %q, want a one-line refusal naming %s", res.Outcome, res.Message, tc.wantRefus)
				}
				time.Sleep(50 * time.Millisecond)
				if d := dispatches(t, out); len(d) != 0 {
					t.Fatalf("the command ran with %q", d)
				}
				return
			}
			if res.Outcome != OutcomeDone {
				t.Fatalf("%s %q", res.Outcome, res.Message)
			}
			waitFor(5*time.Second, func() bool { return len(dispatches(t, out)) > 0 })
			if got := dispatches(t, out); len(got) != 1 || strings.Join(got[0], "\x00") != strings.Join(tc.wantArgs, "\x00") {
				t.Fatalf("argv %q, want %q", got, tc.wantArgs)
			}
		})
	}
}
