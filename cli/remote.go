package cli

// `dispatchtop --remote URL[,URL...]`: the TUI over several hosts'
// `dispatchtop serve`, grouped by host, read-only.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dispatchtop/dispatchtop/remote"
	"github.com/dispatchtop/dispatchtop/serve"
	"github.com/dispatchtop/dispatchtop/ui"
)

// installRemote adds --remote and --token-file to the root command and
// sends the root's run to the fleet view when --remote is given.
func installRemote(g *Globals) {
	root := g.flags
	var specs []string
	var tokenFile string
	root.Flags().StringArrayVar(&specs, "remote", nil,
		"show the fleet of these dispatchtop serve hosts, read-only: `URL` or NAME=URL, comma-separated or repeated")
	root.Flags().StringVar(&tokenFile, "token-file", "",
		"with --remote: the hosts' bearer token (first line of `FILE`; default $"+serve.TokenEnv+")")
	local := root.RunE
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if !cmd.Flags().Changed("remote") {
			if cmd.Flags().Changed("token-file") {
				return usageError(errors.New("--token-file needs --remote (or use it with serve)"))
			}
			return local(cmd, args)
		}
		if len(args) > 0 || len(g.Roots) > 0 {
			return usageError(errors.New("--remote shows the hosts' own roots: give roots to their dispatchtop serve"))
		}
		once, _ := cmd.Flags().GetBool("once")
		if once {
			asJSON, _ := cmd.Flags().GetBool("json")
			allowMissing, _ := cmd.Flags().GetBool("allow-missing")
			if cmd.Flags().Changed("allow-empty") {
				return usageError(errors.New("--allow-empty does not go with --remote (a host row is never empty)"))
			}
			return runRemoteOnce(cmd.Context(), g, specs, tokenFile, asJSON, allowMissing)
		}
		for _, name := range []string{"json", "fail-on", "allow-missing", "metrics"} {
			if cmd.Flags().Changed(name) {
				return usageError(fmt.Errorf("--%s needs --once", name))
			}
		}
		return runRemote(cmd.Context(), g, specs, tokenFile)
	}
}

// newFleet builds the poller from the --remote values and the token.
func newFleet(specs []string, tokenFile string, lookupEnv func(string) (string, bool)) (*remote.Fleet, error) {
	hosts, err := remote.ParseHosts(specs)
	if err != nil {
		return nil, usageError(err)
	}
	token, err := serve.ReadToken(tokenFile, lookupEnv)
	if err != nil {
		return nil, usageError(err)
	}
	// Its updates feed the dashboard, whose event pane shows only some of
	// their transitions.
	return remote.NewFleet(remote.Options{Hosts: hosts, Token: token, Transitions: ui.EventTransitions()}), nil
}

func runRemote(ctx context.Context, g *Globals, specs []string, tokenFile string) error {
	fleet, err := newFleet(specs, tokenFile, os.LookupEnv)
	if err != nil {
		return err
	}
	cfg, _, err := g.Config()
	if err != nil {
		return err
	}
	set, notes, err := selectTheme(g.Theme, cfg.Theme, os.Getenv)
	if err != nil {
		return usageError(err)
	}
	if err := requireTerminal(g); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer paceDashboardCollection()() // a fleet view is a dashboard: the same heap pacing
	m := newRemoteModel(ctx, fleet, ui.Options{Themes: set, Notes: notes})
	return runProgram(ctx, g, m)
}

// newRemoteModel polls once (so the first screen has every host and its
// reachability), then starts the fleet's polling, the ui's feed, until ctx
// ends. The view is read-only: there is no runner, and no journal to read.
func newRemoteModel(ctx context.Context, fleet *remote.Fleet, opts ui.Options) *ui.Model {
	first := fleet.Poll(ctx)
	go fleet.Run(ctx)
	opts.Context = ctx
	opts.Initial = first.Snapshot
	opts.Hosts = first.Hosts
	opts.Feed = fleet
	opts.Readonly = true
	opts.Runner, opts.Journal = nil, nil
	return ui.New(opts)
}

// runRemoteOnce is `--once --remote`: every host read once (its
// snapshot), one document of the fleet (each host's sessions under its
// host row), --fail-on's exit code over every host's nodes. A host that
// does not answer is bad usage (exit 2), as a root that cannot be read,
// unless allowMissing: then it is a row saying why.
func runRemoteOnce(ctx context.Context, g *Globals, specs []string, tokenFile string, asJSON, allowMissing bool) error {
	match, err := parseFailOn(g.FailOn)
	if err != nil {
		return usageError(err)
	}
	hosts, err := remote.ParseHosts(specs)
	if err != nil {
		return usageError(err)
	}
	token, err := serve.ReadToken(tokenFile, os.LookupEnv)
	if err != nil {
		return usageError(err)
	}
	fleet := remote.NewFleet(remote.Options{Hosts: hosts, Token: token, Timeout: remoteOnceTimeout})
	u := fleet.Poll(ctx)
	var down []string
	for _, h := range u.Hosts {
		if !h.Reachable {
			down = append(down, h.Name+": "+h.Err)
		}
	}
	if len(down) > 0 && (!allowMissing || len(down) == len(u.Hosts)) {
		return usageError(fmt.Errorf("--remote: %s (--allow-missing reads the others)", strings.Join(down, "; ")))
	}
	snap := u.Snapshot
	return answerOnce(g, snap, asJSON, match)
}

// remoteOnceTimeout is how long --once --remote waits for a host: a
// 10,000-node snapshot is 9 MB, more than the live view's poll allows.
const remoteOnceTimeout = 30 * time.Second
