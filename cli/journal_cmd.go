package cli

// `dispatchtop journal`: the recovery journal of the roots (SPEC §4, §5).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/dispatchtop/dispatchtop/actions"
	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
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
			"since an RFC 3339 TIME. A torn line (a crash mid-append) is skipped; a line over 64 MiB is\n" +
			"skipped and named on stderr. The journals are read a line at a time, never whole.",
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
	// Problems name the lines skipped for their length (SPEC §4).
	Problems []model.Problem `json:"problems,omitempty"`
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
	keep := func(root string, e actions.JournalEntry) bool {
		if e.Time.Before(since) {
			return false
		}
		if node == "" {
			return true
		}
		// The node as its root alone shows it, whatever view recorded the
		// line or showed the id (`.sessions/X` beside `X`).
		want, got := rootLocalID(root, node), rootLocalID(root, e.Node)
		return got == want || strings.HasPrefix(got, want+"/")
	}
	sel := journalSelection{roots: roots, keep: keep}
	var problems []model.Problem
	if asJSON {
		problems, err = writeJournalJSON(g.Stdout, sel)
	} else {
		problems, err = printJournal(g.Stdout, sel)
	}
	for _, p := range problems {
		fmt.Fprintln(g.Stderr, termtext.OneLine("journal: "+p.Path+": "+p.Error, 0))
	}
	return err
}

// rootLocalID is id as a view of root alone shows it: without the root's
// last path segments that a view of several roots (its prefix) or of a
// root further up the same tree puts before it.
func rootLocalID(root, id string) string {
	id = strings.Trim(filepath.ToSlash(id), "/")
	var segs []string
	for _, s := range strings.Split(filepath.ToSlash(filepath.Clean(root)), "/") {
		if s != "" && s != "." {
			segs = append(segs, s)
		}
	}
	for k := len(segs); k >= 1; k-- {
		if rest, ok := strings.CutPrefix(id, strings.Join(segs[len(segs)-k:], "/")+"/"); ok {
			return rest
		}
	}
	return id
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

// printJournal prints the selected lines as a table, its columns as wide
// as their widest cell, as a tabwriter aligns them; every cell is one line
// of terminal text, as agents write into the roots. A journal is read
// twice, a line at a time: once for the widths, once to print; the second
// read ends where the first did, so the lines are the same.
func printJournal(w io.Writer, sel journalSelection) ([]model.Problem, error) {
	withRoot := len(sel.roots) > 1
	header := []string{"TIME", "NODE", "ACTION", "OUTCOME", "BY", "MESSAGE"}
	if withRoot {
		header = []string{"TIME", "ROOT", "NODE", "ACTION", "OUTCOME", "BY", "MESSAGE"}
	}
	widths := make([]int, len(header)-1)
	measure := func(cells []string) {
		for i := range widths {
			widths[i] = max(widths[i], utf8.RuneCountInString(cells[i]))
		}
	}
	measure(header)
	count := 0
	ends, _, err := sel.each(true, nil, func(l journalLine) error {
		count++
		measure(journalCells(l, withRoot))
		return nil
	})
	if err != nil {
		return nil, failure(err)
	}
	if count == 0 {
		// Where it looked: an empty answer names the journals read.
		paths := make([]string, 0, len(sel.roots))
		for _, r := range sel.roots {
			paths = append(paths, actions.JournalPath(r))
		}
		fmt.Fprintln(w, termtext.OneLine("no journal entries in "+strings.Join(paths, ", "), 0))
		return nil, nil
	}
	bw := bufio.NewWriter(w)
	row := func(cells []string) {
		for i, c := range cells[:len(cells)-1] {
			bw.WriteString(c)
			bw.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+journalColumnGap))
		}
		bw.WriteString(cells[len(cells)-1])
		bw.WriteByte('\n')
	}
	row(header)
	_, problems, err := sel.each(true, ends, func(l journalLine) error {
		row(journalCells(l, withRoot))
		return nil
	})
	if ferr := bw.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("write the journal: %w", ferr)
	}
	if err != nil {
		return problems, failure(err)
	}
	return problems, nil
}

