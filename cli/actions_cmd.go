package cli

// The action subcommands: kill, resume, compact, merge and recover, all
// through the one recovery engine (SPEC §4, §5).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dispatchtop/dispatchtop/actions"
	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
)

// newEngine builds the recovery engine from the shared flags and config.
// acts says the command may carry an action out; without it (recover's
// plan) the config is read wherever it lies, and the engine still refuses
// every step that would run it from inside a root. journaled, when set, is
// handed every journal line the engine writes.
func newEngine(g *Globals, acts bool, journaled func(actions.JournalEntry)) (*actions.Engine, error) {
	g.acts = acts
	opts, err := g.ScanOptions()
	if err != nil {
		return nil, err
	}
	cfg, path, err := g.Config()
	if err != nil {
		return nil, err
	}
	return actions.New(actions.EngineOptions{
		Scan: opts, Config: cfg, ConfigPath: path, Readonly: g.Readonly, Journaled: journaled,
	}), nil
}

// runAction runs one request and reports it: the plan and the outcome on
// stdout (with asJSON, the outcome's journal line), a refusal or failure as
// one line on stderr (exit 1).
func runAction(cmd *cobra.Command, g *Globals, req actions.Request, asJSON bool) error {
	var journaled []actions.JournalEntry
	e, err := newEngine(g, true, func(j actions.JournalEntry) { journaled = append(journaled, j) })
	if err != nil {
		return err
	}
	res, err := e.Run(cmd.Context(), req)
	what := string(req.Action)
	if res.NodeID != "" {
		what += " " + res.NodeID
	} else if req.Node != "" {
		what += " " + req.Node
	}
	var scan *actions.ScanError
	if asJSON && !errors.As(err, &scan) {
		if res.Outcome == "" && err != nil {
			res.Outcome, res.Message = actions.OutcomeFailed, err.Error()
		}
		doc := actionJSON{Schema: report.Schema, stepJSON: newStepJSON(e.Entry(req, res), res), Journaled: journaled}
		if doc.Journaled == nil {
			doc.Journaled = []actions.JournalEntry{}
		}
		if werr := writeJSON(g.Stdout, doc); werr != nil {
			return failure(werr)
		}
	}
	if !asJSON && (req.DryRun || res.Outcome == actions.OutcomeDone) {
		for _, line := range res.Plan {
			// Line, not OneLine: a plan's steps keep their indentation.
			fmt.Fprintln(g.Stdout, "  "+termtext.Line(line))
		}
	}
	// The engine's errors never name the action and node (its Result
	// does): they are said here, once.
	switch {
	case err != nil:
		return actionError(fmt.Errorf("%s: %w", what, err))
	case res.Refused:
		return failure(fmt.Errorf("%s refused: %s", what, res.Message))
	}
	if !asJSON {
		fmt.Fprintln(g.Stdout, termtext.OneLine(res.Message, 0))
	}
	return nil
}

// stepJSON is one outcome under --json (SPEC §4.1): its journal line, and
// whether it was refused and its plan, which the line does not hold.
type stepJSON struct {
	actions.JournalEntry
	Refused bool     `json:"refused"`
	Plan    []string `json:"plan"`
}

func newStepJSON(entry actions.JournalEntry, res actions.Result) stepJSON {
	plan := res.Plan
	if plan == nil {
		plan = []string{}
	}
	return stepJSON{JournalEntry: entry, Refused: res.Refused, Plan: plan}
}

// actionJSON is an action's --json document: its outcome, and every line
// it appended to the journal (kill --tree and compact --all append one a
// node; a dry run none).
type actionJSON struct {
	Schema string `json:"schema"`
	stepJSON
	Journaled []actions.JournalEntry `json:"journaled"`
}

// recoverJSON is recover's --json document: the plan, or its outcome.
type recoverJSON struct {
	Schema  string     `json:"schema"`
	Applied bool       `json:"applied"`
	Steps   []stepJSON `json:"steps"`
}

// writeJSON writes v indented, with a trailing newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write the JSON: %w", err)
	}
	return nil
}

// actionError is the exit of an action that could not run or failed: bad
// usage when the roots could not be read at all (SPEC §4), else a failure.
func actionError(err error) error {
	var scan *actions.ScanError
	if errors.As(err, &scan) {
		return usageError(err)
	}
	return failure(err)
}

