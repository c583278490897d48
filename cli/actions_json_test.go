package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/actions"
)

// actionDoc is an action's --json document, as a script reads it.
type actionDoc struct {
	Schema string `json:"schema"`
	actions.JournalEntry
	Refused   bool                   `json:"refused"`
	Plan      []string               `json:"plan"`
	Journaled []actions.JournalEntry `json:"journaled"`
}

// SPEC §4.1: --json on an action prints its outcome as the journal records
// it, with the plan and the lines it journaled; the exit codes and the
// one-line stderr stay as they are.
func TestActionJSONIsTheJournalLine(t *testing.T) {
	config := func(t *testing.T) string {
		p := filepath.Join(t.TempDir(), "config.toml")
		os.WriteFile(p, []byte("[resume]\nargv = [\"true\"]\n"), 0o644)
		return p
	}
	tests := []struct {
		name      string
		args      func(t *testing.T, root string) []string
		wantCode  int
		check     func(t *testing.T, doc actionDoc)
		journaled int
	}{
		{name: "a dry run says what it would do and journals nothing", wantCode: ExitOK,
			args: func(t *testing.T, root string) []string {
				return []string{"resume", "--json", "--dry-run", "--config", config(t), "--root", root, "dead"}
			},
			check: func(t *testing.T, doc actionDoc) {
				if doc.Outcome != actions.OutcomeDryRun || doc.Refused || len(doc.Plan) == 0 || !strings.Contains(doc.Message, "would resume dead") {
					t.Errorf("dry run = %+v", doc)
				}
			}},
		{name: "a resume that ran is its journal line", wantCode: ExitOK, journaled: 1,
			args: func(t *testing.T, root string) []string {
				return []string{"resume", "--json", "--config", config(t), "--root", root, "dead"}
			},
			check: func(t *testing.T, doc actionDoc) {
				if doc.Outcome != actions.OutcomeDone || len(doc.Checks) == 0 {
					t.Errorf("resume = %+v", doc)
				}
			}},
		{name: "a refusal exits 1 and still prints its line", wantCode: ExitFound, journaled: 1,
			args: func(t *testing.T, root string) []string { return []string{"kill", "--json", "--root", root, "dead"} },
			check: func(t *testing.T, doc actionDoc) {
				if doc.Outcome != actions.OutcomeRefused || !doc.Refused || !strings.Contains(doc.Message, "not running") {
					t.Errorf("refusal = %+v", doc)
				}
			}},
		{name: "compact --all lists every line it journaled", wantCode: ExitOK, journaled: 1,
			args: func(t *testing.T, root string) []string {
				return []string{"compact", "--json", "--all", "--root", root}
			},
			check: func(t *testing.T, doc actionDoc) {
				if doc.Outcome != actions.OutcomeDone || doc.Journaled[0].Node != "fin" || len(doc.Journaled[0].Removed) != 1 {
					t.Errorf("compact --all = %+v", doc)
				}
			}},
		{name: "an unknown node is a failed outcome", wantCode: ExitFound,
			args: func(t *testing.T, root string) []string { return []string{"merge", "--json", "--root", root, "nosuch"} },
			check: func(t *testing.T, doc actionDoc) {
				if doc.Outcome != actions.OutcomeFailed || doc.Node != "nosuch" || !strings.Contains(doc.Message, "nosuch") {
					t.Errorf("unknown node = %+v", doc)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			root := actionsFixture(t)
			stdout, stderr, code := execute(t, tt.args(t, root)...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stdout %s stderr %q", code, tt.wantCode, stdout, stderr)
			}
			if code != ExitOK && (stderr == "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0) {
				t.Errorf("stderr should be one line, got %q", stderr)
			}
			var doc actionDoc
			dec := json.NewDecoder(strings.NewReader(stdout))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("stdout is not the action's JSON: %v\n%s", err, stdout)
			}
			if doc.Schema != "dispatchtop/v1" || doc.User == "" || doc.Host == "" || doc.By == 0 || doc.Time.IsZero() || doc.Plan == nil || doc.Journaled == nil {
				t.Errorf("the document lacks its fields: %s", stdout)
			}
			if len(doc.Journaled) != tt.journaled {
				t.Fatalf("journaled %d line(s), want %d: %s", len(doc.Journaled), tt.journaled, stdout)
			}
			written, err := actions.ReadJournal(root, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(written) != tt.journaled {
				t.Fatalf("the journal holds %d line(s), the document says %d", len(written), tt.journaled)
			}
			for i := range written {
				a, _ := json.Marshal(written[i])
				b, _ := json.Marshal(doc.Journaled[i])
				if string(a) != string(b) {
					t.Errorf("journaled[%d] = %s\nthe journal holds %s", i, b, a)
				}
			}
			tt.check(t, doc)
		})
	}
}

// SPEC §4.1: recover --json prints the plan (with --apply, the outcome):
// one journal-shaped line per step.
func TestRecoverJSONIsThePlan(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := actionsFixture(t)
	stdout, stderr, code := execute(t, "recover", "--json", root)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Schema  string `json:"schema"`
		Applied *bool  `json:"applied"`
		Steps   []struct {
			actions.JournalEntry
			Refused bool     `json:"refused"`
			Plan    []string `json:"plan"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if doc.Schema != "dispatchtop/v1" || doc.Applied == nil || *doc.Applied {
		t.Fatalf("schema %q applied %v: want dispatchtop/v1 and false", doc.Schema, doc.Applied)
	}
	byNode := map[string]string{}
	for _, s := range doc.Steps {
		byNode[s.Node] = string(s.Action) + " " + s.Outcome
		if s.Plan == nil || s.Checks == nil {
			t.Errorf("step %s lacks plan or checks: %+v", s.Node, s)
		}
	}
	if byNode["dead"] != "resume refused" && byNode["dead"] != "resume dry-run" {
		t.Errorf("steps = %v, want dead's resume", byNode)
	}
	if byNode["fin"] == "" {
		t.Errorf("steps = %v, want fin's merge", byNode)
	}
	if _, err := os.Stat(filepath.Join(root, ".dispatchtop")); err == nil {
		t.Fatal("recover without --apply wrote the journal")
	}
}
