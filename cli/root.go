package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/dispatchtop/dispatchtop/actions"
	"github.com/dispatchtop/dispatchtop/internal/exitcode"
	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// Exit codes (SPEC §4).
const (
	ExitOK    = 0
	ExitFound = 1 // --once matched --fail-on, or an action was refused or failed
	ExitUsage = 2 // bad usage, no root could be read, or --once found no tree
)

// ExitError carries an exit code with the one-line error printed to stderr.
type ExitError = exitcode.Error

// usageError marks err as bad usage (exit 2).
func usageError(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// failure marks err as a refusal or failure (exit 1).
func failure(err error) error { return &ExitError{Code: ExitFound, Err: err} }

// Globals are the shared flags (SPEC §4), each registered only on the
// commands that read it, and the streams.
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
	// Metrics is --once --metrics: the file the series are written to.
	Metrics string

	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	flags *cobra.Command // the root
	// sharers are the commands the shared flags were registered on: only
	// the command that runs parses its flags, so a flag changed on any of
	// them was given on the command line.
	sharers []*cobra.Command
	config  *loadedConfig
	// acts is set by a command that may run an action before it loads the
	// config: the config must then lie outside every root (SPEC §5.5), as a
	// writable sessions directory must not choose what runs. A command that
	// runs none reads it wherever the operator keeps it.
	acts bool
}

// sharedFlag names one of the shared flags of SPEC §4.
type sharedFlag int

const (
	flagRoot sharedFlag = iota
	flagConfig
	flagBeat
	flagStale
	flagKillAfter
	flagExitGrace
	flagIgnore
	flagNoPidCheck
	flagPoll
	flagReadonly
	flagTheme
)

// scanFlags are the flags of every command that reads the forest: where it
// is, the config, the thresholds and what to skip.
var scanFlags = []sharedFlag{flagRoot, flagConfig, flagBeat, flagStale, flagKillAfter, flagExitGrace, flagIgnore, flagNoPidCheck}

// share registers the shared flags a command reads on it, and no others.
func (g *Globals) share(cmd *cobra.Command, flags ...sharedFlag) {
	def := model.DefaultThresholds()
	fs := cmd.Flags()
	for _, f := range flags {
		switch f {
		case flagRoot:
			fs.StringArrayVar(&g.Roots, "root", nil, "a root `DIR` to watch (repeatable; same as positional roots)")
		case flagConfig:
			fs.StringVar(&g.ConfigPath, "config", "", "read the config from `FILE` (default $XDG_CONFIG_HOME/dispatchtop/config.toml)")
		case flagBeat:
			fs.DurationVar(&g.Beat, "beat", def.Beat, "heartbeat interval: older than one beat is quiet")
		case flagStale:
			fs.DurationVar(&g.Stale, "stale", def.Stale, "a beat older than this makes the pid decisive")
		case flagKillAfter:
			fs.DurationVar(&g.KillAfter, "kill-after", def.KillAfter, "not beating this long makes a kill candidate")
		case flagExitGrace:
			fs.DurationVar(&g.ExitGrace, "exit-grace", def.ExitGrace, "a gone pid is dead once its beat is this old")
		case flagIgnore:
			fs.StringArrayVar(&g.Ignore, "ignore", nil, "skip directories matching `GLOB` (repeatable)")
		case flagNoPidCheck:
			fs.BoolVar(&g.NoPidCheck, "no-pid-check", false, "liveness from mtimes alone (trees from another host or pid namespace)")
		case flagPoll:
			fs.DurationVar(&g.Poll, "poll", 0, "poll every `DUR` instead of using fsnotify")
		case flagReadonly:
			fs.BoolVar(&g.Readonly, "readonly", false, "no action can run (dry runs still answer)")
		case flagTheme:
			fs.StringVar(&g.Theme, "theme", "", "colour theme `NAME`: dark, light, high-contrast, mono or a user theme")
			_ = cmd.RegisterFlagCompletionFunc("theme", completeThemes)
		}
	}
	for _, known := range g.sharers {
		if known == cmd {
			return
		}
	}
	g.sharers = append(g.sharers, cmd)
}

