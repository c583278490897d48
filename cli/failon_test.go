package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// SPEC §4: --fail-on takes states, flags and actions (action:NAME; also
// state:NAME and flag:NAME), comma-separated terms any of which fails, each
// term atoms joined by + that must all hold.
func TestFailOnMatchesStatesFlagsAndActions(t *testing.T) {
	node := func(state model.State, action model.Action, flags ...model.Flag) *model.Node {
		return &model.Node{ID: "n", State: state, Action: action, Flags: flags}
	}
	deadWaiting := node(model.StateDead, model.ActionWait)
	deadResumable := node(model.StateDead, model.ActionResume)
	deadSpent := node(model.StateDead, model.ActionSurface)
	deadBlocked := node(model.StateDead, model.ActionAnswer, model.FlagBlocked)
	deadMergeable := node(model.StateDead, model.ActionMerge)
	stuck := node(model.StateRunning, model.ActionKill, model.FlagStalled, model.FlagKillCandidate)
	orphan := node(model.StateRunning, model.ActionNone, model.FlagOrphaned)
	tests := []struct {
		name  string
		list  string
		node  *model.Node
		match bool
	}{
		{"default: a dead worker its running lead recovers passes", defaultFailOn, deadWaiting, false},
		{"default: a dead node to resume fails", defaultFailOn, deadResumable, true},
		{"default: a dead node to surface fails", defaultFailOn, deadSpent, true},
		{"default: a dead node waiting for an answer fails", defaultFailOn, deadBlocked, true},
		{"default: a dead node whose work succeeded waits for its merge", defaultFailOn, deadMergeable, false},
		{"default: a kill candidate fails", defaultFailOn, stuck, true},
		{"default: an orphan passes", defaultFailOn, orphan, false},
		{"a bare state", "dead", deadWaiting, true},
		{"a bare flag", "orphaned", orphan, true},
		{"an action", "action:kill", stuck, true},
		{"an action that is not the node's", "action:resume", stuck, false},
		{"prefixed state and flag", "state:running+flag:kill_candidate", stuck, true},
		{"every atom of a term must hold", "dead+action:resume", deadWaiting, false},
		{"any term may fail", "finished,action:wait", deadWaiting, true},
		{"spaces around names", " dead + action:wait , missing", deadWaiting, true},
		{"none fails on nothing", "none", deadResumable, false},
		{"action:none is the action none", "action:none", orphan, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := parseFailOn(tt.list)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.matches(tt.node); got != tt.match {
				t.Fatalf("--fail-on %q on %s/%s%v: match %v, want %v", tt.list, tt.node.State, tt.node.Action, tt.node.Flags, got, tt.match)
			}
		})
	}
}

// SPEC §4: a name --fail-on does not know is bad usage that says what it
// knows.
func TestFailOnRejectsUnknownNames(t *testing.T) {
	tests := []struct {
		list string
		want string
	}{
		{"zombie", `unknown state or flag "zombie"`},
		{"action:frobnicate", `unknown action "frobnicate"`},
		{"resume", `"resume" is an action: write action:resume`},
		{"state:quiet", `unknown state "quiet"`},
		{"flag:dead", `unknown flag "dead"`},
		{"dead+", "empty name"},
		{"kind:dead", `unknown kind "kind"`},
	}
	for _, tt := range tests {
		t.Run(tt.list, func(t *testing.T) {
			_, err := parseFailOn(tt.list)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to say %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), "action:kill") {
				t.Errorf("err = %v, want it to list the actions", err)
			}
		})
	}
}

// recoveringLeadFixture writes a root with a running session lead whose
// worker died (the lead recovers it: action wait), and returns the root.
// With deadLead, a second session is a dead lead with retries left
// (action resume).
func recoveringLeadFixture(t *testing.T, deadLead bool) string {
	t.Helper()
	root := t.TempDir()
	sleep := exec.Command("sleep", "100")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	gone := sleep.Process.Pid
	_ = sleep.Process.Kill()
	_ = sleep.Wait()
	write := func(rel string, v map[string]any, age time.Duration) {
		t.Helper()
		p := filepath.Join(root, rel, ".heartbeat")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-age)
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}
	started := float64(time.Now().Add(-time.Hour).Unix())
	write("lead", map[string]any{"pid": 0, "parent_heartbeat": "", "role": "lead", "status": "running"}, 0)
	write("lead/code/1", map[string]any{"pid": gone, "parent_heartbeat": filepath.Join(root, "lead", ".heartbeat"),
		"role": "code", "started": started, "status": "running"}, 10*time.Minute)
	if deadLead {
		write("crashed", map[string]any{"pid": gone, "parent_heartbeat": "", "role": "lead", "started": started, "status": "running"}, 10*time.Minute)
	}
	return root
}

