package cli

// `dispatchtop wrap`: run any command under the heartbeat protocol (SPEC §7).

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/wrap"
)

// wrapOptions are wrap's own flags; the beat, stale and exit-grace come from
// the shared flags. The protocol itself is package wrap's.
type wrapOptions struct {
	infra       string
	parent      string
	role        string
	team        string
	taskID      string
	parentGrace time.Duration
	// endWait is how long a child ended for its parent's death gets between
	// SIGTERM and SIGKILL.
	endWait time.Duration
	// launchDelay holds `starting` this long before launching (demo only).
	launchDelay time.Duration
	// freezeAfter stops beating and finalizing after this long, as a hung
	// agent would (demo only).
	freezeAfter time.Duration
}

func newWrapCmd(g *Globals) *cobra.Command {
	var o wrapOptions
	cmd := &cobra.Command{
		Use:   "wrap --infra DIR [--parent HEARTBEAT] [--role R] [--team T] [--task-id ID] [--beat 30s] [--parent-grace 60s] -- CMD [ARG...]",
		Short: "Run a command under the heartbeat protocol",
		Long: "wrap runs CMD (directly, no shell) as a node of a dispatch tree: it registers in the\n" +
			"parent's .children, writes DIR/.heartbeat (starting, with its own pid) before launch,\n" +
			"switches it to the child's pid and running after, bumps its mtime every --beat while\n" +
			"the child lives, and writes completed (exit 0) or withdrawn (non-zero) when it ends.\n" +
			"SIGINT, SIGTERM and SIGHUP are forwarded to the child. When the parent is dead\n" +
			"(its beat stale and its pid gone), the child gets --parent-grace, then is ended\n" +
			"(SIGTERM, then SIGKILL) and the node is finalized as withdrawn. A parent that\n" +
			"finished leaves its child running (shown orphaned).\n\n" +
			"The child's environment carries DISPATCHTOP_HEARTBEAT (its heartbeat, to pass as\n" +
			"--parent to its own dispatches) and DISPATCHTOP_INFRA. wrap exits with the child's\n" +
			"exit code (128+N when a signal N ended it).",
		DisableFlagsInUseLine: true,
		Args:                  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.infra == "" {
				return usageError(errors.New("wrap: --infra DIR is required"))
			}
			return runWrap(g, o, args)
		},
	}
	// Everything after CMD belongs to CMD, even without `--`.
	cmd.Flags().SetInterspersed(false)
	f := cmd.Flags()
	f.StringVar(&o.infra, "infra", "", "the node's infra dir (created; holds .heartbeat)")
	f.StringVar(&o.parent, "parent", "", "the parent's .heartbeat: register there and watch it")
	f.StringVar(&o.role, "role", "", "the role written in the heartbeat (default: CMD's base name)")
	f.StringVar(&o.team, "team", "", "the team named in the parent's registry")
	f.StringVar(&o.taskID, "task-id", "", "the task id named in the parent's registry")
	f.DurationVar(&o.parentGrace, "parent-grace", 60*time.Second, "how long the child may run on once its parent is dead")
	f.DurationVar(&o.endWait, "end-wait", 10*time.Second, "between SIGTERM and SIGKILL when the child is ended")
	f.DurationVar(&o.launchDelay, "launch-delay", 0, "stay starting this long before launching")
	f.DurationVar(&o.freezeAfter, "freeze-after", 0, "stop beating and finalizing after this long, like a hung agent")
	for _, name := range []string{"end-wait", "launch-delay", "freeze-after"} {
		_ = f.MarkHidden(name) // demo knobs; the names exist, so this cannot fail
	}
	return cmd
}

func runWrap(g *Globals, o wrapOptions, argv []string) error {
	// In the order of the flags' help, so the same mistake always gets the
	// same message.
	for _, t := range []struct {
		name string
		d    time.Duration
	}{{"beat", g.Beat}, {"stale", g.Stale}, {"exit-grace", g.ExitGrace}} {
		if t.d <= 0 {
			return usageError(fmt.Errorf("wrap: --%s must be positive, got %s", t.name, t.d))
		}
	}
	if o.parentGrace < 0 {
		return usageError(fmt.Errorf("wrap: --parent-grace must not be negative, got %s", o.parentGrace))
	}
	infra, err := filepath.Abs(o.infra)
	if err != nil {
		return usageError(fmt.Errorf("wrap: --infra %s: %w", o.infra, err))
	}
	parent := ""
	if o.parent != "" {
		if parent, err = filepath.Abs(o.parent); err != nil {
			return usageError(fmt.Errorf("wrap: --parent %s: %w", o.parent, err))
		}
	}
	th := model.DefaultThresholds()
	th.Beat, th.Stale, th.ExitGrace, th.NoPidCheck = g.Beat, g.Stale, g.ExitGrace, g.NoPidCheck
	err = wrap.Run(wrap.Options{
		Infra: infra, Parent: parent, Role: o.role, Team: o.team, TaskID: o.taskID,
		Thresholds: th, ParentGrace: o.parentGrace, EndWait: o.endWait,
		LaunchDelay: o.launchDelay, FreezeAfter: o.freezeAfter,
		Stdin: g.Stdin, Stdout: g.Stdout, Stderr: g.Stderr,
	}, argv)
	var exit *wrap.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit):
		return &ExitError{Code: exit.Code, Err: exit.Err}
	default:
		return failure(err)
	}
}