// jsonUsage is what --json does on an action.
const jsonUsage = "print the outcome as JSON: its journal line, the plan, and the lines journaled"

// exactlyOneNode is cobra's argument check with a usage message of ours.
func exactlyOneNode(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usageError(fmt.Errorf("%s needs exactly one NODE (a node id, an infra dir or a .heartbeat path), got %d", cmd.Name(), len(args)))
	}
	return nil
}

func newKillCmd(g *Globals) *cobra.Command {
	var tree, dryRun bool
	var grace time.Duration
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "kill [--tree] [--grace 10s] [--dry-run] [--json] NODE",
		Short: "End a running node's process and its descendants",
		Long: "kill re-reads NODE, checks it is running and that its pid is still the process its\n" +
			"heartbeat names, then sends SIGTERM to it and its descendants, waits --grace and sends\n" +
			"SIGKILL to the survivors. --tree kills every running node below it first, bottom-up.\n" +
			"The heartbeat is left as it is: the node turns dead (and resumable) on its own.",
		Args:              exactlyOneNode,
		ValidArgsFunction: completeNodes(g, killable),
		RunE: func(cmd *cobra.Command, args []string) error {
			if grace <= 0 {
				return usageError(fmt.Errorf("--grace must be positive, got %s", grace))
			}
			return runAction(cmd, g, actions.Request{Action: model.ActionKill, Node: args[0], Tree: tree, Grace: grace, DryRun: dryRun}, asJSON)
		},
	}
	cmd.Flags().BoolVar(&tree, "tree", false, "also kill every running node below NODE, bottom-up")
	cmd.Flags().DurationVar(&grace, "grace", actions.DefaultGrace, "time between SIGTERM and SIGKILL")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be done and change nothing")
	cmd.Flags().BoolVar(&asJSON, "json", false, jsonUsage)
	g.share(cmd, scanFlags...)
	g.share(cmd, flagReadonly)
	return cmd
}

func newResumeCmd(g *Globals) *cobra.Command {
	var force, dryRun bool
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "resume [--force] [--dry-run] [--json] NODE",
		Short: "Re-dispatch a dead node with the configured resume command",
		Long: "resume re-reads NODE, checks it is dead, its CfA state is not a terminal failure, its\n" +
			"retry budget is not spent (3 per CfA state, 9 per node) and no resume is pending, then\n" +
			"bumps .retry-count and starts resume.argv from the config, detached, with its output in\n" +
			"<infra>/.resume.log. --force overrides the budget, and only the budget.",
		Args:              exactlyOneNode,
		ValidArgsFunction: completeNodes(g, resumable),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAction(cmd, g, actions.Request{Action: model.ActionResume, Node: args[0], Force: force, DryRun: dryRun}, asJSON)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "resume even when the retry budget is spent")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be done and change nothing")
	cmd.Flags().BoolVar(&asJSON, "json", false, jsonUsage)
	g.share(cmd, scanFlags...)
	g.share(cmd, flagReadonly)
	return cmd
}

func newCompactCmd(g *Globals) *cobra.Command {
	var all, dryRun bool
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "compact [--dry-run] [--json] NODE | --all",
		Short: "Drop finished and never-started entries from a node's .children",
		Long: "compact rewrites NODE's .children without the entries whose heartbeat is terminal and\n" +
			"the registrations that never started (no heartbeat, no infra dir, older than --stale or\n" +
			"under a node that is not running). Every other byte stays; appends made meanwhile are\n" +
			"kept. The removed lines go to the journal verbatim. --all compacts every registry.",
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case all && len(args) > 0:
				return usageError(errors.New("compact takes a NODE or --all, not both"))
			case !all && len(args) != 1:
				return usageError(errors.New("compact needs exactly one NODE, or --all"))
			}
			return nil
		},
		ValidArgsFunction: completeNodes(g, compactable),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := actions.Request{Action: model.ActionCompact, All: all, DryRun: dryRun}
			if !all {
				req.Node = args[0]
			}
			return runAction(cmd, g, req, asJSON)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "compact every registry under the roots")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be done and change nothing")
	cmd.Flags().BoolVar(&asJSON, "json", false, jsonUsage)
	g.share(cmd, scanFlags...)
	g.share(cmd, flagReadonly)
	return cmd
}

