package cli

// `dispatchtop wrap`: run any command under the heartbeat protocol (SPEC §7).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// wrapOptions are wrap's own flags; the beat, stale and exit-grace come from
// the shared flags.
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

// wrapRun is one wrapped dispatch: the heartbeat, the child and the watchers.
type wrapRun struct {
	g      *Globals
	o      wrapOptions
	w      *protocol.HeartbeatWriter
	stderr io.Writer
	probe  liveness.Probe
	// endedForParent is set when the child was ended because its parent died.
	mu             sync.Mutex
	endedForParent bool
}

func runWrap(g *Globals, o wrapOptions, argv []string) error {
	for name, d := range map[string]time.Duration{"beat": g.Beat, "stale": g.Stale, "exit-grace": g.ExitGrace} {
		if d <= 0 {
			return usageError(fmt.Errorf("wrap: --%s must be positive, got %s", name, d))
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
	role := o.role
	if role == "" {
		role = filepath.Base(argv[0])
	}
	w, err := protocol.NewHeartbeatWriter(infra, model.Heartbeat{
		ParentHeartbeat: parent, Role: role, Team: o.team, TaskID: o.taskID,
	})
	if err != nil {
		return failure(fmt.Errorf("wrap: %w", err))
	}
	// Register before anything else exists: the parent's registry is how the
	// tree learns of a dispatch that then fails to start (SPEC §3 missing).
	if parent != "" {
		reg := protocol.Registration{Heartbeat: w.Path(), Team: o.team, TaskID: o.taskID}
		if _, err := protocol.Register(parent, reg); err != nil {
			return failure(fmt.Errorf("wrap: %w", err))
		}
	}
	r := &wrapRun{g: g, o: o, w: w, stderr: g.Stderr, probe: liveness.SystemProbe{}}
	r.o.parent = parent
	return r.run(argv)
}

// logf prints one line to stderr: the errors and paths it quotes are
// terminal text.
func (r *wrapRun) logf(format string, args ...any) {
	fmt.Fprintln(r.stderr, "dispatchtop wrap: "+termtext.OneLine(fmt.Sprintf(format, args...), 0))
}

func (r *wrapRun) run(argv []string) error {
	self := os.Getpid()
	selfStarted, err := liveness.ProcessStarted(self)
	if err != nil {
		selfStarted = nowSeconds(time.Now())
	}
	if err := r.w.Write(model.StatusStarting, self, selfStarted); err != nil {
		return failure(fmt.Errorf("wrap: %w", err))
	}

	// Signals are caught before launch so none is lost in between; they are
	// forwarded once the child exists.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	beatCtx, stopBeats := context.WithCancel(context.Background())
	beatsDone := make(chan struct{})
	go func() { defer close(beatsDone); r.beat(beatCtx) }()
	stopBeating := func() { stopBeats(); <-beatsDone }

	if r.o.launchDelay > 0 {
		select {
		case <-time.After(r.o.launchDelay):
		case sig := <-sigs:
			stopBeating()
			r.finalize(model.StatusWithdrawn, self, selfStarted, 128+signalNumber(sig))
			return &ExitError{Code: 128 + signalNumber(sig)}
		}
	}

	child := exec.Command(argv[0], argv[1:]...)
	child.Stdin, child.Stdout, child.Stderr = r.g.Stdin, r.g.Stdout, r.g.Stderr
	child.Env = append(os.Environ(), "DISPATCHTOP_HEARTBEAT="+r.w.Path(), "DISPATCHTOP_INFRA="+r.w.Dir())
	// Off a terminal the child gets its own process group, so that ending
	// it reaches what it started too; on a terminal it stays in the
	// foreground group, where it must be to read the terminal.
	ownGroup := !stdinIsTerminal(r.g.Stdin)
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: ownGroup}
	if err := child.Start(); err != nil {
		stopBeating()
		code := 127
		if errors.Is(err, os.ErrPermission) {
			code = 126
		}
		r.finalize(model.StatusWithdrawn, self, selfStarted, code)
		return &ExitError{Code: code, Err: fmt.Errorf("wrap: start %s: %w", argv[0], err)}
	}
	pid := child.Process.Pid
	started, err := liveness.ProcessStarted(pid)
	if err != nil {
		// The child may already be gone; the launch instant is within the
		// start tolerance of its create time.
		started = nowSeconds(time.Now())
	}
	if err := r.w.Write(model.StatusRunning, pid, started); err != nil {
		r.logf("%v", err)
	}

	signalChild := func(sig syscall.Signal) {
		if ownGroup {
			syscall.Kill(-pid, sig)
			return
		}
		syscall.Kill(pid, sig)
	}
	exited := make(chan struct{})
	watchCtx, stopWatch := context.WithCancel(context.Background())
	var watchers sync.WaitGroup
	watchers.Add(1)
	go func() {
		defer watchers.Done()
		for {
			select {
			case sig := <-sigs:
				s := sig.(syscall.Signal)
				// On a terminal, a keyboard SIGINT already reached the child
				// (same foreground group): forwarding it would deliver it twice.
				if !ownGroup && s == syscall.SIGINT {
					continue
				}
				signalChild(s)
			case <-watchCtx.Done():
				return
			}
		}
	}()
	if r.o.parent != "" {
		watchers.Add(1)
		go func() {
			defer watchers.Done()
			r.watchParent(watchCtx, exited, signalChild)
		}()
	}

	waitErr := child.Wait()
	close(exited)
	stopWatch()
	watchers.Wait()
	stopBeating()

	code := exitCode(child.ProcessState, waitErr)
	r.mu.Lock()
	endedForParent := r.endedForParent
	r.mu.Unlock()
	status := model.StatusCompleted
	if code != 0 || endedForParent {
		status = model.StatusWithdrawn
	}
	if !r.frozen() {
		r.finalize(status, pid, started, code)
	}
	if code != 0 {
		return &ExitError{Code: code}
	}
	return nil
}

// frozen reports whether the demo's freeze knob is set: a hung agent neither
// beats nor finalizes.
func (r *wrapRun) frozen() bool { return r.o.freezeAfter > 0 }

func (r *wrapRun) finalize(status string, pid int, started float64, code int) {
	if err := r.w.SetExtra("exit_code", code); err != nil {
		r.logf("%v", err)
	}
	if err := r.w.Write(status, pid, started); err != nil {
		r.logf("%v", err)
	}
}

// beat bumps the heartbeat's mtime every beat until ctx ends (or the freeze
// knob says to stop). A failed beat is reported once per run of failures.
func (r *wrapRun) beat(ctx context.Context) {
	tick := time.NewTicker(r.g.Beat)
	defer tick.Stop()
	var freeze <-chan time.Time
	if r.o.freezeAfter > 0 {
		freeze = time.After(r.o.freezeAfter)
	}
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-freeze:
			r.logf("frozen after %s: no more beats", r.o.freezeAfter)
			return
		case now := <-tick.C:
			err := r.w.Beat(now)
			if err != nil && !failing {
				r.logf("%v", err)
			}
			failing = err != nil
		}
	}
}

