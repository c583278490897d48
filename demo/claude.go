package demo

// The demo's Claude Code home: `claude`-like processes (the binary
// re-executed as `demo-claude`) that each write their own
// sessions/<pid>.json as Claude Code does, a lead with its team, its
// plan approval and its background job, and a session that is hard-killed
// and leaves its file behind reading idle: the crash the Claude Code
// source is there to catch. The home is the fleet's, never ~/.claude.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dispatchtop/dispatchtop/protocol"
)

// ClaudeHome is the fleet's Claude Code home, beside its other roots.
const ClaudeHome = ".claude"

// Claude Code's layout (docs/sources.md, ## Claude Code).
const (
	claudeSessions = "sessions"
	claudeProjects = "projects"
	claudeTeams    = "teams"
	claudeJobs     = "jobs"
)

// claudeStatus is a session's status from a time on.
type claudeStatus struct {
	at         time.Duration
	status     string // busy, idle, waiting
	waitingFor string
}

// claudeMember is a teammate of the lead's team, in-process: it lives and
// dies with its lead's process.
type claudeMember struct {
	name, agentType string
	// plan: the member waits for its lead to approve its plan (a
	// plan_approval_request in the lead's inbox, never answered).
	plan bool
	// doneAt: the member finished (isActive false) at this time; 0 never.
	doneAt time.Duration
}

// claudeSession is one `claude` process of the demo.
type claudeSession struct {
	id   string // its sessionId
	name string
	// statuses cycle: after the last, the cycle starts again at cycle.
	statuses []claudeStatus
	cycle    time.Duration
	// crashAt: the process dies by SIGKILL at this time, its file left
	// behind reading its last status; 0 never.
	crashAt time.Duration
	// team is the team it leads ("" none), with its members.
	team    string
	members []claudeMember
	// job is its background job ("" none): working, done at jobDoneAt.
	job       string
	jobDoneAt time.Duration
}

// claudeScenario is the demo's Claude Code home: with beat 1 s,
//
//   - session c0de1ead… leads team "demo-team": busy, waiting on a
//     permission (blocked, answer) at 3 s, busy again at 6 s, idle at 20 s,
//     and round again every 25 s; its researcher works, its planner waits
//     for its plan to be approved (blocked), its reviewer finishes at 6 s;
//     its background job works and is done at 8 s. Its long busy stretch,
//     6–20 s, holds while the rest of the fleet is at rest (13–20 s of
//     the fleet, the session starting a few seconds after it): the
//     README's screenshot is a frame of that stretch.
//
// A busy session beats: it rewrites its file's updatedAt every
// claudeBusyBeat, as a session at work does, so it is never quiet while it
// works; waiting or idle, it writes nothing until its status changes.
//   - session dead0c1a… is busy, idle at 2 s, and is hard-killed at 5 s:
//     its file stays behind reading idle, its pid gone: dead.
func claudeScenario() []claudeSession {
	return []claudeSession{
		{
			id: "c0de1ead-2026-4c1e-9f00-000000110000", name: "demo lead",
			statuses: []claudeStatus{
				{at: 0, status: "busy"},
				{at: 3 * time.Second, status: "waiting", waitingFor: "approve Bash(go test ./...)"},
				{at: 6 * time.Second, status: "busy"},
				{at: 20 * time.Second, status: "idle"},
			},
			cycle: 25 * time.Second,
			team:  "demo-team",
			members: []claudeMember{
				{name: "researcher", agentType: "general-purpose"},
				{name: "planner", agentType: "Plan", plan: true},
				{name: "reviewer", agentType: "code-reviewer", doneAt: 6 * time.Second},
			},
			job: "b7e2c9a1", jobDoneAt: 8 * time.Second,
		},
		{
			id: "dead0c1a-2026-4c1e-9f00-000000111500", name: "demo crash",
			statuses: []claudeStatus{
				{at: 0, status: "busy"},
				{at: 2 * time.Second, status: "idle"},
			},
			crashAt: 5 * time.Second,
		},
	}
}

