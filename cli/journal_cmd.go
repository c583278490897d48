package cli

// `dispatchtop journal`: the recovery journal of the roots (SPEC §4, §5).

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dispatchtop/dispatchtop/actions"
	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/report"
	"github.com/dispatchtop/dispatchtop/scanner"
)

func newJournalCmd(g *Globals) *cobra.Command {
	var node, since string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "journal [--node ID] [--since 1h|TIME] [--json] [ROOT...]",
		Short: "Print the recovery journal: every action and refusal, who and when",
		Long: "journal prints the lines every action and refusal appended to <root>/.dispatchtop/journal.jsonl,\n" +
			"oldest first: when, which node, the action, its outcome, who ran it and what came of it.\n" +
			"--node keeps a node and its subtree; --since keeps the lines of the last DURATION or\n" +
			"since an RFC 3339 TIME. A torn line (a crash mid-append) is skipped.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.Roots = append(g.Roots, args...)
			return runJournal(g, journalFilter{node: node, since: since}, asJSON, time.Now())
		},
	}
	cmd.Flags().StringVar(&node, "node", "", "only the lines about node `ID` and its subtree")
	cmd.Flags().StringVar(&since, "since", "", "only the lines since `WHEN`: a duration (1h, 30m) or an RFC 3339 time")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the lines as JSON")
	g.share(cmd, flagRoot)
	return cmd
}

// journalFilter is what --node and --since keep.
type journalFilter struct {
	node  string
	since string
}

// journalLine is one journal entry and the root whose journal holds it.
type journalLine struct {
	Root string `json:"root"`
	actions.JournalEntry
}

// journalJSON is journal's --json document.
type journalJSON struct {
	Schema  string        `json:"schema"`
	Roots   []string      `json:"roots"`
	Entries []journalLine `json:"entries"`
}

func runJournal(g *Globals, f journalFilter, asJSON bool, now time.Time) error {
	since, err := parseSince(f.since, now)
	if err != nil {
		return usageError(err)
	}
	node := strings.TrimSuffix(f.node, "/")
	roots, err := journalRoots(g)
	if err != nil {
		return err
	}
	lines := []journalLine{}
	for _, root := range roots {
		entries, err := actions.ReadJournal(root, "")
		if err != nil {
			return failure(err)
		}
		for _, e := range entries {
			if e.Time.Before(since) || node != "" && e.Node != node && !strings.HasPrefix(e.Node, node+"/") {
				continue
			}
			lines = append(lines, journalLine{Root: root, JournalEntry: e})
		}
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].Time.Before(lines[j].Time) })
	if asJSON {
		return writeJSON(g.Stdout, journalJSON{Schema: report.Schema, Roots: roots, Entries: lines})
	}
	printJournal(g.Stdout, lines, len(roots) > 1)
	return nil
}

// parseSince reads --since: a positive duration back from now, or an RFC
// 3339 time; empty keeps everything.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("--since %s: want a positive duration", s)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--since %q: want a duration such as 1h or an RFC 3339 time such as 2026-11-22T05:00:00Z", s)
	}
	return t, nil
}

// journalRoots are the roots as a scan resolves them (a `KIND:PATH` root is
// read at PATH; a store whose root is a file keeps its journal beside it),
// absolute; one that cannot be read is bad usage.
func journalRoots(g *Globals) ([]string, error) {
	given, err := g.absRoots()
	if err != nil {
		return nil, err
	}
	prepared, problems, err := scanner.PrepareRoots(given, knownSources()...)
	if err != nil {
		return nil, usageError(err)
	}
	if len(problems) > 0 {
		return nil, usageError(fmt.Errorf("%s: %s", problems[0].Path, problems[0].Error))
	}
	roots := make([]string, 0, len(prepared))
	for _, r := range prepared {
		roots = append(roots, r.Path)
	}
	return roots, nil
}

// printJournal prints the lines as a table; every cell is one line of
// terminal text, as agents write into the roots.
func printJournal(w io.Writer, lines []journalLine, withRoot bool) {
	if len(lines) == 0 {
		fmt.Fprintln(w, "no journal entries")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "TIME\tNODE\tACTION\tOUTCOME\tBY\tMESSAGE"
	if withRoot {
		header = "TIME\tROOT\tNODE\tACTION\tOUTCOME\tBY\tMESSAGE"
	}
	fmt.Fprintln(tw, header)
	for _, l := range lines {
		msg := l.Message
		if l.Force {
			msg += " (forced past the retry budget)"
		}
		cells := []string{l.Time.Local().Format("2006-01-02 15:04:05"), l.Node, string(l.Action), l.Outcome, l.User + "@" + l.Host, msg}
		if withRoot {
			cells = append(cells[:1], append([]string{l.Root}, cells[1:]...)...)
		}
		for i, c := range cells {
			cells[i] = termtext.OneLine(c, 0)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
}
