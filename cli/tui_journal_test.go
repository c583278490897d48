package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §6, §8: the details pane shows a node's newest journal entries, at
// most paneJournalEntries of them, oldest first, and says how many older
// ones it leaves out: a journal of any length costs the pane that much.
func TestTheDetailsPaneReadsTheNewestEntriesOfItsNode(t *testing.T) {
	base := time.Now().UTC().Add(-time.Hour)
	tests := []struct {
		name      string
		entries   int // about the node, between as many about another
		wantFirst string
		wantLines int
	}{
		{"none", 0, "", 0},
		{"fewer than the pane shows", 3, "resumed n ", 3},
		{"as many as the pane shows", paneJournalEntries, "resumed n ", paneJournalEntries},
		{"more than the pane shows", paneJournalEntries + 50, "(50 older entries not shown)", paneJournalEntries + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			var nodes []string
			var times []time.Time
			for i := 0; i < tc.entries; i++ {
				nodes = append(nodes, "n", "other")
				times = append(times, base.Add(time.Duration(2*i)*time.Second), base.Add(time.Duration(2*i+1)*time.Second))
			}
			appendJournalLines(t, root, nodes, times)
			lines, err := readNodeJournal(context.Background(), &model.Node{Root: root, ID: "n"})
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) != tc.wantLines {
				t.Fatalf("%d lines, want %d", len(lines), tc.wantLines)
			}
			if tc.wantLines == 0 {
				return
			}
			if !strings.Contains(lines[0], tc.wantFirst) {
				t.Errorf("first line %q, want %q", lines[0], tc.wantFirst)
			}
			// The newest entry last, and every line the node's.
			last := times[len(times)-2].Local().Format("2006-01-02 15:04:05")
			if !strings.HasPrefix(lines[len(lines)-1], last) {
				t.Errorf("last line %q, want the newest entry, at %s", lines[len(lines)-1], last)
			}
			for _, l := range lines {
				if strings.Contains(l, "box-other") {
					t.Fatalf("a line about another node: %q", l)
				}
			}
		})
	}
}
