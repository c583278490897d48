// Package wrap runs any command as a node of a dispatch tree, under the
// heartbeat protocol (SPEC §7): it registers in the parent's `.children`,
// writes the heartbeat (`starting`, with its own pid) before launch,
// switches it to the child's pid and `running` after, bumps its mtime every
// beat while the child lives, watches the parent, and finalizes it as
// `completed` or `withdrawn` when the child ends. Everything it writes goes
// through protocol; whether the parent is dead is liveness's answer.
package wrap

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

	"github.com/dispatchtop/dispatchtop/internal/exitcode"
	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// The environment a wrapped command is given: its own heartbeat, to pass
// as the parent of its own dispatches, and its infra dir.
const (
	EnvHeartbeat = "DISPATCHTOP_HEARTBEAT"
	EnvInfra     = "DISPATCHTOP_INFRA"
)

// Options configure one wrapped dispatch.
type Options struct {
	Infra  string // the node's infra dir (created; holds .heartbeat); made absolute
	Parent string // the parent's .heartbeat, to register with and watch; "" for a session lead
	Role   string // the role written in the heartbeat; "" means the command's base name
	Team   string // the team named in the heartbeat and the parent's registry
	TaskID string // the task id named in the heartbeat and the parent's registry
	// Thresholds: Beat is the beat; the parent is judged dead by them.
	Thresholds model.Thresholds
	// ParentGrace is how long the child may run on once its parent is dead.
	ParentGrace time.Duration
	// EndWait is how long a child ended for its parent's death gets
	// between SIGTERM and SIGKILL.
	EndWait time.Duration
	// LaunchDelay holds `starting` this long before launching (demo only).
	LaunchDelay time.Duration
	// FreezeAfter stops beating and finalizing after this long, as a hung
	// agent would (demo only).
	FreezeAfter time.Duration
	// The child's streams; wrap's own lines go to Stderr too.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Probe answers the parent's liveness; nil means liveness.SystemProbe.
	Probe liveness.Probe
}

// ExitError is a wrapped dispatch that did not succeed: Code is the child's
// exit code as a shell reports it (128+N when a signal N ended it), or 126
// or 127 when it could not be started, with Err saying why.
type ExitError = exitcode.Error

// dispatch is one wrapped dispatch: the heartbeat, the child and the watchers.
type dispatch struct {
	o      Options
	w      *protocol.HeartbeatWriter
	stderr io.Writer
	probe  liveness.Probe
	// endedForParent is set when the child was ended because its parent died.
	mu             sync.Mutex
	endedForParent bool
}

// Run runs argv (directly, no shell) as a node of a dispatch tree and
// returns once it ended and the heartbeat says so: nil when the child
// exited 0, an *ExitError with its code otherwise. Any other error is the
// protocol failing before the child was started (the infra dir, the
// registration, the first heartbeat). SIGINT, SIGTERM and SIGHUP are
// forwarded to the child.
func Run(o Options, argv []string) error {
	if len(argv) == 0 {
		return errors.New("wrap: no command")
	}
	if o.Thresholds.Beat <= 0 {
		return fmt.Errorf("wrap: the beat must be positive, got %s", o.Thresholds.Beat)
	}
	infra, err := filepath.Abs(o.Infra)
	if err != nil {
		return fmt.Errorf("wrap: infra dir %s: %w", o.Infra, err)
	}
	if o.Parent != "" {
		if o.Parent, err = filepath.Abs(o.Parent); err != nil {
			return fmt.Errorf("wrap: parent %s: %w", o.Parent, err)
		}
	}
	if o.Role == "" {
		o.Role = filepath.Base(argv[0])
	}
	if o.Probe == nil {
		o.Probe = liveness.SystemProbe{}
	}
	w, err := protocol.NewHeartbeatWriter(infra, model.Heartbeat{
		ParentHeartbeat: o.Parent, Role: o.Role,
		HeartbeatOptional: model.OptionalOf(model.HeartbeatOptional{Team: o.Team, TaskID: o.TaskID}),
	})
	if err != nil {
		return fmt.Errorf("wrap: %w", err)
	}
	// Register before anything else exists: the parent's registry is how the
	// tree learns of a dispatch that then fails to start (SPEC §3 missing).
	if o.Parent != "" {
		reg := protocol.Registration{Heartbeat: w.Path(), Team: o.Team, TaskID: o.TaskID}
		if _, err := protocol.Register(o.Parent, reg); err != nil {
			return fmt.Errorf("wrap: %w", err)
		}
	}
	stderr := o.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	r := &dispatch{o: o, w: w, stderr: stderr, probe: o.Probe}
	return r.run(argv)
}

