package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/actions"
	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/model"
)

// journalFixture writes a root whose journal holds five lines about nodes
// A, A/b, AB and B at different times, and two torn lines a crash left.
func journalFixture(t *testing.T) (root string, now time.Time) {
	t.Helper()
	root = t.TempDir()
	now = time.Now().UTC().Truncate(time.Second)
	line := func(node string, action model.Action, outcome, msg string, ago time.Duration) string {
		b, err := json.Marshal(actions.JournalEntry{Time: now.Add(-ago), User: "ops", Host: "box", Action: action,
			Node: node, Checks: []string{}, Outcome: outcome, Message: msg, By: 42})
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	body := line("A", model.ActionKill, "done", "ended pid 7 of A", 3*time.Hour) +
		line("A/b", model.ActionResume, "refused", "node A/b is running", 2*time.Hour) +
		`{"time": "2026-11-22T05:00:00Z", "user": "ops", "act` + "\n" +
		line("AB", model.ActionMerge, "done", "merged AB", 30*time.Minute) +
		line("B", model.ActionCompact, "done", "removed 1 line(s)\x1b[31m", 10*time.Minute) +
		line("A/b/c", model.ActionResume, "done", "resumed A/b/c", time.Minute) +
		`{"time": "2026-11-22T06:00:00Z", "node": "A"`
	p := actions.JournalPath(root)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, now
}

// SPEC §4: `journal` prints the recovery journal of the roots, oldest
// first, filtered by node (its subtree) and by time, torn lines skipped.
func TestJournalCommandFilters(t *testing.T) {
	root, now := journalFixture(t)
	tests := []struct {
		name  string
		args  []string
		nodes []string
	}{
		{name: "every whole line", args: nil, nodes: []string{"A", "A/b", "AB", "B", "A/b/c"}},
		{name: "a node and its subtree, not a sibling sharing its prefix", args: []string{"--node", "A"}, nodes: []string{"A", "A/b", "A/b/c"}},
		{name: "a subtree given with a trailing slash", args: []string{"--node", "A/b/"}, nodes: []string{"A/b", "A/b/c"}},
		{name: "since a duration ago", args: []string{"--since", "1h"}, nodes: []string{"AB", "B", "A/b/c"}},
		{name: "since an RFC 3339 time", args: []string{"--since", now.Add(-150 * time.Minute).Format(time.RFC3339)}, nodes: []string{"A/b", "AB", "B", "A/b/c"}},
		{name: "both", args: []string{"--node", "A", "--since", "1h"}, nodes: []string{"A/b/c"}},
		{name: "a node with no lines", args: []string{"--node", "C"}, nodes: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Run("json", func(t *testing.T) {
				stdout, stderr, code := execute(t, append(append([]string{"journal", "--json"}, tt.args...), root)...)
				if code != ExitOK {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				var doc struct {
					Schema  string   `json:"schema"`
					Roots   []string `json:"roots"`
					Entries []struct {
						Root string `json:"root"`
						actions.JournalEntry
					} `json:"entries"`
				}
				if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
					t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
				}
				if doc.Schema != "dispatchtop/v1" || len(doc.Roots) != 1 || doc.Entries == nil {
					t.Fatalf("document %s", stdout)
				}
				var got []string
				for _, e := range doc.Entries {
					got = append(got, e.Node)
					if e.Root != doc.Roots[0] || e.User != "ops" || e.Outcome == "" {
						t.Errorf("entry %+v lacks its fields", e)
					}
				}
				if strings.Join(got, " ") != strings.Join(tt.nodes, " ") {
					t.Fatalf("entries for %v, want %v", got, tt.nodes)
				}
			})
			t.Run("text", func(t *testing.T) {
				stdout, stderr, code := execute(t, append(append([]string{"journal"}, tt.args...), root)...)
				if code != ExitOK {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				if strings.Contains(stdout, "\x1b") {
					t.Errorf("agent-written text reached the terminal raw: %q", stdout)
				}
				lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
				if len(tt.nodes) == 0 {
					if !strings.Contains(stdout, "no journal entries") {
						t.Fatalf("stdout %q, want it to say there is nothing", stdout)
					}
					return
				}
				if len(lines) != len(tt.nodes)+1 || !strings.HasPrefix(lines[0], "TIME") {
					t.Fatalf("want a header and %d lines:\n%s", len(tt.nodes), stdout)
				}
				for i, node := range tt.nodes {
					if fields := strings.Fields(lines[i+1]); len(fields) < 7 || fields[2] != node {
						t.Errorf("line %d %q, want node %s", i+1, lines[i+1], node)
					}
				}
			})
		})
	}
}

// SPEC §4: bad usage of `journal` is one line and exit 2; a root without a
// journal has no entries.
func TestJournalCommandUsage(t *testing.T) {
	root, _ := journalFixture(t)
	// middle's database as the root, its journal written beside it.
	middleDB := filepath.Join(root, "db.sqlite3")
	storefixtures.NewDB(t, middleDB, storefixtures.MiddleMigrations).Close()
	tests := []struct {
		name       string
		args       []string
		want       int
		wantOutput string
	}{
		{name: "a --since that is neither", args: []string{"journal", "--since", "yesterday", root}, want: ExitUsage, wantOutput: "--since"},
		{name: "a negative duration", args: []string{"journal", "--since", "-1h", root}, want: ExitUsage, wantOutput: "--since"},
		{name: "a root that does not exist", args: []string{"journal", filepath.Join(root, "nope")}, want: ExitUsage, wantOutput: "nope"},
		{name: "a root without a journal", args: []string{"journal", t.TempDir()}, want: ExitOK, wantOutput: "no journal entries"},
		{name: "a KIND:PATH root is read at PATH", args: []string{"journal", "native:" + root}, want: ExitOK, wantOutput: "resumed A/b/c"},
		{name: "a store whose root is a file keeps its journal beside it", args: []string{"journal", middleDB}, want: ExitOK, wantOutput: "resumed A/b/c"},
		{name: "an unknown KIND", args: []string{"journal", "nosuch:" + root}, want: ExitUsage, wantOutput: "unknown source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := execute(t, tt.args...)
			if code != tt.want {
				t.Fatalf("exit %d, want %d: %q %q", code, tt.want, stdout, stderr)
			}
			if !strings.Contains(stdout+stderr, tt.wantOutput) {
				t.Errorf("output %q %q lacks %q", stdout, stderr, tt.wantOutput)
			}
			if tt.want != ExitOK && strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("stderr is not one line: %q", stderr)
			}
		})
	}
}