// claudeBusyBeat is how often a busy session rewrites its updatedAt: half
// the demo's beat (1 s), so its last update is never a beat old.
const claudeBusyBeat = 500 * time.Millisecond

func claudeSessionByID(id string) (claudeSession, bool) {
	for _, s := range claudeScenario() {
		if s.id == id {
			return s, true
		}
	}
	return claudeSession{}, false
}

// statusAt is the session's status at elapsed.
func (s claudeSession) statusAt(elapsed time.Duration) claudeStatus {
	if s.cycle > 0 && elapsed >= s.cycle {
		elapsed %= s.cycle
	}
	cur := s.statuses[0]
	for _, st := range s.statuses {
		if elapsed >= st.at {
			cur = st
		}
	}
	return cur
}

// ClaudeOptions configure one `claude`-like process of the demo.
type ClaudeOptions struct {
	// Home is the Claude Code home it writes in.
	Home string
	// Session is its sessionId, one of the demo's scenario.
	Session string
	// Leash and LeashPID end it as they end a simulated agent.
	Leash    string
	LeashPID int
	// Tick is how often it looks at its script (default 250ms).
	Tick time.Duration
}

// RunClaude runs a `claude`-like session of the demo's scenario until its
// script crashes it, its leash is released or ctx is done (a clean exit:
// its session file is removed, as Claude Code removes it), and returns the
// exit code.
func RunClaude(ctx context.Context, o ClaudeOptions) (int, error) {
	s, ok := claudeSessionByID(o.Session)
	if !ok {
		return 2, fmt.Errorf("demo-claude: no session %q in the demo's scenario", o.Session)
	}
	if o.Home == "" {
		return 2, errors.New("demo-claude: no --home")
	}
	if o.Tick <= 0 {
		o.Tick = 250 * time.Millisecond
	}
	c, err := newClaude(o, s)
	if err != nil {
		return 1, err
	}
	return c.run(ctx)
}

type claude struct {
	o         ClaudeOptions
	s         claudeSession
	pid       int
	procStart string
	began     time.Time
	cwd       string
	// written: the last status written, the members done, the job's state.
	status     claudeStatus
	wrote      time.Duration // when the session file was last written
	statusAt   int64         // statusUpdatedAt (ms): when the status last changed
	done       map[string]bool
	jobState   string
	transcript int // lines written
}

func newClaude(o ClaudeOptions, s claudeSession) (*claude, error) {
	pid := os.Getpid()
	start, err := procStart(pid)
	if err != nil {
		return nil, fmt.Errorf("demo-claude: procStart of pid %d: %w", pid, err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("demo-claude: %w", err)
	}
	return &claude{o: o, s: s, pid: pid, procStart: start, began: time.Now(), cwd: cwd, done: map[string]bool{}}, nil
}

func (c *claude) sessionFile() string {
	return filepath.Join(c.o.Home, claudeSessions, strconv.Itoa(c.pid)+".json")
}

func (c *claude) run(ctx context.Context) (int, error) {
	// The team and its job first: the session file, written last, says
	// the whole session is there.
	if err := c.step(0, true); err != nil {
		return 1, err
	}
	tick := time.NewTicker(c.o.Tick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return c.exit()
		case <-tick.C:
		}
		if leashReleased(c.o.Leash, c.o.LeashPID) {
			return c.exit()
		}
		elapsed := time.Since(c.began)
		if c.s.crashAt > 0 && elapsed >= c.s.crashAt {
			// No cleanup: the file stays, reading the last status.
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			return 128 + int(syscall.SIGKILL), nil
		}
		if err := c.step(elapsed, false); err != nil {
			return 1, err
		}
	}
}

// exit is Claude Code's clean exit: its session file goes.
func (c *claude) exit() (int, error) {
	if err := os.Remove(c.sessionFile()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 1, fmt.Errorf("demo-claude: %w", err)
	}
	return ExitLeashed, nil
}

