package demo

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/claudecode"
	"github.com/dispatchtop/dispatchtop/sources/teaparty"
)

// Files the fleet keeps in its dir, beside (never inside) the watched roots.
const (
	ConfigFile = "dispatchtop.toml" // the demo's config: thresholds, resume, merge
	MergeLog   = "merged.log"       // one line per merge the demo's merge command did
	leashFile  = "fleet.leash"      // its removal tells every simulated agent to stop
	logsDir    = "logs"             // each process's stdout and stderr
)

// stopWait bounds each stage of Stop: SIGTERM, then SIGKILL.
const stopWait = 5 * time.Second

// Fleet is a running demo: real processes, the binary re-executed through
// wrap, on compressed time.
type Fleet struct {
	dir string
	exe string

	mu      sync.Mutex
	procs   []*proc
	stopped bool
	// bus counts the writes to a bus still to come (a worker's row closed
	// when it exits); Stop waits for them.
	bus sync.WaitGroup
	// quit is closed when Stop begins: a bus write still to come is not.
	quit chan struct{}
}

// proc is one process the fleet started and reaps.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Start builds the fleet in dir (created if needed; it must not already
// hold one) and starts its processes, exe being the dispatchtop binary. The
// caller must call Stop, which ends every process; dir is the caller's to
// remove. ctx bounds the start only.
func Start(ctx context.Context, dir, exe string) (*Fleet, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	// `.teaparty` whole, not only its jobs: anything there is not ours.
	for _, root := range []string{protocol.SessionsRoot, filepath.Dir(filepath.FromSlash(protocol.JobsRoot)), ClaudeHome} {
		if _, err := os.Stat(filepath.Join(dir, root)); err == nil {
			return nil, fmt.Errorf("demo: %s already holds a fleet (%s exists); remove it or choose another --dir", dir, root)
		}
	}
	for _, d := range []string{filepath.Join(dir, logsDir), filepath.Join(dir, protocol.SessionsRoot), filepath.Join(dir, filepath.FromSlash(protocol.JobsRoot))} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
	}
	f := &Fleet{dir: dir, exe: exe, quit: make(chan struct{})}
	if err := os.WriteFile(f.leash(), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	if err := f.writeConfig(); err != nil {
		return nil, err
	}
	if err := f.launch(ctx, scenario()); err != nil {
		f.Stop()
		return nil, err
	}
	if err := f.startBusJob(busJob()); err != nil {
		f.Stop()
		return nil, err
	}
	if err := f.startClaude(ctx); err != nil {
		f.Stop()
		return nil, err
	}
	return f, nil
}

// Dir is the fleet's directory.
func (f *Fleet) Dir() string { return f.dir }

// Roots are the roots to watch (SPEC §1): the two native trees and the
// Claude Code home, named `claude:` (SPEC §10). With Sources registered
// the jobs dir is read by the TeaParty source too: its leads' heartbeats
// and, in one job's bus, that job's workers.
func (f *Fleet) Roots() []string {
	return append(f.nativeRoots(), string(claudecode.Kind)+":"+f.ClaudeHome())
}

// nativeRoots are the roots of heartbeat trees.
func (f *Fleet) nativeRoots() []string {
	return []string{filepath.Join(f.dir, protocol.SessionsRoot), filepath.Join(f.dir, filepath.FromSlash(protocol.JobsRoot))}
}

// ClaudeHome is the fleet's Claude Code home (never the user's ~/.claude).
func (f *Fleet) ClaudeHome() string { return filepath.Join(f.dir, ClaudeHome) }

// Sources are the sources that read Roots besides the native one.
func Sources() []sources.Source { return []sources.Source{teaparty.New(), claudecode.Source{}} }

// ConfigPath is the demo's config file (outside the roots).
func (f *Fleet) ConfigPath() string { return filepath.Join(f.dir, ConfigFile) }

// MergeLogPath is where the demo's merge command records merges.
func (f *Fleet) MergeLogPath() string { return filepath.Join(f.dir, MergeLog) }

func (f *Fleet) leash() string { return filepath.Join(f.dir, leashFile) }

