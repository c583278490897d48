package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// runOnce prints one snapshot and maps --fail-on to the exit code. Roots
// that hold no tree at all are bad usage unless allowEmpty: a CI job run
// from the wrong directory must not pass on an empty forest. So is a root
// that is missing or cannot be read, unless allowMissing: a typo in a CI
// job must fail it (SPEC §4).
func runOnce(ctx context.Context, g *Globals, asJSON, allowEmpty, allowMissing bool) error {
	match, err := parseFailOn(g.FailOn)
	if err != nil {
		return usageError(err)
	}
	opts, err := g.ScanOptions()
	if err != nil {
		return err
	}
	opts.OmitRaw = true // a report shows no file's bytes
	// A root given must be read; the default roots are only those found,
	// and a store among them that cannot be read is a problem of the run.
	opts.EveryRoot = !allowMissing && len(g.Roots) > 0
	defer holdCollection(onceLargeHeap)()
	snap, err := scanner.Scan(opts)
	var unread *scanner.UnreadRootsError
	if errors.As(err, &unread) && !unread.None {
		return usageError(fmt.Errorf("%w (--allow-missing reads the others)", err))
	}
	if err != nil {
		return usageError(err)
	}
	if len(snap.Sessions) == 0 && !allowEmpty {
		return usageError(fmt.Errorf("no tree found under %s: looked for %s (--allow-empty accepts an empty forest)",
			strings.Join(snap.Roots, ", "), layoutsLookedFor))
	}
	return answerOnce(g, snap, asJSON, match)
}

// layoutsLookedFor names what discovery takes for a tree (SPEC §1).
const layoutsLookedFor = ".sessions/<ts>/.heartbeat, .teaparty/jobs/job-<id>--<slug>/.heartbeat, or any directory holding .heartbeat or .running"

// defaultFailOn fails a --once run on the dead nodes nobody is recovering
// (to resume, to surface, or waiting for an answer no process will read)
// and on kill candidates; a dead worker whose running lead recovers it
// (action wait) passes, and so does dead work waiting for its merge.
const defaultFailOn = "dead+action:resume,dead+action:surface,dead+action:answer,kill_candidate"

// failOn is a parsed --fail-on: a node matches when every atom of any one
// term holds for it.
type failOn [][]failAtom

// failAtom is one condition on a node: its state, one of its flags, or its
// recommended action.
type failAtom struct {
	kind string // "state", "flag" or "action"
	name string
}

func (a failAtom) holds(n *model.Node) bool {
	switch a.kind {
	case "state":
		return string(n.State) == a.name
	case "flag":
		return n.HasFlag(model.Flag(a.name))
	default:
		return string(n.Action) == a.name
	}
}

func (f failOn) matches(n *model.Node) bool {
	for _, term := range f {
		all := true
		for _, a := range term {
			all = all && a.holds(n)
		}
		if all {
			return true
		}
	}
	return false
}

// parseFailOn reads --fail-on (SPEC §4): comma-separated terms, each atoms
// joined by "+"; an atom is a state or a flag, or state:NAME, flag:NAME or
// action:NAME. An unknown name is a usage error that lists the known ones;
// an empty list or "none" fails on nothing.
func parseFailOn(list string) (failOn, error) {
	var m failOn
	for _, term := range strings.Split(list, ",") {
		if t := strings.TrimSpace(term); t == "" || t == "none" {
			continue
		}
		var atoms []failAtom
		for _, word := range strings.Split(term, "+") {
			a, err := parseFailAtom(strings.TrimSpace(word))
			if err != nil {
				return nil, fmt.Errorf("--fail-on: %w (states: %s; flags: %s; actions: %s)", err,
					joinNames(model.States), joinNames(model.Flags), strings.Join(actionAtoms(), ", "))
			}
			atoms = append(atoms, a)
		}
		m = append(m, atoms)
	}
	return m, nil
}

func parseFailAtom(word string) (failAtom, error) {
	kind, name, prefixed := strings.Cut(word, ":")
	if !prefixed {
		kind, name = "", word
	}
	if name == "" {
		return failAtom{}, fmt.Errorf("empty name in %q", word)
	}
	isState := slices.Contains(model.States, model.State(name))
	isFlag := slices.Contains(model.Flags, model.Flag(name))
	isAction := slices.Contains(model.Actions, model.Action(name))
	switch {
	case kind == "" && isState, kind == "state" && isState:
		return failAtom{"state", name}, nil
	case kind == "" && isFlag, kind == "flag" && isFlag:
		return failAtom{"flag", name}, nil
	case kind == "action" && isAction:
		return failAtom{"action", name}, nil
	case kind == "" && isAction:
		return failAtom{}, fmt.Errorf("%q is an action: write action:%s", name, name)
	case kind == "":
		return failAtom{}, fmt.Errorf("unknown state or flag %q", name)
	case kind == "state" || kind == "flag" || kind == "action":
		return failAtom{}, fmt.Errorf("unknown %s %q", kind, name)
	}
	return failAtom{}, fmt.Errorf("unknown kind %q in %q (state:, flag: or action:)", kind, word)
}

// actionAtoms are the action names as --fail-on takes them.
func actionAtoms() []string {
	out := make([]string, len(model.Actions))
	for i, a := range model.Actions {
		out[i] = "action:" + string(a)
	}
	return out
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
			if m.matches(n) {
				count++
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

// answerOnce prints a one-shot snapshot (JSON or text), writes its
// metrics file when asked, and fails when --fail-on matches a node: what
// `--once` answers, of local roots and of a fleet alike.
func answerOnce(g *Globals, snap *model.Snapshot, asJSON bool, match failOn) error {
	var err error
	if asJSON {
		err = report.WriteJSON(g.Stdout, snap)
	} else {
		err = report.WriteText(g.Stdout, snap, textPainter(g))
	}
	if err != nil {
		return failure(fmt.Errorf("write the snapshot: %w", err))
	}
	if err := writeMetricsFile(g.Metrics, snap, 0); err != nil {
		return failure(err)
	}
	if n := countMatching(snap, match); n > 0 {
		return failure(fmt.Errorf("%d node(s) match --fail-on %s", n, g.FailOn))
	}
	return nil
}