// watchParent checks the parent's heartbeat every beat. Once the parent is
// dead the child gets the parent grace; a parent that comes back (resumed)
// cancels it. After the grace the child is ended: SIGTERM, then SIGKILL.
func (r *wrapRun) watchParent(ctx context.Context, exited <-chan struct{}, signalChild func(syscall.Signal)) {
	tick := time.NewTicker(r.g.Beat)
	defer tick.Stop()
	watchStart := time.Now()
	var deadSince time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			dead, why := parentDead(r.o.parent, r.probe, r.parentThresholds(), now, watchStart)
			switch {
			case dead && deadSince.IsZero():
				deadSince = now
				r.logf("parent %s is gone (%s); ending the child in %s", r.o.parent, why, r.o.parentGrace)
			case !dead && !deadSince.IsZero():
				deadSince = time.Time{}
				r.logf("parent %s is alive again; the child runs on", r.o.parent)
			}
			if deadSince.IsZero() || now.Sub(deadSince) < r.o.parentGrace {
				continue
			}
			r.mu.Lock()
			r.endedForParent = true
			r.mu.Unlock()
			r.logf("parent grace over: sending SIGTERM to the child")
			signalChild(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(r.o.endWait):
				r.logf("child still running after %s: sending SIGKILL", r.o.endWait)
				signalChild(syscall.SIGKILL)
			}
			return
		}
	}
}

func (r *wrapRun) parentThresholds() model.Thresholds {
	th := model.DefaultThresholds()
	th.Beat, th.Stale, th.ExitGrace, th.NoPidCheck = r.g.Beat, r.g.Stale, r.g.ExitGrace, r.g.NoPidCheck
	return th
}

// parentDead classifies the parent's heartbeat with the liveness rules
// (SPEC §3): only a dead parent (stale and not alive as the same process, or
// verified gone past the exit grace) counts. A finished parent does not: its
// child is alive and working, and SPEC §7 ends a child only for a dead
// parent (the dashboard shows it orphaned; an operator decides). A parent heartbeat
// that does not exist counts once it has been absent for longer than stale
// since the watch began (a parent may register its child before its own
// heartbeat is written).
func parentDead(path string, probe liveness.Probe, th model.Thresholds, now, watchStart time.Time) (bool, string) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && now.Sub(watchStart) > th.Stale {
			return true, "its heartbeat does not exist"
		}
		return false, ""
	}
	n := &model.Node{
		InfraDir: filepath.Dir(path), HeartbeatPath: path, HasHeartbeat: true, BeatMtime: st.ModTime(),
	}
	if data, err := protocol.ReadFile(path, protocol.MaxDocumentSize); err == nil {
		// A bad field leaves the others, as the dashboard reads them.
		hb, err := protocol.ParseHeartbeat(data)
		if bad := (*protocol.BadFieldsError)(nil); err == nil || errors.As(err, &bad) {
			n.Heartbeat = &hb
		}
	}
	liveness.ClassifyNode(n, probe, now, th)
	if n.State == model.StateDead {
		return true, n.Reason
	}
	return false, ""
}

func stdinIsTerminal(in io.Reader) bool {
	f, ok := in.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// exitCode is the child's exit status as a shell reports it.
func exitCode(ps *os.ProcessState, waitErr error) int {
	if ps == nil {
		if waitErr != nil {
			return 1
		}
		return 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func signalNumber(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return int(s)
	}
	return 1
}

func nowSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
