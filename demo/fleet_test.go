package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// binary is dispatchtop, built once: the fleet re-executes it as wrap and
// as its simulated agents, and the tests read the fleet through --once.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dispatchtop-demo-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "dispatchtop")
	out, err := exec.Command("go", append(append([]string{"build"}, testproc.BuildFlags()...), "-o", binary, "..")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build dispatchtop: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// onceNode is the part of a dispatchtop/v1 node the tests look at.
type onceNode struct {
	ID       string     `json:"id"`
	InfraDir string     `json:"infra_dir"`
	State    string     `json:"state"`
	Flags    []string   `json:"flags"`
	Action   string     `json:"action"`
	PID      *int       `json:"pid"`
	Source   string     `json:"source"`
	Children []onceNode `json:"children"`
}

// snapshot runs `dispatchtop --once --json` on the fleet with its config.
func snapshot(t *testing.T, f *Fleet) []onceNode {
	t.Helper()
	args := []string{"--once", "--json", "--fail-on", "none", "--config", f.ConfigPath()}
	for _, r := range f.Roots() {
		args = append(args, "--root", r)
	}
	out, stderr, code := runBinary(t, f, args...)
	if code != 0 {
		t.Fatalf("--once exit %d: %s", code, stderr)
	}
	var doc struct {
		Sessions []onceNode `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("--once --json: %v\n%s", err, out)
	}
	var flat []onceNode
	var walk func([]onceNode)
	walk = func(nodes []onceNode) {
		for _, n := range nodes {
			flat = append(flat, n)
			walk(n.Children)
		}
	}
	walk(doc.Sessions)
	return flat
}

func runBinary(t *testing.T, f *Fleet, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = f.Dir()
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(f.Dir(), "xdg"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// seen accumulates what the snapshots showed, per scenario node.
type seen struct {
	states, flags, actions map[string]bool
	byNode                 map[string]map[string]bool // node -> states, flags and "action:X"
	pids                   map[int]bool
}

func newSeen() *seen {
	return &seen{states: map[string]bool{}, flags: map[string]bool{}, actions: map[string]bool{},
		byNode: map[string]map[string]bool{}, pids: map[int]bool{}}
}

func (s *seen) add(f *Fleet, nodes []onceNode) {
	for _, n := range nodes {
		rel, err := filepath.Rel(f.Dir(), n.InfraDir)
		if n.Source == "claude" {
			// No dir of its own: its id under the home, as Layout names it
			// (and as --once names it beside other roots).
			rel, err = ClaudeHome+"/"+strings.TrimPrefix(n.ID, ClaudeHome+"/"), nil
		}
		if err != nil {
			continue
		}
		rel = filepath.ToSlash(rel)
		if s.byNode[rel] == nil {
			s.byNode[rel] = map[string]bool{}
		}
		s.states[n.State] = true
		s.actions[n.Action] = true
		s.byNode[rel][n.State] = true
		s.byNode[rel]["action:"+n.Action] = true
		for _, fl := range n.Flags {
			s.flags[fl] = true
			s.byNode[rel][fl] = true
		}
		if n.PID != nil && *n.PID > 1 {
			s.pids[*n.PID] = true
		}
	}
}

// expectations are what each part of the scenario must show at some point.
func expectations() map[string][]string {
	s1 := protocol.SessionsRoot + "/20261122-090000"
	s2 := protocol.SessionsRoot + "/20261122-091500"
	j1 := protocol.JobsRoot + "/job-101--refactor-parser"
	claudeLead := ClaudeHome + "/c0de1ead-2026-4c1e-9f00-000000110000"
	claudeCrash := ClaudeHome + "/dead0c1a-2026-4c1e-9f00-000000111500"
	return map[string][]string{
		s1:                             {"running", "action:compact"},
		s1 + "/coding/20261122-090105": {"running", "action:none"},
		s1 + "/coding/20261122-090105/unit-tests/20261122-090210": {"running"},
		s1 + "/planning/20261122-090050":                          {"finished"},
		s1 + "/testing/20261122-090110":                           {"quiet", "stalled", "kill_candidate", "action:kill"},
		s1 + "/review/20261122-090120":                            {"blocked", "stalled", "action:answer"},
		s1 + "/design/20261122-090125":                            {"paused"},
		s1 + "/deploy/20261122-090130":                            {"starting", "running"},
		s1 + "/lint/20261122-090135":                              {"quiet"},
		s1 + "/docs/20261122-090140":                              {"missing", "action:wait"},
		s2:                                                        {"dead", "action:resume"},
		s2 + "/coding/20261122-091510":                            {"orphaned"},
		s2 + "/testing/20261122-091515":                           {"dead", "action:wait"},
		protocol.SessionsRoot + "/20261122-093000":                {"finished", "action:merge"},
		protocol.SessionsRoot + "/20261122-094500":                {"finished"},
		protocol.SessionsRoot + "/20261122-080000":                {"legacy", "running"},
		j1:                                   {"running"},
		j1 + "/tasks/task-1--split-lexer":    {"finished"},
		j1 + "/tasks/task-2--port-tests":     {"running"},
		j1 + "/tasks/task-3--fix-flaky-test": {"dead", "action:wait"},
		protocol.JobsRoot + "/job-102--migrate-schema": {"dead", "action:resume"},
		busJob().lead: {"running"},
		// Claude Code: the lead's session busy, waiting on a permission,
		// idle; its teammates, the planner waiting for its plan's
		// approval; its job done; the session hard-killed, dead, and
		// resumed in its cwd as the demo's config says (a session with
		// no cwd would be surfaced).
		claudeLead:                   {"running", "blocked", "idle", "action:answer"},
		claudeLead + "/researcher":   {"running"},
		claudeLead + "/planner":      {"blocked", "action:answer"},
		claudeLead + "/reviewer":     {"running", "finished"},
		claudeLead + "/job-b7e2c9a1": {"running", "finished"},
		claudeCrash:                  {"running", "dead", "action:resume"},
	}
}

// missing lists the expectations not yet met.
func (s *seen) missing() []string {
	var out []string
	for node, wants := range expectations() {
		for _, w := range wants {
			if !s.byNode[node][w] {
				out = append(out, node+": "+w)
			}
		}
	}
	for _, st := range []string{"running", "dead", "finished", "missing"} {
		if !s.states[st] {
			out = append(out, "state "+st)
		}
	}
	for _, fl := range []string{"starting", "quiet", "stalled", "kill_candidate", "blocked", "paused", "orphaned", "legacy"} {
		if !s.flags[fl] {
			out = append(out, "flag "+fl)
		}
	}
	for _, a := range []string{"none", "wait", "answer", "kill", "resume", "merge", "compact"} {
		if !s.actions[a] {
			out = append(out, "action "+a)
		}
	}
	sort.Strings(out)
	return out
}

func pidGone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

func TestDemoShowsEveryStateAndFlagWithinAMinuteAndLeavesNoProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := Start(ctx, t.TempDir(), binary)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			f.Stop()
		}
	}()
	s := newSeen()
	for _, pid := range f.Pids() {
		s.pids[pid] = true
	}
	began := time.Now()
	for time.Since(began) < time.Minute {
		s.add(f, snapshot(t, f))
		if len(s.missing()) == 0 {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	took := time.Since(began)
	if miss := s.missing(); len(miss) > 0 {
		t.Errorf("after %s the fleet has not shown:\n  %s", took.Round(time.Second), strings.Join(miss, "\n  "))
	} else {
		t.Logf("every state, flag and action seen after %s", took.Round(100*time.Millisecond))
	}
	if s.byNode[protocol.SessionsRoot+"/20261122-090000/review/20261122-090120"]["kill_candidate"] {
		t.Error("the blocked agent became a kill candidate")
	}
	if s.flags["unreadable"] {
		t.Error("a demo file was unreadable")
	}

	stopped = true
	if err := f.Stop(); err != nil {
		t.Error(err)
	}
	var left []int
	for pid := range s.pids {
		if !pidGone(pid) {
			left = append(left, pid)
		}
	}
	slices.Sort(left)
	if len(left) > 0 {
		t.Errorf("processes left after Stop: %v (of %d seen)", left, len(s.pids))
	}
	if len(s.pids) < 15 {
		t.Errorf("only %d pids seen; the scenario starts about 20 agents", len(s.pids))
	}
}

func TestStartRefusesADirThatHoldsAFleet(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, protocol.SessionsRoot), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Start(context.Background(), dir, binary)
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("err = %v, want a refusal naming %s", err, dir)
	}
}
