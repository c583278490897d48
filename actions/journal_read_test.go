package actions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// journalLine is one journal line about node, its message msg.
func journalLine(t *testing.T, node, msg string) string {
	t.Helper()
	b, err := json.Marshal(JournalEntry{Time: time.Now().UTC(), User: "ops", Host: "box", Action: model.ActionKill,
		Node: node, Checks: []string{"state running"}, Outcome: OutcomeDone, Message: msg, By: 1})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// writeJournal writes body as root's journal.
func writeJournal(t *testing.T, root, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(JournalPath(root)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(JournalPath(root), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// SPEC §4, §8: a journal is read a line at a time; a line longer than the
// reader's cap is skipped with a problem naming the journal and the line,
// and the lines after it are read; a line under the cap is read whole,
// however many buffers it spans; torn lines are skipped silently, as a
// crash leaves them.
func TestJournalReaderSkipsALineOverItsCap(t *testing.T) {
	const maxLine = 200 << 10 // over the reader's buffer: a long line spans several
	long := func(node string, n int) string { return journalLine(t, node, strings.Repeat("x", n)) }
	tests := []struct {
		name     string
		body     string
		nodes    []string
		problems []string // "line N" of each problem
	}{
		{"usual lines", journalLine(t, "a", "m") + "\n" + journalLine(t, "b", "m") + "\n", []string{"a", "b"}, nil},
		{"a line under the cap spanning buffers", long("a", maxLine-1000) + "\n" + journalLine(t, "b", "m") + "\n", []string{"a", "b"}, nil},
		{"a line over the cap between two", journalLine(t, "a", "m") + "\n" + long("big", maxLine) + "\n" + journalLine(t, "b", "m") + "\n",
			[]string{"a", "b"}, []string{"line 2 "}},
		{"a line over the cap at the end, unterminated", journalLine(t, "a", "m") + "\n" + long("big", maxLine),
			[]string{"a"}, []string{"line 2 "}},
		{"two lines over the cap", long("big", maxLine) + "\n" + long("big", 2*maxLine) + "\n" + journalLine(t, "b", "m") + "\n",
			[]string{"b"}, []string{"line 1 ", "line 2 "}},
		{"a torn line and blank lines", journalLine(t, "a", "m") + "\n\n" + `{"time": "2026-11-22T05:00:00Z", "no` + "\n" + journalLine(t, "b", "m"),
			[]string{"a", "b"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeJournal(t, root, tc.body)
			jr, err := OpenJournal(root, JournalReadOptions{MaxLine: maxLine})
			if err != nil {
				t.Fatal(err)
			}
			defer jr.Close()
			var nodes []string
			for {
				j, ok := jr.Next()
				if !ok {
					break
				}
				nodes = append(nodes, j.Node)
			}
			if jr.Err() != nil {
				t.Fatalf("read: %v", jr.Err())
			}
			if strings.Join(nodes, " ") != strings.Join(tc.nodes, " ") {
				t.Errorf("entries of %v, want %v", nodes, tc.nodes)
			}
			probs := jr.Problems()
			if len(probs) != len(tc.problems) {
				t.Fatalf("problems %v, want %d", probs, len(tc.problems))
			}
			for i, want := range tc.problems {
				if probs[i].Path != JournalPath(root) || !strings.Contains(probs[i].Error, want) || !strings.Contains(probs[i].Error, "skipped") {
					t.Errorf("problem %+v, want it to name %s and %q skipped", probs[i], JournalPath(root), want)
				}
			}
		})
	}
}

// SPEC §4: a line over the cap the journal is read with (64 MiB) does not
// fail the read: the lines before and after it are returned, and the
// error names the line skipped.
func TestReadJournalPassesOverALineOverTheCap(t *testing.T) {
	root := t.TempDir()
	writeJournal(t, root, journalLine(t, "a", "m")+"\n"+journalLine(t, "big", strings.Repeat("x", MaxJournalLine))+"\n"+journalLine(t, "b", "m")+"\n")
	entries, err := ReadJournal(root, "")
	if len(entries) != 2 || entries[0].Node != "a" || entries[1].Node != "b" {
		t.Fatalf("entries %d, want a and b around the long line (%v)", len(entries), err)
	}
	if err == nil || !strings.Contains(err.Error(), "line 2 ") {
		t.Fatalf("error %v, want it to name line 2", err)
	}
}

// SPEC §4: a reader of one node's lines returns those only, its id matched
// whole (a sibling sharing its prefix, or a message quoting it, is not it).
func TestJournalReaderOfOneNode(t *testing.T) {
	root := t.TempDir()
	writeJournal(t, root, journalLine(t, "A", "m")+"\n"+journalLine(t, "AB", "m")+"\n"+journalLine(t, "B", `about "A"`)+"\n"+journalLine(t, "A", "n")+"\n")
	jr, err := OpenJournal(root, JournalReadOptions{Node: "A", Brief: true})
	if err != nil {
		t.Fatal(err)
	}
	defer jr.Close()
	var msgs []string
	for {
		j, ok := jr.Next()
		if !ok {
			break
		}
		if j.Node != "A" || j.Checks != nil {
			t.Errorf("entry %+v: want node A, no checks (brief)", j)
		}
		msgs = append(msgs, j.Message)
	}
	if strings.Join(msgs, " ") != "m n" {
		t.Errorf("messages %q, want m n", msgs)
	}
}