// step writes what changed by elapsed: the team, the job, the status, and
// a line of the transcript every second.
func (c *claude) step(elapsed time.Duration, first bool) error {
	if c.s.team != "" {
		changed := first
		for _, m := range c.s.members {
			if m.doneAt > 0 && elapsed >= m.doneAt && !c.done[m.name] {
				c.done[m.name], changed = true, true
			}
		}
		if changed {
			if err := c.writeTeam(first); err != nil {
				return err
			}
		}
	}
	if c.s.job != "" {
		state := "working"
		if c.s.jobDoneAt > 0 && elapsed >= c.s.jobDoneAt {
			state = "done"
		}
		if state != c.jobState {
			if err := c.writeJob(state); err != nil {
				return err
			}
			c.jobState = state
		}
	}
	st := c.s.statusAt(elapsed)
	beat := st.status == "busy" && elapsed-c.wrote >= claudeBusyBeat
	if first || st != c.status || beat {
		statusChanged := first || st != c.status
		c.status, c.wrote = st, elapsed
		if err := c.writeSession(statusChanged); err != nil {
			return err
		}
	}
	if lines := int(elapsed/time.Second) + 1; lines > c.transcript {
		if err := c.appendTranscript(lines - c.transcript); err != nil {
			return err
		}
		c.transcript = lines
	}
	return nil
}

func (c *claude) writeJSON(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("demo-claude: encode %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("demo-claude: %w", err)
	}
	if err := protocol.WriteFileAtomic(path, append(data, '\n')); err != nil {
		return fmt.Errorf("demo-claude: %w", err)
	}
	return nil
}

// writeSession writes sessions/<pid>.json with the fields Claude Code
// writes (docs/sources.md, ## Claude Code): updatedAt now, and
// statusUpdatedAt too when the status changed (a beat leaves it).
func (c *claude) writeSession(statusChanged bool) error {
	now := time.Now().UnixMilli()
	if statusChanged {
		c.statusAt = now
	}
	rec := map[string]any{
		"pid": c.pid, "procStart": c.procStart, "startedAt": c.began.UnixMilli(), "sessionId": c.s.id,
		"cwd": c.cwd, "kind": "interactive", "entrypoint": "cli", "version": "demo",
		"status": c.status.status, "updatedAt": now, "statusUpdatedAt": c.statusAt, "name": c.s.name,
	}
	if c.status.waitingFor != "" {
		rec["waitingFor"] = c.status.waitingFor
	}
	return c.writeJSON(c.sessionFile(), rec)
}

// writeTeam writes teams/<team>/config.json (the lead listed first, with
// no pane), and on the first write the lead's inbox with the plan
// approvals its members asked for.
func (c *claude) writeTeam(first bool) error {
	dir := filepath.Join(c.o.Home, claudeTeams, c.s.team)
	joined := c.began.UnixMilli()
	members := []map[string]any{{"agentId": "team-lead@" + c.s.team, "name": "team-lead", "agentType": "team-lead",
		"joinedAt": joined, "tmuxPaneId": "", "cwd": c.cwd}}
	var inbox []map[string]any
	for _, m := range c.s.members {
		members = append(members, map[string]any{"agentId": m.name + "@" + c.s.team, "name": m.name, "agentType": m.agentType,
			"model": "claude-demo", "joinedAt": joined, "tmuxPaneId": "in-process", "backendType": "in-process",
			"isActive": !c.done[m.name], "cwd": c.cwd})
		if m.plan {
			req, _ := json.Marshal(map[string]any{"type": "plan_approval_request", "from": m.name,
				"requestId": "plan-" + m.name + "@" + c.s.team, "planFilePath": filepath.Join(c.cwd, "PLAN.md")})
			inbox = append(inbox, map[string]any{"from": m.name, "text": string(req),
				"timestamp": c.began.UTC().Format(time.RFC3339Nano), "read": false})
		}
	}
	if err := c.writeJSON(filepath.Join(dir, "config.json"), map[string]any{"name": c.s.team,
		"description": "the demo's team", "createdAt": joined, "leadAgentId": "team-lead@" + c.s.team,
		"leadSessionId": c.s.id, "members": members}); err != nil {
		return err
	}
	if first {
		return c.writeJSON(filepath.Join(dir, "inboxes", "team-lead.json"), inbox)
	}
	return nil
}