// given reports whether the shared flag name was on the command line.
func (g *Globals) given(name string) bool {
	for _, c := range g.sharers {
		if c.Flags().Changed(name) {
			return true
		}
	}
	return false
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
	var once, asJSON, allowEmpty, allowMissing bool
	root := &cobra.Command{
		Use:   "dispatchtop [flags] [ROOT...]",
		Short: "A terminal dashboard for live dispatch trees",
		Long: "dispatchtop watches directories of agent dispatch trees (.heartbeat, .children,\n" +
			".cfa-state.json), classifies every node and shows the forest live; --once prints\n" +
			"one snapshot (--json for the dispatchtop/v1 schema) for CI and scripts.",
		Version: buildDescription(),
		// A ROOT may name its source: KIND:PATH (SPEC §10). The kinds
		// complete; a path completes as the shell does.
		ValidArgsFunction: completeRootKinds,
		// What cobra uses for its own "did you mean"; SuggestionsFor reads
		// it as given.
		SuggestionsMinimumDistance: 2,
		SilenceUsage:               true,
		SilenceErrors:              true,
		// Positional arguments are roots, not subcommand names; a word that
		// is neither is a mistyped command.
		Args: rootArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.Roots = append(g.Roots, args...)
			if asJSON && !once {
				return usageError(errors.New("--json needs --once"))
			}
			if once {
				return runOnce(cmd.Context(), g, asJSON, allowEmpty, allowMissing)
			}
			for _, name := range []string{"fail-on", "allow-empty", "allow-missing", "metrics"} {
				if cmd.Flags().Changed(name) {
					return usageError(fmt.Errorf("--%s needs --once", name))
				}
			}
			return runTUI(cmd.Context(), g)
		},
	}
	g.flags = root
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("dispatchtop {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	g.share(root, scanFlags...)
	g.share(root, flagPoll, flagReadonly, flagTheme)
	root.Flags().BoolVar(&once, "once", false, "print one snapshot and exit")
	root.Flags().BoolVar(&asJSON, "json", false, "with --once: print the dispatchtop/v1 JSON")
	root.Flags().StringVar(&g.FailOn, "fail-on", defaultFailOn,
		"with --once: exit 1 when a node matches `LIST`: comma-separated terms, any of which\n"+
			"fails; a term is a state, a flag or action:NAME, or several joined by + (all must\n"+
			"hold); none fails on nothing. The default fails on dead nodes nobody is recovering\n"+
			"(to resume, to surface, or waiting for an answer) and on kill candidates:\n")
	_ = root.RegisterFlagCompletionFunc("fail-on", completeFailOn)
	root.Flags().BoolVar(&allowEmpty, "allow-empty", false, "with --once: roots that hold no tree are no error")
	root.Flags().BoolVar(&allowMissing, "allow-missing", false,
		"with --once: a root that is missing or cannot be read is a problem, not an error,\n"+
			"while another can be read (with --remote: a host that does not answer)")
	root.Flags().StringVar(&g.Metrics, "metrics", "",
		"with --once: also write serve's dispatchtop_* series to `FILE` in the Prometheus\n"+
			"text format, replaced atomically (node_exporter's textfile collector)")

	wrap := newWrapCmd(g)
	// wrap beats and watches its parent: it reads these, and no root.
	g.share(wrap, flagBeat, flagStale, flagExitGrace, flagNoPidCheck)
	root.AddCommand(
		newKillCmd(g), newResumeCmd(g), newCompactCmd(g), newMergeCmd(g), newRecoverCmd(g),
		newJournalCmd(g), newDemoCmd(g), wrap, newVersionCmd(g), newServeCmd(g),
	)
	for _, c := range hiddenCommands(g) {
		root.AddCommand(c)
	}
	// Made now rather than when cobra runs, so it gets its examples too.
	root.InitDefaultCompletionCmd()
	finishCommands(root)
	return root, g
}

// rootArgs takes the positional arguments as roots, except a first word
// that no path names and that reads like a command: that is a mistyped
// command, said as one with cobra's suggestions (SPEC §4). An existing
// directory of any name is a root.
func rootArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 || !commandLike.MatchString(args[0]) {
		return nil
	}
	word := args[0]
	if _, err := os.Lstat(word); err == nil {
		return nil
	}
	if suggestions := cmd.SuggestionsFor(word); len(suggestions) > 0 {
		quoted := make([]string, len(suggestions))
		for i, s := range suggestions {
			quoted[i] = strconv.Quote(s)
		}
		return usageError(fmt.Errorf("unknown command %q, and no directory of that name: did you mean %s?", word, strings.Join(quoted, " or ")))
	}
	return usageError(fmt.Errorf("unknown command %q, and no directory of that name (dispatchtop --help lists the commands)", word))
}

// commandLike is a word that could be a command name: a path (with a slash
// or a dot, like ./x or .sessions) never is.
var commandLike = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

// finishCommands gives every command its examples and a usage line that
// names each flag once: a command that spells out its flags in Use gets no
// "[flags]" appended.
func finishCommands(c *cobra.Command) {
	if c.HasParent() && strings.Contains(c.Use, "--") {
		c.DisableFlagsInUseLine = true
	}
	if ex, ok := examples[strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")]; ok && c.Example == "" {
		c.Example = ex
	}
	if !c.HasParent() {
		c.Example = examples[""]
	}
	for _, sub := range c.Commands() {
		finishCommands(sub)
	}
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
		cfg, path, err = actions.LoadConfig(g.ConfigPath, rootPaths(roots))
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
		if g.given(flag) || fromConfig <= 0 {
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

// thresholdsGiven say which thresholds the operator gave, by a flag or in
// the config: those are put over each source's own defaults (SPEC §10).
func (g *Globals) thresholdsGiven(cfg actions.Config) scanner.GivenThresholds {
	return scanner.GivenThresholds{
		Beat:      g.given("beat") || cfg.Beat.Duration() > 0,
		Stale:     g.given("stale") || cfg.Stale.Duration() > 0,
		KillAfter: g.given("kill-after") || cfg.KillAfter.Duration() > 0,
		ExitGrace: g.given("exit-grace") || cfg.ExitGrace.Duration() > 0,
	}
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
		roots = defaultRoots(cwd, homeDir(), os.Getenv)
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
		ThresholdsGiven: g.thresholdsGiven(cfg),
		Roots:           roots,
		Ignore:          ignore,
		Thresholds:      th,
		Probe:           liveness.SystemProbe{},
		Now:             time.Now,
		Sources:         readingSources(roots),
	}, nil
}
