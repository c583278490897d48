package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/internal/treegen"
)

// binary is the dispatchtop built once for the end-to-end tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dispatchtop-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Readable by all: one test runs it as another user.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "dispatchtop")
	out, err := exec.Command("go", append(append([]string{"build"}, testproc.BuildFlags()...), "-o", binary, ".")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run executes the binary and returns stdout, stderr and the exit code.
func run(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), code
}

// e2eTree writes a small .sessions tree: a live session lead (this test's
// own process, whose create time is read back through ps-free /proc), a
// finished child and a dead child whose pid is gone.
func e2eTree(t *testing.T) (root string, livePid int) {
	t.Helper()
	root = filepath.Join(t.TempDir(), ".sessions")
	sleep := exec.Command("sleep", "300")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	started := testproc.Started(t, sleep.Process.Pid)
	now := time.Now()
	lead := filepath.Join(root, "20261122-050000")
	write := func(dir, name, body string, mtime time.Time) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	leadHB := filepath.Join(lead, ".heartbeat")
	write(lead, ".heartbeat", fmt.Sprintf(`{"pid": %d, "parent_heartbeat": "", "role": "lead", "started": %f, "status": "running"}`, sleep.Process.Pid, started), now.Add(-3*time.Second))
	done := filepath.Join(lead, "plan", "20261122-050100")
	dead := filepath.Join(lead, "code", "20261122-050200")
	write(lead, ".children",
		fmt.Sprintf(`{"heartbeat": %q, "team": "plan", "task_id": null, "status": "active"}`+"\n", filepath.Join(done, ".heartbeat"))+
			fmt.Sprintf(`{"heartbeat": %q, "team": "code", "task_id": "t-2", "status": "active"}`+"\n", filepath.Join(dead, ".heartbeat")),
		now.Add(-time.Minute))
	write(done, ".heartbeat", fmt.Sprintf(`{"pid": 999999, "parent_heartbeat": %q, "role": "plan", "started": 1, "status": "completed"}`, leadHB), now.Add(-time.Minute))
	write(done, ".cfa-state.json", `{"state": "DONE", "history": [], "backtrack_count": 0, "task_id": null}`, now.Add(-time.Minute))
	write(dead, ".heartbeat", fmt.Sprintf(`{"pid": %d, "parent_heartbeat": %q, "role": "code", "started": 1, "status": "running"}`, gone.Process.Pid, leadHB), now.Add(-3*time.Minute))
	return root, sleep.Process.Pid
}

