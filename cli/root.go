package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/dispatchtop/dispatchtop/actions"
	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// Exit codes (SPEC §4).
const (
	ExitOK    = 0
	ExitFound = 1 // --once matched --fail-on, or an action was refused or failed
	ExitUsage = 2 // bad usage, or no root could be read
)

// ExitError carries an exit code with the one-line error printed to stderr.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// usageError marks err as bad usage (exit 2).
func usageError(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// failure marks err as a refusal or failure (exit 1).
func failure(err error) error { return &ExitError{Code: ExitFound, Err: err} }

// Globals are the flags every command shares (SPEC §4), and the streams.
type Globals struct {
	Roots      []string
	ConfigPath string
	Beat       time.Duration
	Stale      time.Duration
	KillAfter  time.Duration
	ExitGrace  time.Duration
	Ignore     []string
	Poll       time.Duration
	Readonly   bool
	Theme      string
	FailOn     string
	NoPidCheck bool

	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	flags  *cobra.Command // the root, to tell explicit flags from defaults
	config *loadedConfig
	// acts is set by a command that may run an action before it loads the
	// config: the config must then lie outside every root (SPEC §5.5), as a
	// writable sessions directory must not choose what runs. A command that
	// runs none reads it wherever the operator keeps it.
	acts bool
}

type loadedConfig struct {
	cfg  actions.Config
	path string
}

// Execute runs the command line and returns the process exit code.
func Execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// SIGHUP too: a closed terminal must end the dashboard (and the demo's
	// fleet) as cleanly as ctrl+c does.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	root, _ := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		if exit.Err != nil {
			fmt.Fprintln(stderr, "dispatchtop: "+errorLine(exit.Err))
		}
		return exit.Code
	}
	// cobra's own errors (unknown flag, wrong argument count) are usage errors.
	fmt.Fprintln(stderr, "dispatchtop: "+errorLine(err))
	return ExitUsage
}

// errorLine is err as SPEC §4 prints it: one line, whatever it joins, and
// terminal text, whatever node id or argument it quotes.
func errorLine(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	for i, l := range lines {
		lines[i] = termtext.OneLine(l, 0)
	}
	return strings.Join(lines, "; ")
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) (*cobra.Command, *Globals) {
	g := &Globals{Stdin: stdin, Stdout: stdout, Stderr: stderr}
	var once, asJSON bool
	root := &cobra.Command{
		Use:   "dispatchtop [flags] [ROOT...]",
		Short: "A terminal dashboard for live dispatch trees",
		Long: "dispatchtop watches directories of agent dispatch trees (.heartbeat, .children,\n" +
			".cfa-state.json), classifies every node and shows the forest live; --once prints\n" +
			"one snapshot (--json for the dispatchtop/v1 schema) for CI and scripts.",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Positional arguments are roots, not subcommand names.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.Roots = append(g.Roots, args...)
			if asJSON && !once {
				return usageError(errors.New("--json needs --once"))
			}
			if once {
				return runOnce(cmd.Context(), g, asJSON)
			}
			if cmd.Flags().Changed("fail-on") {
				return usageError(errors.New("--fail-on needs --once"))
			}
			return runTUI(cmd.Context(), g)
		},
	}
	g.flags = root
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	def := model.DefaultThresholds()
	pf := root.PersistentFlags()
	pf.StringArrayVar(&g.Roots, "root", nil, "a root to watch (repeatable; same as positional roots)")
	pf.StringVar(&g.ConfigPath, "config", "", "config file (default $XDG_CONFIG_HOME/dispatchtop/config.toml)")
	pf.DurationVar(&g.Beat, "beat", def.Beat, "heartbeat interval: older than one beat is quiet")
	pf.DurationVar(&g.Stale, "stale", def.Stale, "a beat older than this makes the pid decisive")
	pf.DurationVar(&g.KillAfter, "kill-after", def.KillAfter, "not beating this long makes a kill candidate")
	pf.DurationVar(&g.ExitGrace, "exit-grace", def.ExitGrace, "a gone pid is dead once its beat is this old")
	pf.StringArrayVar(&g.Ignore, "ignore", nil, "skip directories matching this glob (repeatable)")
	pf.DurationVar(&g.Poll, "poll", 0, "poll every DUR instead of using fsnotify")
	pf.BoolVar(&g.Readonly, "readonly", false, "no action can run (dry runs still answer)")
	pf.StringVar(&g.Theme, "theme", "", "colour theme: dark, light, high-contrast, mono or a user theme")
	pf.BoolVar(&g.NoPidCheck, "no-pid-check", false, "liveness from mtimes alone (trees from another host or pid namespace)")
	root.Flags().BoolVar(&once, "once", false, "print one snapshot and exit")
	root.Flags().BoolVar(&asJSON, "json", false, "with --once: print the dispatchtop/v1 JSON")
	root.Flags().StringVar(&g.FailOn, "fail-on", "dead", "with --once: exit 1 when a node has any of these states or flags")

	root.AddCommand(
		newKillCmd(g), newResumeCmd(g), newCompactCmd(g), newMergeCmd(g), newRecoverCmd(g),
		newDemoCmd(g), newWrapCmd(g), newVersionCmd(g), newServeCmd(g),
	)
	for _, c := range hiddenCommands(g) {
		root.AddCommand(c)
	}
	return root, g
}