// logf prints one line to stderr: the errors and paths it quotes are
// terminal text.
func (r *dispatch) logf(format string, args ...any) {
	fmt.Fprintln(r.stderr, "dispatchtop wrap: "+termtext.OneLine(fmt.Sprintf(format, args...), 0))
}

func (r *dispatch) run(argv []string) error {
	self := os.Getpid()
	selfStarted, err := protocol.ProcessStarted(self)
	if err != nil {
		selfStarted = nowSeconds(time.Now())
	}
	if err := r.w.Write(model.StatusStarting, self, selfStarted); err != nil {
		return fmt.Errorf("wrap: %w", err)
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

	if r.o.LaunchDelay > 0 {
		select {
		case <-time.After(r.o.LaunchDelay):
		case sig := <-sigs:
			stopBeating()
			r.finalize(model.StatusWithdrawn, self, selfStarted, 128+signalNumber(sig))
			return &ExitError{Code: 128 + signalNumber(sig)}
		}
	}

	child := exec.Command(argv[0], argv[1:]...)
	child.Stdin, child.Stdout, child.Stderr = r.o.Stdin, r.o.Stdout, r.o.Stderr
	child.Env = append(os.Environ(), EnvHeartbeat+"="+r.w.Path(), EnvInfra+"="+r.w.Dir())
	if log, err := openCappedLog(filepath.Join(r.w.Dir(), protocol.WrapLogFile), wrapLogCap); err != nil {
		r.logf("output log: %v", err)
	} else {
		defer log.Close()
		teeOutput(child, log)
	}
	// Off a terminal the child gets its own process group, so that ending
	// it reaches what it started too; on a terminal it stays in the
	// foreground group, where it must be to read the terminal.
	ownGroup := !stdinIsTerminal(r.o.Stdin)
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
	started, err := protocol.ProcessStarted(pid)
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
	if r.o.Parent != "" {
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
func (r *dispatch) frozen() bool { return r.o.FreezeAfter > 0 }

func (r *dispatch) finalize(status string, pid int, started float64, code int) {
	if err := r.w.SetExtra("exit_code", code); err != nil {
		r.logf("%v", err)
	}
	if err := r.w.Write(status, pid, started); err != nil {
		r.logf("%v", err)
	}
}

// beat bumps the heartbeat's mtime every beat until ctx ends (or the freeze
// knob says to stop). A failed beat is reported once per run of failures.
func (r *dispatch) beat(ctx context.Context) {
	tick := time.NewTicker(r.o.Thresholds.Beat)
	defer tick.Stop()
	var freeze <-chan time.Time
	if r.o.FreezeAfter > 0 {
		freeze = time.After(r.o.FreezeAfter)
	}
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-freeze:
			r.logf("frozen after %s: no more beats", r.o.FreezeAfter)
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
func (r *dispatch) watchParent(ctx context.Context, exited <-chan struct{}, signalChild func(syscall.Signal)) {
	tick := time.NewTicker(r.o.Thresholds.Beat)
	defer tick.Stop()
	watchStart := time.Now()
	var deadSince time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			dead, why := parentDead(r.o.Parent, r.probe, r.o.Thresholds, now, watchStart)
			switch {
			case dead && deadSince.IsZero():
				deadSince = now
				r.logf("parent %s is gone (%s); ending the child in %s", r.o.Parent, why, r.o.ParentGrace)
			case !dead && !deadSince.IsZero():
				deadSince = time.Time{}
				r.logf("parent %s is alive again; the child runs on", r.o.Parent)
			}
			if deadSince.IsZero() || now.Sub(deadSince) < r.o.ParentGrace {
				continue
			}
			r.mu.Lock()
			r.endedForParent = true
			r.mu.Unlock()
			r.logf("parent grace over: sending SIGTERM to the child")
			signalChild(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(r.o.EndWait):
				r.logf("child still running after %s: sending SIGKILL", r.o.EndWait)
				signalChild(syscall.SIGKILL)
			}
			return
		}
	}
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

func nowSeconds(t time.Time) float64 { return model.EpochSeconds(t) }