func TestOnceJSONSchemaAndExitCodes(t *testing.T) {
	root, livePid := e2eTree(t)
	stdout, stderr, code := run(t, t.TempDir(), "--once", "--json", "--fail-on", "dead", root)
	if code != 1 {
		t.Fatalf("exit code = %d, want 1 (a dead node, --fail-on dead); stderr: %s", code, stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if doc["schema"] != "dispatchtop/v1" {
		t.Errorf("schema = %v", doc["schema"])
	}
	for _, key := range []string{"generated_at", "roots", "thresholds", "summary", "sessions", "problems"} {
		if _, ok := doc[key]; !ok {
			t.Errorf("document lacks %q", key)
		}
	}
	if doc["pid_check"] != true {
		t.Errorf("pid_check = %v, want true by default", doc["pid_check"])
	}
	th := doc["thresholds"].(map[string]any)
	for key, want := range map[string]float64{"beat_s": 30, "stale_s": 120, "kill_after_s": 300, "exit_grace_s": 5, "start_tolerance_s": 2} {
		if th[key] != want {
			t.Errorf("thresholds.%s = %v, want %v", key, th[key], want)
		}
	}
	if len(th) != 5 {
		t.Errorf("thresholds = %v, want the five of SPEC §4.1", th)
	}
	// Every summary key of SPEC §4.1.
	sum := doc["summary"].(map[string]any)
	for key, want := range map[string]float64{"nodes": 3, "sessions": 1, "running": 1, "dead": 1, "finished": 1, "missing": 0,
		"stalled": 0, "kill_candidate": 0, "blocked": 0, "orphaned": 0, "problems": 0} {
		if got, ok := sum[key]; !ok || got != want {
			t.Errorf("summary.%s = %v (present %v), want %v", key, got, ok, want)
		}
	}
	session := doc["sessions"].([]any)[0].(map[string]any)
	nodeKeys := []string{"id", "infra_dir", "heartbeat", "state", "flags", "reason", "action", "role", "team",
		"task_id", "pid", "started", "status", "beat_age_s", "activity_age_s", "cfa", "retries", "blocked",
		"parent", "children"}
	for _, key := range nodeKeys {
		if _, ok := session[key]; !ok {
			t.Errorf("node lacks %q", key)
		}
	}
	if session["state"] != "running" || session["pid"] != float64(livePid) {
		t.Errorf("lead = %v pid %v, want running pid %d", session["state"], session["pid"], livePid)
	}
	children := session["children"].([]any)
	states := map[string]string{}
	for _, c := range children {
		c := c.(map[string]any)
		states[c["id"].(string)] = c["state"].(string)
		if c["parent"] != session["id"] {
			t.Errorf("child %v parent = %v", c["id"], c["parent"])
		}
	}
	want := map[string]string{"20261122-050000/code/20261122-050200": "dead", "20261122-050000/plan/20261122-050100": "finished"}
	for id, st := range want {
		if states[id] != st {
			t.Errorf("node %s state = %q, want %q (all: %v)", id, states[id], st, states)
		}
	}
	if !strings.Contains(stderr, "--fail-on") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("stderr should be one line naming --fail-on, got %q", stderr)
	}
}

// A one-shot run holds the collector off while its heap is small: over
// 2,000 nodes (several MB, four collections under the default pacing) it
// makes none, and GOGC in the environment still wins.
func TestOnceCollectsNoGarbageWhileItsHeapIsSmall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".sessions")
	if err := treegen.Generate(dir, 200, 10, 3, time.Now()); err != nil {
		t.Fatal(err)
	}
	collections := func(env ...string) int {
		cmd := exec.Command(binary, "--once", "--json", "--fail-on", "none", dir)
		cmd.Env = append(os.Environ(), append([]string{"XDG_CONFIG_HOME=" + t.TempDir(), "GODEBUG=gctrace=1"}, env...)...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("--once --json: %v\n%s", err, stderr.String())
		}
		n := 0
		for _, line := range strings.Split(stderr.String(), "\n") {
			if strings.HasPrefix(line, "gc ") {
				n++
			}
		}
		return n
	}
	if n := collections("GOGC=100"); n == 0 {
		t.Fatal("the tree is too small to prove anything: no collection under GOGC=100")
	}
	if n := collections(); n != 0 {
		t.Errorf("%d collections, want none while the heap is small", n)
	}
}

func TestOnceFailOnSelectsTheExitCode(t *testing.T) {
	root, _ := e2eTree(t)
	tests := []struct {
		name   string
		failOn string
		want   int
	}{
		{"a dead worker its running lead recovers passes by default", "", 0},
		{"dead names it", "dead", 1},
		{"and so does its action", "dead+action:wait", 1},
		{"missing only: none here", "missing", 0},
		{"finished present", "finished", 1},
		{"a flag nobody has", "kill_candidate", 0},
		{"empty list fails on nothing", "none", 0},
		{"unknown name is a usage error", "zombie", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"--once", root}
			if tt.failOn != "" {
				args = append(args, "--fail-on", tt.failOn)
			}
			_, stderr, code := run(t, t.TempDir(), args...)
			if code != tt.want {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.want, stderr)
			}
		})
	}
}

// --no-pid-check: liveness from mtimes alone, and both outputs say so.
func TestOnceNoPidCheckSaysSo(t *testing.T) {
	root, _ := e2eTree(t)
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, stdout string)
	}{
		{name: "JSON pid_check is false", args: []string{"--once", "--json", "--no-pid-check", "--fail-on", "none", root},
			check: func(t *testing.T, stdout string) {
				var doc map[string]any
				if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
					t.Fatal(err)
				}
				if v, ok := doc["pid_check"]; !ok || v != false {
					t.Errorf("pid_check = %v (present %v), want false", v, ok)
				}
			}},
		{name: "the text header notes it", args: []string{"--once", "--no-pid-check", "--fail-on", "none", root},
			check: func(t *testing.T, stdout string) {
				header, _, _ := strings.Cut(stdout, "\n")
				if !strings.Contains(header, "no pid check: liveness from mtimes alone") {
					t.Errorf("header %q does not say the pids were not checked", header)
				}
			}},
		{name: "without it the header says nothing of the kind", args: []string{"--once", "--fail-on", "none", root},
			check: func(t *testing.T, stdout string) {
				if strings.Contains(stdout, "no pid check") {
					t.Errorf("header notes no pid check without the flag:\n%s", stdout)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := run(t, t.TempDir(), tt.args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			tt.check(t, stdout)
		})
	}
}