// Config loads the configuration once: --config, else the XDG location;
// for a command that acts, never a file inside a watched root (SPEC §5.5).
func (g *Globals) Config() (actions.Config, string, error) {
	if g.config != nil {
		return g.config.cfg, g.config.path, nil
	}
	roots, err := g.absRoots()
	if err != nil {
		return actions.Config{}, "", err
	}
	var cfg actions.Config
	var path string
	if g.acts {
		cfg, path, err = actions.LoadConfig(g.ConfigPath, roots)
	} else {
		cfg, path, err = actions.LoadReadOnlyConfig(g.ConfigPath)
	}
	if err != nil {
		return actions.Config{}, "", usageError(err)
	}
	g.config = &loadedConfig{cfg: cfg, path: path}
	return cfg, path, nil
}

// Thresholds are the flags' values, with the config's where no flag was given.
func (g *Globals) Thresholds() (model.Thresholds, error) {
	cfg, configPath, err := g.Config()
	if err != nil {
		return model.Thresholds{}, err
	}
	th := model.DefaultThresholds()
	// Each value remembers where it came from, so an error blames the
	// config's key when the config set it, never a flag that was not given.
	pick := func(flag, key string, fromFlag, fromConfig time.Duration) threshold {
		if g.flags.PersistentFlags().Changed(flag) || fromConfig <= 0 {
			return threshold{flag: flag, d: fromFlag}
		}
		return threshold{key: key, d: fromConfig}
	}
	beat := pick("beat", "beat", g.Beat, cfg.Beat.Duration())
	stale := pick("stale", "stale", g.Stale, cfg.Stale.Duration())
	killAfter := pick("kill-after", "kill_after", g.KillAfter, cfg.KillAfter.Duration())
	exitGrace := pick("exit-grace", "exit_grace", g.ExitGrace, cfg.ExitGrace.Duration())
	th.Beat, th.Stale, th.KillAfter, th.ExitGrace = beat.d, stale.d, killAfter.d, exitGrace.d
	th.NoPidCheck = g.NoPidCheck
	for _, t := range []threshold{beat, stale, killAfter, exitGrace} {
		if t.d <= 0 { // the config's are checked when it is read
			return th, usageError(fmt.Errorf("--%s must be positive, got %s", t.flag, t.d))
		}
	}
	// SPEC §3 reads them in this order: a gone pid is dead after the exit
	// grace, a node is quiet after one beat and stalled after stale, a kill
	// candidate after kill-after. Out of order, the tables say nonsense.
	switch {
	case stale.d <= exitGrace.d:
		return th, usageError(outOfOrder(configPath, stale, "be longer than", exitGrace, "be shorter than"))
	case beat.d > stale.d:
		return th, usageError(outOfOrder(configPath, beat, "not be longer than", stale, "not be shorter than"))
	case killAfter.d < stale.d:
		return th, usageError(outOfOrder(configPath, killAfter, "not be shorter than", stale, "not be longer than"))
	}
	return th, nil
}

// threshold is one threshold's value and its source: a config key, else a
// flag (given or its default).
type threshold struct {
	flag, key string // key is set when the value came from the config
	d         time.Duration
}

func (t threshold) String() string {
	if t.key != "" {
		return fmt.Sprintf("%s = %q", t.key, t.d)
	}
	return fmt.Sprintf("--%s (%s)", t.flag, t.d)
}

// outOfOrder says that a must be rel b (or b inverse a), led by the value
// the config set when there is one: "config.toml: stale = "5s": must be
// longer than --exit-grace (5s)".
func outOfOrder(configPath string, a threshold, rel string, b threshold, inverse string) error {
	if a.key == "" && b.key != "" {
		a, b, rel = b, a, inverse
	}
	if a.key != "" {
		return fmt.Errorf("%s: %s: must %s %s", configPath, a, rel, b)
	}
	return fmt.Errorf("%s must %s %s", a, rel, b)
}

func (g *Globals) absRoots() ([]string, error) {
	roots := g.Roots
	if len(roots) == 0 {
		cwd, err := os.Getwd()
		if err != nil {
			return nil, usageError(fmt.Errorf("find the working directory: %w", err))
		}
		roots = scanner.DefaultRoots(cwd)
	}
	return roots, nil
}

// ScanOptions builds the scanner options from the flags and the config.
func (g *Globals) ScanOptions() (scanner.Options, error) {
	roots, err := g.absRoots()
	if err != nil {
		return scanner.Options{}, err
	}
	th, err := g.Thresholds()
	if err != nil {
		return scanner.Options{}, err
	}
	cfg, _, _ := g.Config()
	ignore := append(append([]string(nil), cfg.Ignore...), g.Ignore...)
	return scanner.Options{
		Roots:      roots,
		Ignore:     ignore,
		Thresholds: th,
		Probe:      liveness.SystemProbe{},
		Now:        time.Now,
	}, nil
}
