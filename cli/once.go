package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// runOnce prints one snapshot and maps --fail-on to the exit code.
func runOnce(ctx context.Context, g *Globals, asJSON bool) error {
	match, err := parseFailOn(g.FailOn)
	if err != nil {
		return usageError(err)
	}
	opts, err := g.ScanOptions()
	if err != nil {
		return err
	}
	snap, err := scanner.Scan(opts)
	if err != nil {
		return usageError(err)
	}
	if asJSON {
		err = report.WriteJSON(g.Stdout, snap)
	} else {
		err = report.WriteText(g.Stdout, snap, textPainter(g))
	}
	if err != nil {
		return failure(fmt.Errorf("write the snapshot: %w", err))
	}
	if n := countMatching(snap, match); n > 0 {
		return failure(fmt.Errorf("%d node(s) match --fail-on %s", n, g.FailOn))
	}
	return nil
}

// failOn is the set of states and flags that fail a --once run.
type failOn struct {
	states map[model.State]bool
	flags  map[model.Flag]bool
}

// parseFailOn reads a comma-separated list of states and flags; an unknown
// name is a usage error, an empty list fails on nothing.
func parseFailOn(list string) (failOn, error) {
	m := failOn{states: map[model.State]bool{}, flags: map[model.Flag]bool{}}
	known := func(name string) bool {
		if s := model.State(name); slices.Contains(model.States, s) {
			m.states[s] = true
			return true
		}
		if f := model.Flag(name); slices.Contains(model.Flags, f) {
			m.flags[f] = true
			return true
		}
		return false
	}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" || name == "none" {
			continue
		}
		if !known(name) {
			return m, fmt.Errorf("--fail-on: unknown state or flag %q (states: %s; flags: %s)",
				name, joinNames(model.States), joinNames(model.Flags))
		}
	}
	return m, nil
}

func joinNames[T ~string](names []T) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = string(n)
	}
	return strings.Join(parts, ", ")
}

func countMatching(snap *model.Snapshot, m failOn) int {
	count := 0
	for _, s := range snap.Sessions {
		s.Walk(func(n *model.Node) {
			if m.states[n.State] {
				count++
				return
			}
			for _, f := range n.Flags {
				if m.flags[f] {
					count++
					return
				}
			}
		})
	}
	return count
}

// textPainter colours the text tree only on a terminal and never under NO_COLOR.
func textPainter(g *Globals) report.Painter {
	f, ok := g.Stdout.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) || os.Getenv("NO_COLOR") != "" {
		return nil
	}
	return statePainter()
}