// Pids are the processes the fleet started itself (wrappers and the legacy
// agent); the agents the wrappers start are named in the heartbeats.
func (f *Fleet) Pids() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	pids := make([]int, 0, len(f.procs))
	for _, p := range f.procs {
		pids = append(pids, p.cmd.Process.Pid)
	}
	return pids
}

// agentArgs is the simulated agent's command line.
func (f *Fleet) agentArgs(behave string, after time.Duration, infra string) []string {
	args := []string{f.exe, "demo-agent", "--behave", behave, "--leash", f.leash(), "--leash-pid", strconv.Itoa(os.Getpid())}
	if after > 0 {
		args = append(args, "--after", after.String())
	}
	if infra != "" {
		args = append(args, "--infra", infra)
	}
	return args
}

// wrapArgs is the wrap command line shared by the scenario and by resume.
func (f *Fleet) wrapArgs(infra, parent, role, team, taskID string) []string {
	th := Thresholds()
	return []string{f.exe, "wrap", "--infra", infra, "--parent", parent, "--role", role, "--team", team,
		"--task-id", taskID, "--beat", th.Beat.String(), "--stale", th.Stale.String(),
		"--exit-grace", th.ExitGrace.String(), "--parent-grace", "30s"}
}

func (f *Fleet) writeConfig() error {
	th := Thresholds()
	resume := f.wrapArgs("{infra_dir}", "{parent_heartbeat}", "{role}", "{team}", "{task_id}")
	resume = append(append(resume, "--"), f.agentArgs(BehaveWork, 0, "")...)
	type argv struct {
		Argv []string `toml:"argv"`
	}
	cfg := struct {
		Beat      string `toml:"beat"`
		Stale     string `toml:"stale"`
		KillAfter string `toml:"kill_after"`
		ExitGrace string `toml:"exit_grace"`
		Resume    argv   `toml:"resume"`
		Merge     argv   `toml:"merge"`
	}{
		Beat: th.Beat.String(), Stale: th.Stale.String(), KillAfter: th.KillAfter.String(), ExitGrace: th.ExitGrace.String(),
		Resume: argv{resume},
		Merge:  argv{[]string{f.exe, "demo-merge", "--log", f.MergeLogPath(), "--id", "{id}", "--infra", "{infra_dir}"}},
	}
	body, err := toml.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("demo: encode config: %w", err)
	}
	header := "# dispatchtop demo: compressed time, and resume/merge wired to the demo's own agents.\n"
	if err := os.WriteFile(f.ConfigPath(), append([]byte(header), body...), 0o644); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