// SPEC §4: the default --fail-on fails on dead nodes nobody is recovering
// and on kill candidates, not on a dead worker its running lead recovers.
func TestOnceDefaultFailOnIsDeadNodesNobodyRecovers(t *testing.T) {
	tests := []struct {
		name     string
		deadLead bool
		args     []string
		want     int
	}{
		{name: "a dead worker its lead recovers passes", want: ExitOK},
		{name: "--fail-on dead still fails on it", args: []string{"--fail-on", "dead"}, want: ExitFound},
		{name: "--fail-on action:wait names it", args: []string{"--fail-on", "action:wait"}, want: ExitFound},
		{name: "a dead lead nobody recovers fails", deadLead: true, want: ExitFound},
		{name: "--fail-on none passes it", deadLead: true, args: []string{"--fail-on", "none"}, want: ExitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			root := recoveringLeadFixture(t, tt.deadLead)
			stdout, stderr, code := execute(t, append(append([]string{"--once"}, tt.args...), root)...)
			if code != tt.want {
				t.Fatalf("exit %d, want %d; stderr %q\n%s", code, tt.want, stderr, stdout)
			}
			if !strings.Contains(stdout, "lead/code/1") || !strings.Contains(stdout, "dead") {
				t.Fatalf("the dead worker is not in the snapshot:\n%s", stdout)
			}
		})
	}
}

// SPEC §4: --once or recover over roots that hold no tree at all is bad
// usage (a job run from the wrong directory), one line naming the roots and
// the layouts looked for, unless --allow-empty.
func TestOnceOrRecoverWithNoTreeIsAUsageError(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		want       int
		wantStdout string
		wantStderr []string
	}{
		{name: "text", args: []string{"--once"}, want: ExitUsage,
			wantStderr: []string{"no tree found under", ".sessions/<ts>/.heartbeat", ".teaparty/jobs/job-<id>--<slug>/.heartbeat", "--allow-empty"}},
		{name: "json", args: []string{"--once", "--json"}, want: ExitUsage, wantStderr: []string{"no tree found under"}},
		{name: "--allow-empty accepts it", args: []string{"--once", "--allow-empty"}, want: ExitOK, wantStdout: "0 sessions, 0 nodes"},
		{name: "--allow-empty with json", args: []string{"--once", "--json", "--allow-empty"}, want: ExitOK, wantStdout: `"sessions": []`},
		{name: "--allow-empty needs --once", args: []string{"--allow-empty"}, want: ExitUsage, wantStderr: []string{"--allow-empty needs --once"}},
		{name: "recover", args: []string{"recover"}, want: ExitUsage, wantStderr: []string{"no tree found under", "--allow-empty"}},
		{name: "recover --apply", args: []string{"recover", "--apply"}, want: ExitUsage, wantStderr: []string{"no tree found under"}},
		{name: "recover --json", args: []string{"recover", "--json"}, want: ExitUsage, wantStderr: []string{"no tree found under"}},
		{name: "recover --allow-empty", args: []string{"recover", "--allow-empty"}, want: ExitOK, wantStdout: "nothing to recover"},
		{name: "recover --allow-empty --json", args: []string{"recover", "--json", "--allow-empty"}, want: ExitOK, wantStdout: `"steps": []`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			dir := t.TempDir()
			t.Chdir(dir)
			if err := os.MkdirAll(filepath.Join(dir, "src", "deep"), 0o755); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := execute(t, tt.args...)
			if code != tt.want {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tt.want, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.wantStdout) {
				t.Errorf("stdout %q lacks %q", stdout, tt.wantStdout)
			}
			if tt.want == ExitUsage {
				if stdout != "" {
					t.Errorf("a usage error printed a snapshot: %q", stdout)
				}
				if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
					t.Errorf("stderr is not one line: %q", stderr)
				}
			}
			for _, want := range tt.wantStderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q lacks %q", stderr, want)
				}
			}
			if tt.name == "text" && !strings.Contains(stderr, dir) {
				resolved, _ := filepath.EvalSymlinks(dir)
				if !strings.Contains(stderr, resolved) {
					t.Errorf("stderr %q does not name the root %s", stderr, dir)
				}
			}
		})
	}
}

// SPEC §4, §5.1: a record of pid 1 — its real create time as started, so
// the identity verifies — stalled far past kill-after is no kill candidate
// (kill never signals pid 1): the default --fail-on, which fails on
// kill_candidate and action:kill, passes it.
func TestTheDefaultFailOnPassesAStalledRecordOfPid1(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	started, err := protocol.ProcessStarted(1)
	if err != nil {
		t.Skipf("pid 1 cannot be read here: %v", err)
	}
	if boot := testproc.Boot(t); started < model.EpochSeconds(boot) {
		// Only a simulated boot (liveness.simulatedBoot) comes after init.
		t.Skipf("pid 1 started before the boot (%v): no host is like this one", boot)
	}
	root := t.TempDir()
	hb := filepath.Join(root, "init", ".heartbeat")
	if err := os.MkdirAll(filepath.Dir(hb), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"pid": 1, "parent_heartbeat": "", "role": "agent", "started": started, "status": "running"})
	if err := os.WriteFile(hb, b, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-3 * time.Hour)
	if err := os.Chtimes(hb, old, old); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Execute([]string{"--once", "--json", root}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q: want 0, a record of pid 1 is never a kill candidate\n%s", code, stderr.String(), stdout.String())
	}
	flagged := regexp.MustCompile(`"flags": \[[^\]]*"kill_candidate"`)
	if out := stdout.String(); flagged.MatchString(out) || !strings.Contains(out, "pid 1 is never signalled") {
		t.Errorf("the document shows no reason why pid 1 is not killed, or flags it:\n%s", out)
	}
}
