package cli

// `dispatchtop demo` and the hidden commands its fleet runs (SPEC §7).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dispatchtop/dispatchtop/demo"
)

func newDemoCmd(g *Globals) *cobra.Command {
	var keep bool
	var dir string
	var headless time.Duration
	cmd := &cobra.Command{
		Use:   "demo [--keep] [--dir DIR]",
		Short: "A live simulated fleet, and the dashboard on it",
		Long: "demo builds a fleet of simulated agents in a temporary directory (or --dir): real\n" +
			"processes, dispatchtop itself run through wrap, on compressed time (beat 1s, stale 4s,\n" +
			"kill-after 10s, exit-grace 1s). Within a minute it shows every state and flag: healthy\n" +
			"nested teams in both layouts, a crash, a hung agent becoming a kill candidate, a\n" +
			"blocked agent, completions, a withdrawal, an orphan, a registration that never\n" +
			"started, a paused agent, a legacy .running writer, and a Claude Code session with its\n" +
			"team, a plan awaiting approval, a background job and a session hard-killed (its own\n" +
			"Claude Code home in the fleet's directory, never ~/.claude). Its own config wires\n" +
			"resume and merge, so every action works for real. On quit it stops its processes and\n" +
			"removes the directory unless --keep (a --dir is always kept).",
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), g, dir, keep || dir != "", headless)
		},
	}
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the fleet's directory after quitting")
	cmd.Flags().StringVar(&dir, "dir", "", "build the fleet here (kept)")
	cmd.Flags().DurationVar(&headless, "headless", 0, "run the fleet this long without the dashboard")
	_ = cmd.Flags().MarkHidden("headless") // for tests and scripts; the flag exists
	// The demo brings its own roots, config and thresholds.
	g.share(cmd, flagTheme, flagPoll, flagReadonly)
	return cmd
}

func runDemo(ctx context.Context, g *Globals, dir string, keep bool, headless time.Duration) (err error) {
	if headless <= 0 {
		// No fleet is built for a dashboard that cannot be shown.
		if err := requireTerminal(g); err != nil {
			return err
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return failure(fmt.Errorf("demo: find the dispatchtop binary: %w", err))
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "dispatchtop-demo-"); err != nil {
			return failure(fmt.Errorf("demo: %w", err))
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return failure(fmt.Errorf("demo: %w", err))
	}
	fleet, err := demo.Start(ctx, dir, exe)
	if err != nil {
		if !keep {
			os.RemoveAll(dir)
		}
		return failure(err)
	}
	defer func() {
		stopErr := fleet.Stop()
		if keep {
			fmt.Fprintf(g.Stderr, "dispatchtop demo: the fleet is kept in %s\n", fleet.Dir())
		} else if rmErr := os.RemoveAll(fleet.Dir()); rmErr != nil && stopErr == nil {
			stopErr = rmErr
		}
		if stopErr != nil && err == nil {
			err = failure(stopErr)
		}
	}()

	th := demo.Thresholds()
	g.Roots = fleet.Roots() // the jobs dir is read by the TeaParty source too (its bus job)
	g.ConfigPath = fleet.ConfigPath()
	g.Beat, g.Stale, g.KillAfter, g.ExitGrace = th.Beat, th.Stale, th.KillAfter, th.ExitGrace
	g.config = nil // the demo's config replaces anything loaded before

	if headless > 0 {
		fmt.Fprintf(g.Stdout, "demo fleet in %s (config %s); running for %s\n", fleet.Dir(), fleet.ConfigPath(), headless)
		select {
		case <-ctx.Done():
		case <-time.After(headless):
		}
		return nil
	}
	return runTUI(ctx, g)
}

// hiddenCommands are the internal commands the demo re-executes the binary
// with: the simulated agent and the merge it configures.
func hiddenCommands(g *Globals) []*cobra.Command {
	return []*cobra.Command{newDemoAgentCmd(g), newDemoClaudeCmd(g), newDemoMergeCmd(g)}
}

func newDemoClaudeCmd(*Globals) *cobra.Command {
	var o demo.ClaudeOptions
	cmd := &cobra.Command{
		Use:    "demo-claude --home DIR --session ID",
		Short:  "A Claude Code session of the demo fleet: writes its own sessions/<pid>.json",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			code, err := demo.RunClaude(cmd.Context(), o)
			if err != nil || code != 0 {
				return &ExitError{Code: code, Err: err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Home, "home", "", "the Claude Code home it writes in")
	f.StringVar(&o.Session, "session", "", "its sessionId in the demo's scenario")
	f.StringVar(&o.Leash, "leash", "", "stop when this file is removed")
	f.IntVar(&o.LeashPID, "leash-pid", 0, "stop when this process is gone")
	return cmd
}

func newDemoAgentCmd(g *Globals) *cobra.Command {
	var o demo.AgentOptions
	cmd := &cobra.Command{
		Use:    "demo-agent --behave " + strings.Join(demo.Behaviours(), "|") + " [--after DUR] [--infra DIR]",
		Short:  "A simulated agent of the demo fleet (run under wrap)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			code, err := demo.RunAgent(cmd.Context(), o)
			if err != nil || code != 0 {
				return &ExitError{Code: code, Err: err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Behave, "behave", demo.BehaveWork, "what the agent does: "+strings.Join(demo.Behaviours(), ", "))
	f.DurationVar(&o.After, "after", 5*time.Second, "when the behaviour's event happens")
	f.StringVar(&o.Infra, "infra", "", "infra dir (default $DISPATCHTOP_INFRA, set by wrap)")
	f.StringVar(&o.Leash, "leash", "", "stop when this file is removed")
	f.IntVar(&o.LeashPID, "leash-pid", 0, "stop when this process is gone")
	f.DurationVar(&o.Tick, "tick", time.Second, "one work step")
	return cmd
}

func newDemoMergeCmd(g *Globals) *cobra.Command {
	var logPath, id, infra string
	cmd := &cobra.Command{
		Use:    "demo-merge --log FILE --id ID --infra DIR",
		Short:  "The demo's merge: records the merge in a log",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if logPath == "" || id == "" {
				return usageError(errors.New("demo-merge: --log and --id are required"))
			}
			line, err := demo.RunMerge(logPath, id, infra)
			if err != nil {
				return failure(err)
			}
			fmt.Fprintln(g.Stdout, line)
			return nil
		},
	}
	cmd.Flags().StringVar(&logPath, "log", "", "the merge log")
	cmd.Flags().StringVar(&id, "id", "", "the merged node's id")
	cmd.Flags().StringVar(&infra, "infra", "", "the merged node's infra dir")
	return cmd
}