// journalColumnGap is the space between two columns of the table.
const journalColumnGap = 2

// journalCells are the table's cells of l, each one line of terminal text.
func journalCells(l journalLine, withRoot bool) []string {
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
	return cells
}

// writeJournalJSON writes the selected lines as journal's --json document,
// the bytes writeJSON would write for it, one entry at a time.
func writeJournalJSON(w io.Writer, sel journalSelection) ([]model.Problem, error) {
	bw := bufio.NewWriter(w)
	head, err := json.MarshalIndent(journalJSON{Schema: report.Schema, Roots: sel.roots, Entries: []journalLine{}}, "", "  ")
	if err != nil {
		return nil, failure(fmt.Errorf("write the JSON: %w", err))
	}
	// The document up to its entries' list, which closes it: `[]\n}`.
	head = bytes.TrimSuffix(head, []byte("[]\n}"))
	bw.Write(head)
	first := true
	_, problems, err := sel.each(false, nil, func(l journalLine) error {
		b, err := json.MarshalIndent(l, "    ", "  ")
		if err != nil {
			return fmt.Errorf("write the JSON: %w", err)
		}
		if first {
			bw.WriteString("[\n    ")
		} else {
			bw.WriteString(",\n    ")
		}
		first = false
		_, err = bw.Write(b)
		return err
	})
	if first {
		bw.WriteString("[]")
	} else {
		bw.WriteString("\n  ]")
	}
	if len(problems) > 0 {
		b, merr := json.MarshalIndent(problems, "  ", "  ")
		if merr != nil && err == nil {
			err = merr
		}
		bw.WriteString(",\n  \"problems\": ")
		bw.Write(b)
	}
	bw.WriteString("\n}\n")
	if ferr := bw.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("write the JSON: %w", ferr)
	}
	if err != nil {
		return problems, failure(err)
	}
	return problems, nil
}

// journalSelection is what `journal` shows: the lines of the roots'
// journals that keep keeps.
type journalSelection struct {
	roots []string
	keep  func(root string, e actions.JournalEntry) bool
}

// each calls fn with every line selected, oldest first across the roots,
// each root's in the order appended, holding one line a root. brief leaves
// out what only the JSON shows. ends, when given, are where each journal's
// read ends (an earlier each's); each returns its own, and the problems
// of the lines skipped for their length.
func (sel journalSelection) each(brief bool, ends []int64, fn func(journalLine) error) ([]int64, []model.Problem, error) {
	readers := make([]*actions.JournalReader, len(sel.roots))
	defer func() {
		for _, r := range readers {
			if r != nil {
				r.Close()
			}
		}
	}()
	heads := make([]*journalLine, len(sel.roots))
	next := func(i int) {
		heads[i] = nil
		for {
			e, ok := readers[i].Next()
			if !ok {
				return
			}
			if sel.keep(sel.roots[i], e) {
				heads[i] = &journalLine{Root: sel.roots[i], JournalEntry: e}
				return
			}
		}
	}
	out := make([]int64, len(sel.roots))
	for i, root := range sel.roots {
		if ends != nil && ends[i] == 0 {
			continue // no journal the first time: none now either
		}
		opts := actions.JournalReadOptions{Brief: brief}
		if ends != nil {
			opts.Until = ends[i]
		}
		r, err := actions.OpenJournal(root, opts)
		if err != nil {
			return nil, nil, err
		}
		readers[i], out[i] = r, r.End()
		next(i)
	}
	for {
		oldest := -1
		for i, h := range heads {
			if h != nil && (oldest < 0 || h.Time.Before(heads[oldest].Time)) {
				oldest = i
			}
		}
		if oldest < 0 {
			break
		}
		if err := fn(*heads[oldest]); err != nil {
			return out, nil, err
		}
		next(oldest)
	}
	var problems []model.Problem
	for _, r := range readers {
		if r == nil {
			continue
		}
		if err := r.Err(); err != nil {
			return out, problems, err
		}
		problems = append(problems, r.Problems()...)
	}
	return out, problems, nil
}
