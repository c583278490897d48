package cli

// Shell completion (SPEC §4): NODE completes to the nodes a command can act
// on, and the values of --fail-on and --theme complete.

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/themes"
)

// actable says whether the command, with the flags it was given so far,
// can act on n. It is advice for completion; the engine re-checks.
type actable func(cmd *cobra.Command, n *model.Node) bool

func killable(_ *cobra.Command, n *model.Node) bool { return n.State == model.StateRunning }

// resumable is a dead node with retries left; with --force, any dead node.
// Either needs an infra dir to resume in.
func resumable(cmd *cobra.Command, n *model.Node) bool {
	if n.State != model.StateDead || n.InfraDir == "" {
		return false
	}
	if force, _ := cmd.Flags().GetBool("force"); force {
		return true
	}
	_, left := liveness.RetriesLeft(n)
	return left > 0
}

// compactable is a node with a registry; compact --all takes no node.
func compactable(cmd *cobra.Command, n *model.Node) bool {
	if all, _ := cmd.Flags().GetBool("all"); all {
		return false
	}
	return n.HasRegistry
}

// mergeable is a node merge would accept (SPEC §5.4): its work succeeded,
// it is not running nor is its parent, it is not merged yet, and it has an
// infra dir to merge.
func mergeable(_ *cobra.Command, n *model.Node) bool {
	if n.InfraDir == "" {
		return false
	}
	success := n.Status() == model.StatusCompleted || n.Cfa != nil && n.Cfa.Outcome() == model.OutcomeSuccess
	parentRunning := n.Parent != nil && n.Parent.State == model.StateRunning
	return success && n.State != model.StateRunning && !parentRunning && !n.Merged
}

// completeNodes offers the ids of the nodes under the roots that the
// command can act on, each described by its state, recommended action and
// reason. A node outside every root is never acted on, so never offered.
func completeNodes(g *Globals, can actable) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		opts, err := g.ScanOptions()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		snap, err := scanner.Scan(opts)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var ids []cobra.Completion
		for _, s := range snap.Sessions {
			s.Walk(func(n *model.Node) {
				if !strings.HasPrefix(n.ID, prefix) || n.HasScanFlag(model.FlagOutsideRoot) || !can(cmd, n) {
					return
				}
				desc := string(n.State) + ", " + string(n.Action)
				if n.Reason != "" {
					desc += ": " + n.Reason
				}
				ids = append(ids, cobra.CompletionWithDesc(n.ID, termtext.OneLine(desc, 0)))
			})
		}
		return ids, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeFailOn offers the names of --fail-on for the atom being typed,
// after the last comma or plus, keeping what comes before it; no space
// follows, as another term may.
func completeFailOn(_ *cobra.Command, _ []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cut := strings.LastIndexAny(typed, ",+") + 1
	head, word := typed[:cut], typed[cut:]
	var out []cobra.Completion
	add := func(name, desc string) {
		if strings.HasPrefix(name, word) {
			out = append(out, cobra.CompletionWithDesc(head+name, desc))
		}
	}
	for _, s := range model.States {
		add(string(s), "state")
	}
	for _, f := range model.Flags {
		add(string(f), "flag")
	}
	for _, a := range actionAtoms() {
		add(a, "recommended action")
	}
	if head == "" {
		add("none", "fail on nothing")
	}
	return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}

// completeThemes offers the built-in themes and the user's theme files.
func completeThemes(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	builtin := map[string]bool{}
	for _, t := range themes.Builtins() {
		builtin[t.Name] = true
	}
	set, _ := themes.Select("", "", themes.Dir(os.Getenv), os.Getenv)
	var out []cobra.Completion
	for _, t := range set.Themes {
		if !strings.HasPrefix(t.Name, prefix) {
			continue
		}
		desc := "user theme"
		if builtin[t.Name] {
			desc = "built-in"
		}
		out = append(out, cobra.CompletionWithDesc(t.Name, desc))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
