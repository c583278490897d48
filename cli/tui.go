package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"github.com/dispatchtop/dispatchtop/actions"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/themes"
	"github.com/dispatchtop/dispatchtop/ui"
)

// runTUI is the live view: the watcher keeps a snapshot current, the
// recovery engine acts, the ui shows both.
func runTUI(ctx context.Context, g *Globals) error {
	if err := requireTerminal(g); err != nil {
		return err
	}
	opts, err := g.ScanOptions()
	if err != nil {
		return err
	}
	cfg, cfgPath, err := g.Config()
	if err != nil {
		return err
	}
	set, notes, err := selectTheme(g.Theme, cfg.Theme, os.Getenv)
	if err != nil {
		return usageError(err)
	}
	readonly, note, err := dashboardActions(g, cfgPath)
	if err != nil {
		return err
	}
	if note != "" {
		notes = append(notes, note)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The dashboard acts, so its watcher also finishes what a killed
	// compaction left; with --readonly it only reads.
	w, err := scanner.NewWatcher(opts, scanner.WatchOptions{Poll: g.Poll, RecoverCompactions: !g.Readonly,
		Transitions: ui.EventTransitions()})
	if err != nil {
		return usageError(err)
	}
	if n := dashboardProcs(os.Getenv); n > 0 {
		runtime.GOMAXPROCS(n)
	}
	// The first scan ran at the default pacing, which it fills quickly; the
	// dashboard runs for hours at its own.
	defer paceDashboardCollection()()
	watchErr := make(chan error, 1)
	go func() { watchErr <- w.Run(ctx) }()

	engine := actions.New(actions.EngineOptions{Scan: opts, Config: cfg, ConfigPath: cfgPath, Readonly: readonly})
	m := ui.New(ui.Options{
		Context:  ctx,
		Initial:  w.Snapshot(),
		Feed:     w, // and its Refresh after an action
		Runner:   engineRunner{engine: engine, watcher: w},
		Journal:  readNodeJournal,
		Output:   ui.ReadOutput,
		Files:    scanner.ReadNodeDir,
		Answer:   writeAnswer,
		Editor:   os.Getenv("EDITOR"),
		Readonly: readonly,
		Themes:   set,
		Notes:    notes,
		Released: collectReleasedForests(os.Getenv),
	})
	runErr := runProgram(ctx, g, m)
	cancel()
	if werr := <-watchErr; werr != nil && !errors.Is(werr, context.Canceled) {
		return failure(fmt.Errorf("watch: %w", werr))
	}
	return runErr
}

// dashboardActions says whether the dashboard runs read-only: under
// --readonly, and while its config lies inside a watched root (SPEC §5.5:
// a writable sessions directory must not choose what a keypress runs). In
// the second case the dashboard still shows the forest, and note, for its
// header, says why its actions are off and how to turn them on.
func dashboardActions(g *Globals, cfgPath string) (readonly bool, note string, err error) {
	if g.Readonly || cfgPath == "" {
		return g.Readonly, "", nil
	}
	roots, err := g.absRoots()
	if err != nil {
		return true, "", err
	}
	if root, inside := actions.ConfigInsideRoot(cfgPath, rootPaths(roots)); inside {
		return true, fmt.Sprintf("actions disabled: config %s is inside the watched root %s (keep it outside every root, or name narrower roots)", cfgPath, root), nil
	}
	return false, "", nil
}

// dashboardProcs is the GOMAXPROCS the dashboard runs on once its cold
// scan is done (0: leave it): one, unless the user set GOMAXPROCS. Idle, the
// dashboard is the renderer's frame ticks and a few 1 s ticks, and with a
// second processor each wake also wakes an idle thread to look for work
// that is not there: one processor takes a third of the wakes and the CPU
// away (SPEC §8 idle CPU). After the cold scan the work is mostly one
// goroutine at a time: the watcher's loop, then the model's.
func dashboardProcs(getenv func(string) string) int {
	if getenv("GOMAXPROCS") != "" {
		return 0
	}
	return 1
}

// requireTerminal refuses, as bad usage, to start the dashboard without a
// terminal on both stdin and stdout: checked before anything is started.
func requireTerminal(g *Globals) error {
	for _, stream := range []any{g.Stdin, g.Stdout} {
		f, ok := stream.(*os.File)
		if !ok || !term.IsTerminal(f.Fd()) {
			return usageError(errors.New("the dashboard needs a terminal on stdin and stdout; use --once (or --once --json) for a snapshot"))
		}
	}
	return nil
}

// runProgram runs a screen on the terminal (or the streams a test gave) until
// it quits or ctx ends; an interrupt that cancelled ctx is a normal way out.
func runProgram(ctx context.Context, g *Globals, m tea.Model) error {
	progOpts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithFPS(ui.MaxFPS)}
	if g.Stdin != nil {
		progOpts = append(progOpts, tea.WithInput(g.Stdin))
	}
	if g.Stdout != nil {
		progOpts = append(progOpts, tea.WithOutput(g.Stdout))
	}
	_, err := tea.NewProgram(m, progOpts...).Run()
	if err != nil && !(errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil) {
		return failure(fmt.Errorf("terminal: %w", err))
	}
	return nil
}