// writeJob writes jobs/<id>/state.json.
func (c *claude) writeJob(state string) error {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	rec := map[string]any{"state": state, "sessionId": c.s.id, "name": "upgrade the linter", "intent": "run the linter's upgrade in the background",
		"cwd": c.cwd, "createdAt": c.began.UTC().Format(time.RFC3339Nano), "updatedAt": now, "cliVersion": "demo"}
	if state == "done" {
		rec["firstTerminalAt"] = now
	}
	return c.writeJSON(filepath.Join(c.o.Home, claudeJobs, c.s.job, "state.json"), rec)
}

// appendTranscript appends n lines to projects/<slug>/<sessionId>.jsonl,
// the slug being the cwd as Claude Code names its project dir.
func (c *claude) appendTranscript(n int) error {
	slug := strings.NewReplacer("/", "-", ".", "-").Replace(c.cwd)
	path := filepath.Join(c.o.Home, claudeProjects, slug, c.s.id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("demo-claude: %w", err)
	}
	var b strings.Builder
	for i := range n {
		line, _ := json.Marshal(map[string]any{"type": "assistant", "sessionId": c.s.id, "cwd": c.cwd,
			"timestamp": time.Now().UTC().Format(time.RFC3339Nano),
			"message":   map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": fmt.Sprintf("step %d", c.transcript+i+1)}}}})
		b.Write(append(line, '\n'))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("demo-claude: %w", err)
	}
	_, err = f.WriteString(b.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("demo-claude: write %s: %w", path, err)
	}
	return nil
}

// procStart is pid's procStart as Claude Code writes it: on Linux field 22
// of /proc/<pid>/stat (start ticks since boot), elsewhere `ps`'s lstart.
func procStart(pid int) (string, error) {
	if runtime.GOOS == "linux" {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return "", err
		}
		// The command name (field 2) may hold spaces: count after its ')'.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			return "", fmt.Errorf("/proc/%d/stat: no command name", pid)
		}
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) < 20 {
			return "", fmt.Errorf("/proc/%d/stat: %d fields after the command name", pid, len(fields))
		}
		return fields[22-3], nil
	}
	out, err := exec.Command("ps", "-o", "lstart=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return "", fmt.Errorf("ps -o lstart= -p %d: %w", pid, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// startClaude starts each session of the Claude Code scenario in the
// fleet's dir (its cwd) and waits for its session file.
func (f *Fleet) startClaude(ctx context.Context) error {
	home := f.ClaudeHome()
	for _, sub := range []string{claudeSessions, claudeProjects} {
		if err := os.MkdirAll(filepath.Join(home, sub), 0o755); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	for _, s := range claudeScenario() {
		argv := []string{f.exe, "demo-claude", "--home", home, "--session", s.id, "--leash", f.leash(),
			"--leash-pid", strconv.Itoa(os.Getpid())}
		p, err := f.spawn(ClaudeHome+"/"+s.id, argv)
		if err != nil {
			return err
		}
		file := filepath.Join(home, claudeSessions, strconv.Itoa(p.cmd.Process.Pid)+".json")
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, err := os.Stat(file); err == nil {
				break
			}
			if p.exited() || time.Now().After(deadline) {
				return fmt.Errorf("demo: Claude Code session %s wrote no %s within 10s (see %s)", s.id, file, filepath.Join(f.dir, logsDir))
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