func TestOnceTextHasNoColourWhenPiped(t *testing.T) {
	root, _ := e2eTree(t)
	stdout, _, _ := run(t, t.TempDir(), "--once", root)
	if strings.Contains(stdout, "\x1b[") {
		t.Errorf("piped text output has escape sequences:\n%q", stdout)
	}
	for _, want := range []string{"✖ dead", "✔ finished", "● running", "20261122-050000/code/20261122-050200", "wait"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("text output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestUnreadableRootIsAUsageError(t *testing.T) {
	_, stderr, code := run(t, t.TempDir(), "--once", filepath.Join(t.TempDir(), "nope"))
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; lines != 1 || !strings.Contains(stderr, "nope") {
		t.Errorf("stderr should be one line that names the root, got %q", stderr)
	}
}

// A root that exists but cannot be listed shows nothing; that must not pass
// for an empty, healthy tree. Root lists any directory, so under root the
// binary runs as nobody.
func TestRootThatCannotBeListedIsAUsageError(t *testing.T) {
	dir, err := os.MkdirTemp("", "dispatchtop-locked-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	locked := filepath.Join(dir, "locked")
	if err := os.MkdirAll(filepath.Join(locked, "S"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	cmd := exec.Command(binary, "--once", locked)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Skipf("cannot run the binary as another user: %v", err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 2 {
		t.Errorf("exit %d, want 2; stdout %q stderr %q", code, stdout.String(), stderr.String())
	}
	msg := strings.TrimSpace(stderr.String())
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "no root could be read") || !strings.Contains(msg, locked) || !strings.Contains(msg, "permission denied") {
		t.Errorf("stderr should be one line naming the root and why, got %q", msg)
	}
}

func TestBadUsageExitsTwo(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"unknown flag", []string{"--bogus"}},
		{"json without once", []string{"--json"}},
		{"negative stale", []string{"--once", "--stale", "-1s"}},
		{"stale not longer than exit-grace", []string{"--once", "--stale", "5s", "--exit-grace", "5s"}},
		{"beat longer than stale", []string{"--once", "--beat", "3m"}},
		{"kill-after shorter than stale", []string{"--once", "--kill-after", "60s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := run(t, t.TempDir(), tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if msg := strings.TrimSpace(stderr); msg == "" || strings.Contains(msg, "\n") {
				t.Errorf("stderr should be one line, got %q", stderr)
			}
		})
	}
}

func TestVersionAndHelp(t *testing.T) {
	out, _, code := run(t, t.TempDir(), "version")
	if code != 0 || !strings.HasPrefix(out, "dispatchtop ") {
		t.Errorf("version: %q exit %d", out, code)
	}
	// What `go version -m` reads from the same binary agrees with it.
	meta, err := exec.Command("go", "version", "-m", binary).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	goVersion, revision := "", "unknown"
	for _, line := range strings.Split(string(meta), "\n") {
		if f := strings.Fields(line); len(f) == 2 && strings.HasSuffix(f[0], ":") && strings.HasPrefix(f[1], "go1") {
			goVersion = f[1]
		} else if v, ok := strings.CutPrefix(strings.TrimSpace(line), "build\tvcs.revision="); ok {
			revision = v[:min(12, len(v))]
		}
	}
	for _, want := range []string{goVersion, "commit " + revision, runtime.GOOS + "/" + runtime.GOARCH} {
		if want == "" || !strings.Contains(out, want) {
			t.Errorf("version printed %q; go version -m says %q, so it should name %q", out, meta, want)
		}
	}
	out, _, code = run(t, t.TempDir(), "--help")
	if code != 0 || !strings.Contains(out, "--once") || !strings.Contains(out, "--fail-on") {
		t.Errorf("help lacks the flags: %q exit %d", out, code)
	}
	out, _, code = run(t, t.TempDir(), "completion", "bash")
	if code != 0 || !strings.Contains(out, "dispatchtop") {
		t.Errorf("bash completion: exit %d", code)
	}
}

// BenchmarkOnceJSON10k is the SPEC §8 figure: the built binary's
// `--once --json` over a 10,000-node tree (1,000 sessions × 10, 3 deep),
// wall time per run including process start.
func BenchmarkOnceJSON10k(b *testing.B) {
	dir := b.TempDir()
	if err := treegen.Generate(dir, 1000, 10, 3, time.Now()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		cmd := exec.Command(binary, "--once", "--json", "--fail-on", "none", dir)
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+dir+"-config")
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			b.Fatalf("--once --json: %v", err)
		}
		if !bytes.Contains(out.Bytes(), []byte(`"nodes": 10000`)) {
			b.Fatalf("output does not hold 10,000 nodes: %.200s", out.String())
		}
	}
}