// selectTheme picks the starting theme: --theme, else the config's, else
// dark; NO_COLOR forces mono. An unknown --theme is a usage error; an unknown
// config theme or a broken user theme file becomes a header note.
func selectTheme(flagName, configName string, getenv func(string) string) (themes.Set, []string, error) {
	set, errs := themes.Select(flagName, configName, themes.Dir(getenv), getenv)
	var notes []string
	for _, err := range errs {
		var unknown *themes.UnknownError
		if errors.As(err, &unknown) && unknown.Name == flagName {
			return set, nil, fmt.Errorf("--theme: %w", err)
		}
		notes = append(notes, err.Error())
	}
	return set, notes, nil
}

// engineRunner puts the recovery engine behind the ui's Runner.
type engineRunner struct {
	engine  *actions.Engine
	watcher *scanner.Watcher
}

func (r engineRunner) Run(ctx context.Context, req ui.ActionRequest) (ui.ActionResult, error) {
	// The watcher's snapshot only tells the engine where the node lives, so
	// it re-reads one session instead of every root; it still re-checks
	// everything from disk before it acts.
	res, err := r.engine.RunWithHint(ctx, actions.Request{
		Action: req.Action, Node: req.NodeID, Tree: req.Tree, DryRun: req.DryRun,
	}, r.watcher.Snapshot())
	return ui.ActionResult{
		Action: res.Action, NodeID: res.NodeID, Refused: res.Refused,
		Message: res.Message, Plan: res.Plan,
	}, err
}

// paneJournalEntries bounds what the details pane shows of a node's
// journal: its newest entries, however long the journal.
const paneJournalEntries = 200

// readNodeJournal is the journal of the node's root, the lines about it:
// the newest paneJournalEntries, the journal read a line at a time (a line
// that does not name the node is not decoded), so that a journal of any
// size costs the pane what those entries cost (SPEC §8).
func readNodeJournal(ctx context.Context, n *model.Node) ([]string, error) {
	return tailNodeJournal(ctx, n.Root, n.ID, paneJournalEntries)
}

// tailNodeJournal is the newest keep entries of root's journal about
// node, as lines, oldest first; the first line says how many older ones
// are not shown, and each line skipped for its length is said too.
func tailNodeJournal(ctx context.Context, root, node string, keep int) ([]string, error) {
	jr, err := actions.OpenJournal(root, actions.JournalReadOptions{Node: node, Brief: true})
	if err != nil {
		return nil, err
	}
	defer jr.Close()
	ring := make([]string, 0, min(keep, 16))
	seen := 0
	for {
		if seen%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e, ok := jr.Next()
		if !ok {
			break
		}
		if len(ring) < keep {
			ring = append(ring, e.Line())
		} else {
			ring[seen%keep] = e.Line()
		}
		seen++
	}
	if err := jr.Err(); err != nil {
		return nil, err
	}
	var lines []string
	for _, p := range jr.Problems() {
		lines = append(lines, p.Path+": "+p.Error)
	}
	if seen > keep {
		lines = append(lines, fmt.Sprintf("(%d older entries not shown)", seen-keep))
		start := seen % keep
		return append(append(lines, ring[start:]...), ring[:start]...), nil
	}
	return append(lines, ring...), nil
}

// writeAnswer writes an operator's answer where the node's system reads it
// and journals it (actions.Answer); the dashboard calls it in a command.
func writeAnswer(_ context.Context, n *model.Node, text string) (string, error) {
	return actions.Answer(n, text, time.Now())
}
