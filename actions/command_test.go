package actions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