// launch starts the scenario: session leads first, then (once their
// heartbeats exist) the dispatches below them, then the registrations that
// never start.
func (f *Fleet) launch(ctx context.Context, nodes []dispatch) error {
	depth := func(d dispatch) int {
		n := 0
		for p := d.parent; p != ""; n++ {
			p = parentOf(nodes, p)
		}
		return n
	}
	maxDepth := 0
	for _, d := range nodes {
		maxDepth = max(maxDepth, depth(d))
	}
	for level := 0; level <= maxDepth; level++ {
		var started []dispatch
		for _, d := range nodes {
			if depth(d) != level || d.registerOnly {
				continue
			}
			if err := f.startDispatch(d); err != nil {
				return err
			}
			if !d.legacy {
				started = append(started, d)
			}
		}
		if err := f.awaitHeartbeats(ctx, started); err != nil {
			return err
		}
	}
	for _, d := range nodes {
		if !d.registerOnly {
			continue
		}
		reg := protocol.Registration{Heartbeat: d.heartbeat(f.dir), Team: d.team, TaskID: d.taskID}
		if _, err := protocol.Register(filepath.Join(f.dir, filepath.FromSlash(d.parent), protocol.HeartbeatFile), reg); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	return nil
}

func parentOf(nodes []dispatch, id string) string {
	for _, d := range nodes {
		if d.id == id {
			return d.parent
		}
	}
	return ""
}

func (f *Fleet) startDispatch(d dispatch) error {
	infra := d.infra(f.dir)
	var argv []string
	if d.legacy {
		argv = f.agentArgs(d.behave, d.after, infra)
	} else {
		parent := ""
		if d.parent != "" {
			parent = filepath.Join(f.dir, filepath.FromSlash(d.parent), protocol.HeartbeatFile)
		}
		argv = append(f.wrapArgs(infra, parent, d.role, d.team, d.taskID), d.wrap...)
		argv = append(append(argv, "--"), f.agentArgs(d.behave, d.after, "")...)
	}
	_, err := f.spawn(d.id, argv)
	return err
}

// spawn starts argv in its own process group, its output in the fleet's
// logs under name, and reaps it.
func (f *Fleet) spawn(name string, argv []string) (*proc, error) {
	logName := strings.NewReplacer("/", "_", ".", "").Replace(name)
	log, err := os.OpenFile(filepath.Join(f.dir, logsDir, logName+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Dir = f.dir
	// Its own process group: Stop signals the group, and nothing the
	// terminal sends to the dashboard reaches the fleet.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("demo: start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		log.Close()
		close(p.done)
	}()
	f.mu.Lock()
	f.procs = append(f.procs, p)
	f.mu.Unlock()
	return p, nil
}

func (f *Fleet) awaitHeartbeats(ctx context.Context, nodes []dispatch) error {
	deadline := time.Now().Add(10 * time.Second)
	for _, d := range nodes {
		for {
			if _, err := os.Stat(d.heartbeat(f.dir)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("demo: %s wrote no heartbeat within 10s (see %s)", d.id, filepath.Join(f.dir, logsDir))
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("demo: start: %w", ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}

// Stop ends every process of the fleet: the leash is released (agents a
// resume started stop by it), every process group the fleet started gets
// SIGTERM, then SIGKILL after a wait, and any agent a heartbeat still names
// as alive is killed last. It reports what survived, if anything.
func (f *Fleet) Stop() error {
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return nil
	}
	f.stopped = true
	procs := append([]*proc(nil), f.procs...)
	close(f.quit)
	f.mu.Unlock()

	os.Remove(f.leash())
	for _, p := range procs {
		if !p.exited() {
			syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		}
	}
	awaitProcs(procs, stopWait)
	for _, p := range procs {
		if !p.exited() {
			syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		}
	}
	awaitProcs(procs, stopWait)
	f.bus.Wait()

	var survivors []string
	for _, p := range procs {
		if !p.exited() {
			survivors = append(survivors, fmt.Sprintf("%s (pid %d)", p.name, p.cmd.Process.Pid))
		}
	}
	// Agents whose wrapper is gone, and dispatches a resume started: wait
	// for them to follow the leash, then kill what is left.
	deadline := time.Now().Add(stopWait)
	for {
		alive := f.liveAgents()
		if len(alive) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, a := range alive {
				syscall.Kill(a.pid, syscall.SIGKILL)
				survivors = append(survivors, fmt.Sprintf("%s (pid %d, killed)", a.id, a.pid))
			}
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(survivors) > 0 {
		return fmt.Errorf("demo: stop: still running after SIGTERM: %s", strings.Join(survivors, ", "))
	}
	return nil
}

func awaitProcs(procs []*proc, timeout time.Duration) {
	deadline := time.After(timeout)
	for _, p := range procs {
		select {
		case <-p.done:
		case <-deadline:
			return
		}
	}
}

type liveAgent struct {
	id  string
	pid int
}

// liveAgents lists the processes the fleet's non-terminal heartbeats name
// that are alive as the same process.
func (f *Fleet) liveAgents() []liveAgent {
	var alive []liveAgent
	tolerance := Thresholds().StartTolerance.Seconds()
	for _, root := range f.nativeRoots() {
		filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || e.Name() != protocol.HeartbeatFile {
				return nil
			}
			data, err := protocol.ReadFile(path, protocol.MaxDocumentSize)
			if err != nil {
				return nil
			}
			hb, err := protocol.ParseHeartbeat(data)
			if err != nil || hb.PID <= 1 || model.TerminalStatus(hb.Status) || hb.PID == os.Getpid() {
				return nil
			}
			started, err := protocol.ProcessStarted(hb.PID)
			if err != nil || started-hb.Started > tolerance || hb.Started-started > tolerance {
				return nil
			}
			rel, _ := filepath.Rel(f.dir, filepath.Dir(path))
			alive = append(alive, liveAgent{id: filepath.ToSlash(rel), pid: hb.PID})
			return nil
		})
	}
	return alive
}
