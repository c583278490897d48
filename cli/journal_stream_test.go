package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/dispatchtop/dispatchtop/actions"
	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
)

// appendJournalLines appends one line per node to root's journal, the
// i-th at times[i], its message naming both.
func appendJournalLines(t *testing.T, root string, nodes []string, times []time.Time) {
	t.Helper()
	p := actions.JournalPath(root)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i, node := range nodes {
		b, err := json.Marshal(actions.JournalEntry{Time: times[i], User: "ops", Host: "box-" + node, Action: model.ActionResume,
			Node: node, Checks: []string{"state dead"}, Outcome: "done", Message: fmt.Sprintf("resumed %s ünïcode", node), Force: i%2 == 0,
			Removed: []string{`{"heartbeat": "x"}`}, By: 42})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
}

// referenceJournal is what `journal` printed when it read every journal
// whole: every entry kept, sorted by time (stably), printed through a
// tabwriter, or as one JSON document.
func referenceJournal(t *testing.T, roots []string, asJSON bool) string {
	t.Helper()
	lines := []journalLine{}
	for _, root := range roots {
		entries, err := actions.ReadJournal(root, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			lines = append(lines, journalLine{Root: root, JournalEntry: e})
		}
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].Time.Before(lines[j].Time) })
	var buf bytes.Buffer
	if asJSON {
		if err := writeJSON(&buf, journalJSON{Schema: report.Schema, Roots: roots, Entries: lines}); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	if len(lines) == 0 {
		paths := make([]string, 0, len(roots))
		for _, r := range roots {
			paths = append(paths, actions.JournalPath(r))
		}
		return "no journal entries in " + strings.Join(paths, ", ") + "\n"
	}
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	header := "TIME\tNODE\tACTION\tOUTCOME\tBY\tMESSAGE"
	if len(roots) > 1 {
		header = "TIME\tROOT\tNODE\tACTION\tOUTCOME\tBY\tMESSAGE"
	}
	fmt.Fprintln(tw, header)
	for _, l := range lines {
		msg := l.Message
		if l.Force {
			msg += " (forced past the retry budget)"
		}
		cells := []string{l.Time.Local().Format("2006-01-02 15:04:05"), l.Node, string(l.Action), l.Outcome, l.User + "@" + l.Host, msg}
		if len(roots) > 1 {
			cells = append(cells[:1], append([]string{l.Root}, cells[1:]...)...)
		}
		for i, c := range cells {
			cells[i] = termtext.OneLine(c, 0)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	return buf.String()
}

// SPEC §4, §8: `journal` reads its journals a line at a time, and prints
// what it printed when it read them whole: the table aligned over every
// line, the JSON document byte for byte, the roots' lines merged oldest
// first.
func TestJournalCommandStreamsWhatItPrintedWhole(t *testing.T) {
	base := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
	at := func(mins ...int) []time.Time {
		var ts []time.Time
		for _, m := range mins {
			ts = append(ts, base.Add(time.Duration(m)*time.Minute))
		}
		return ts
	}
	one, two, empty := t.TempDir(), t.TempDir(), t.TempDir()
	appendJournalLines(t, one, []string{"A", "a-much-longer-node/id/below", "B"}, at(1, 3, 5))
	appendJournalLines(t, two, []string{"C", "D", "E", "F"}, at(2, 3, 4, 9))
	tests := []struct {
		name  string
		roots []string
	}{
		{"one root", []string{one}},
		{"two roots, interleaved", []string{one, two}},
		{"a root without a journal among them", []string{two, empty, one}},
		{"no journal at all", []string{empty}},
	}
	for _, tc := range tests {
		for _, asJSON := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, json %v", tc.name, asJSON), func(t *testing.T) {
				args := []string{"journal"}
				if asJSON {
					args = append(args, "--json")
				}
				stdout, stderr, code := execute(t, append(args, tc.roots...)...)
				if code != ExitOK || stderr != "" {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				if want := referenceJournal(t, tc.roots, asJSON); stdout != want {
					t.Errorf("journal printed\n%s\nwant\n%s", stdout, want)
				}
			})
		}
	}
}

// SPEC §4: a journal line over the reader's cap (64 MiB) is skipped with
// a problem line naming it, on stderr and in the JSON's problems; the
// lines around it are printed and the command succeeds.
func TestJournalCommandSkipsALineOverTheCap(t *testing.T) {
	root := t.TempDir()
	now := time.Now().UTC().Truncate(time.Second)
	appendJournalLines(t, root, []string{"before"}, []time.Time{now.Add(-2 * time.Minute)})
	big, err := json.Marshal(actions.JournalEntry{Time: now.Add(-time.Minute), Node: "big", Action: model.ActionCompact, Outcome: "done",
		Removed: []string{strings.Repeat("x", actions.MaxJournalLine)}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(actions.JournalPath(root), os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(append(big, '\n')); err != nil {
		t.Fatal(err)
	}
	f.Close()
	big = nil
	appendJournalLines(t, root, []string{"after"}, []time.Time{now})

	for _, asJSON := range []bool{false, true} {
		t.Run(fmt.Sprintf("json %v", asJSON), func(t *testing.T) {
			args := []string{"journal", root}
			if asJSON {
				args = []string{"journal", "--json", root}
			}
			stdout, stderr, code := execute(t, args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "resumed before") || !strings.Contains(stdout, "resumed after") || strings.Contains(stdout, `"big"`) {
				t.Errorf("stdout lacks the lines around the long one:\n%.2000s", stdout)
			}
			if !strings.Contains(stderr, actions.JournalPath(root)) || !strings.Contains(stderr, "line 2 ") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q, want one line naming line 2 of %s", stderr, actions.JournalPath(root))
			}
			if asJSON {
				var doc journalJSON
				if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
					t.Fatalf("stdout is not JSON: %v", err)
				}
				if len(doc.Entries) != 2 || len(doc.Problems) != 1 || !strings.Contains(doc.Problems[0].Error, "line 2 ") {
					t.Errorf("document: %d entries, problems %v: want 2 entries and line 2 named", len(doc.Entries), doc.Problems)
				}
			}
		})
	}
}