func newMergeCmd(g *Globals) *cobra.Command {
	var dryRun bool
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "merge [--dry-run] [--json] NODE",
		Short: "Run the configured merge command for a node whose work succeeded",
		Long: "merge re-reads NODE, checks its CfA state is a terminal success (or its heartbeat says\n" +
			"completed) and its parent is not running, runs merge.argv from the config and waits for\n" +
			"it (output in <infra>/.merge.log), then writes <infra>/.merged.",
		Args:              exactlyOneNode,
		ValidArgsFunction: completeNodes(g, mergeable),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAction(cmd, g, actions.Request{Action: model.ActionMerge, Node: args[0], DryRun: dryRun}, asJSON)
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be done and change nothing")
	cmd.Flags().BoolVar(&asJSON, "json", false, jsonUsage)
	g.share(cmd, scanFlags...)
	g.share(cmd, flagReadonly)
	return cmd
}

func newRecoverCmd(g *Globals) *cobra.Command {
	var apply, killStalled, asJSON, allowEmpty bool
	cmd := &cobra.Command{
		Use:   "recover [--apply] [--kill-stalled] [--json] [--allow-empty] [ROOT...]",
		Short: "The recovery scan: print the plan; --apply carries it out",
		Long: "recover lists every node's recommended action (merge, resume, compact, kill; answer\n" +
			"and surface need a person) as a dry run. --apply carries out merge, resume and compact,\n" +
			"each re-checked at execution; kill only with --kill-stalled.",
		RunE: func(cmd *cobra.Command, args []string) error {
			g.Roots = append(g.Roots, args...)
			e, err := newEngine(g, apply, nil)
			if err != nil {
				return err
			}
			results, err := e.Recover(cmd.Context(), apply, killStalled)
			if noTree := (*actions.NoTreeError)(nil); errors.As(err, &noTree) {
				if !allowEmpty {
					return usageError(fmt.Errorf("%w: looked for %s (--allow-empty accepts an empty forest)", noTree, layoutsLookedFor))
				}
				err = nil
			}
			switch {
			case err != nil && len(results) == 0:
			case asJSON:
				doc := recoverJSON{Schema: report.Schema, Applied: apply, Steps: []stepJSON{}}
				for _, r := range results {
					doc.Steps = append(doc.Steps, newStepJSON(e.Entry(actions.Request{Action: r.Action}, r), r))
				}
				if werr := writeJSON(g.Stdout, doc); werr != nil {
					return failure(werr)
				}
			default:
				printRecover(g.Stdout, results, apply)
			}
			if err != nil {
				return actionError(fmt.Errorf("recover: %w", err))
			}
			if !apply {
				return nil
			}
			bad := 0
			for _, r := range results {
				if r.Refused || r.Outcome == actions.OutcomeFailed {
					bad++
				}
			}
			if bad > 0 {
				return failure(fmt.Errorf("recover: %d of %d step(s) refused or failed", bad, len(results)))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&apply, "apply", false, "carry out the plan (merge, resume, compact)")
	cmd.Flags().BoolVar(&killStalled, "kill-stalled", false, "with --apply, also kill the kill candidates")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the plan (with --apply, the outcome) as JSON: one journal line a step")
	cmd.Flags().BoolVar(&allowEmpty, "allow-empty", false, "roots that hold no tree are no error")
	g.share(cmd, scanFlags...)
	g.share(cmd, flagReadonly)
	return cmd
}

// printRecover prints the plan or its outcome as a table.
func printRecover(w io.Writer, results []actions.Result, applied bool) {
	if len(results) == 0 {
		fmt.Fprintln(w, "nothing to recover")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tACTION\tOUTCOME\tMESSAGE")
	for _, r := range results {
		// Every cell is one line without tabs or escapes: the columns hold.
		cells := []string{r.NodeID, string(r.Action), r.Outcome, r.Message}
		for i, c := range cells {
			cells[i] = termtext.OneLine(c, 0)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	if !applied {
		fmt.Fprintln(w, "dry run: nothing was changed; --apply carries out merge, resume and compact (kill with --kill-stalled)")
	}
}
