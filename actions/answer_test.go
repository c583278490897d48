package actions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// SPEC §6 Answer: an answer goes where the node's system reads it (the
// native protocol: answer.md beside the sentinel), whole, and the journal
// records it; a node of another source, an empty answer or a node not
// blocked are refused and nothing is written.
func TestAnswerWritesTheReplyFileAndJournalsIt(t *testing.T) {
	blocked := func(t *testing.T, source string) *model.Node {
		root := t.TempDir()
		infra := filepath.Join(root, "s", "review")
		if err := os.MkdirAll(infra, 0o755); err != nil {
			t.Fatal(err)
		}
		return &model.Node{ID: "s/review", Root: root, InfraDir: infra, Source: source,
			Blocked: &model.Blocked{Path: filepath.Join(infra, "blocked.json"), Question: "Ship the parser?"}}
	}
	t.Run("native", func(t *testing.T) {
		n := blocked(t, "")
		path, err := Answer(n, "  yes, ship it\n", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(n.InfraDir, protocol.AnswerFile); path != want {
			t.Errorf("wrote %s, want %s", path, want)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != "yes, ship it\n" {
			t.Errorf("answer.md = %q, %v", b, err)
		}
		entries, err := ReadJournal(n.Root, n.ID)
		if err != nil || len(entries) != 1 || entries[0].Action != model.ActionAnswer || entries[0].Outcome != "done" ||
			!strings.Contains(entries[0].Message, path) {
			t.Errorf("journal %+v, %v; want one answer line naming %s", entries, err, path)
		}
	})
	for _, tc := range []struct {
		name, source, text, want string
	}{
		{name: "another source", source: "teaparty", text: "yes", want: "its own channel"},
		{name: "an empty answer", source: "", text: " \n ", want: "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := blocked(t, tc.source)
			if _, err := Answer(n, tc.text, time.Now()); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(n.InfraDir, protocol.AnswerFile)); err == nil {
				t.Error("an answer was written")
			}
			if _, err := os.Stat(JournalPath(n.Root)); err == nil {
				t.Error("a refusal was journaled as an answer")
			}
		})
	}
}
