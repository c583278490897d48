package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/actions"
	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §4: `journal --node` takes every form of a node's id a screen
// shows: a line recorded by a view of several roots (`.sessions/X`) is
// found by the id a view of that root alone shows, and the other way
// round; with nothing to print it says which journals it read.
func TestJournalNodeTakesEveryShownForm(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".sessions")
	now := time.Now().UTC().Truncate(time.Second)
	var body strings.Builder
	for i, node := range []string{".sessions/20261122-091500", "20261122-091500/code/1", "20261122-093000"} {
		b, err := json.Marshal(actions.JournalEntry{Time: now.Add(time.Duration(i-5) * time.Minute), User: "ops", Host: "box",
			Action: model.ActionResume, Node: node, Checks: []string{}, Outcome: "done", Message: "resumed " + node})
		if err != nil {
			t.Fatal(err)
		}
		body.Write(append(b, '\n'))
	}
	p := actions.JournalPath(root)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{"20261122-091500", ".sessions/20261122-091500"} {
		stdout, stderr, code := execute(t, "journal", "--node", arg, root)
		if code != ExitOK {
			t.Fatalf("--node %s: exit %d: %s", arg, code, stderr)
		}
		if !strings.Contains(stdout, "resumed .sessions/20261122-091500") || !strings.Contains(stdout, "resumed 20261122-091500/code/1") ||
			strings.Contains(stdout, "20261122-093000") {
			t.Errorf("--node %s printed:\n%s\nwant the two lines of 20261122-091500's subtree", arg, stdout)
		}
	}
	stdout, _, code := execute(t, "journal", "--node", "20261122-099999", root)
	if code != ExitOK || !strings.Contains(stdout, "no journal entries") || !strings.Contains(stdout, p) {
		t.Errorf("exit %d, %q: want no entries said, and where it looked (%s)", code, stdout, p)
	}
}
