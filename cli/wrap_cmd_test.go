package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// wrapHelperEnv makes the test binary act as `dispatchtop`: the wrap tests
// re-execute it so that wrap runs as its own process, as in production.
const wrapHelperEnv = "DISPATCHTOP_WRAP_TEST_HELPER"

// TestWrapHelperProcess is not a test: it is the `dispatchtop` the other
// tests of this file start (everything after the first "--" is its command
// line).
func TestWrapHelperProcess(t *testing.T) {
	if os.Getenv(wrapHelperEnv) != "1" {
		return
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(Execute(args, os.Stdin, os.Stdout, os.Stderr))
}

// wrapProc is a running `dispatchtop wrap`.
type wrapProc struct {
	cmd            *exec.Cmd
	stdout, stderr *bytes.Buffer
	done           chan struct{}
	code           int
}

func startWrap(t *testing.T, args ...string) *wrapProc {
	t.Helper()
	argv := append([]string{"-test.run=^TestWrapHelperProcess$", "--"}, args...)
	cmd := exec.Command(os.Args[0], argv...)
	cmd.Env = append(os.Environ(), wrapHelperEnv+"=1")
	p := &wrapProc{cmd: cmd, stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			p.code = exit.ExitCode()
		} else if err != nil {
			p.code = -1
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
		// Off a terminal the child leads its own process group: a test that
		// failed half-way must not leave it (or what it started) running.
		for i, a := range args {
			if a != "--infra" || i+1 >= len(args) {
				continue
			}
			if data, err := os.ReadFile(filepath.Join(args[i+1], ".heartbeat")); err == nil {
				var hb struct{ PID int }
				if json.Unmarshal(data, &hb) == nil && hb.PID > 1 && hb.PID != cmd.Process.Pid {
					_ = syscall.Kill(-hb.PID, syscall.SIGKILL)
				}
			}
		}
	})
	return p
}

// wait returns the exit code, failing the test after timeout.
func (p *wrapProc) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(timeout):
		t.Fatalf("wrap still running after %s; stderr:\n%s", timeout, p.stderr)
		return -1
	}
}

func (p *wrapProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

type wrapHeartbeatOnDisk struct {
	model.Heartbeat
	ExitCode *int `json:"exit_code"`
	Mtime    time.Time
}

func wrapReadHB(t *testing.T, path string) (wrapHeartbeatOnDisk, bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return wrapHeartbeatOnDisk{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	var hb wrapHeartbeatOnDisk
	if err := json.Unmarshal(data, &hb); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	if err := json.Unmarshal(data, &hb.Heartbeat); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	hb.Mtime = st.ModTime()
	return hb, true
}

// wrapWaitStatus polls the heartbeat until its status is want.
func wrapWaitStatus(t *testing.T, p *wrapProc, path, want string, timeout time.Duration) wrapHeartbeatOnDisk {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if hb, ok := wrapReadHB(t, path); ok && hb.Status == want {
			return hb
		}
		time.Sleep(20 * time.Millisecond)
	}
	hb, _ := wrapReadHB(t, path)
	t.Fatalf("heartbeat status %q after %s, want %q; wrap stderr:\n%s", hb.Status, timeout, want, p.stderr)
	return hb
}

func wrapPidAlive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

func TestWrapStartingRunningBeatingCompleted(t *testing.T) {
	infra := filepath.Join(t.TempDir(), "node")
	hbPath := filepath.Join(infra, ".heartbeat")
	p := startWrap(t, "wrap", "--infra", infra, "--role", "coder", "--beat", "100ms",
		"--launch-delay", "1s", "--", "sh", "-c", "sleep 1; echo out-$DISPATCHTOP_HEARTBEAT")

	// Before launch: starting, with the wrapper's own pid and create time.
	starting := wrapWaitStatus(t, p, hbPath, model.StatusStarting, 5*time.Second)
	if starting.PID != p.cmd.Process.Pid {
		t.Errorf("starting pid = %d, want the wrapper's %d", starting.PID, p.cmd.Process.Pid)
	}
	if own, err := protocol.ProcessStarted(p.cmd.Process.Pid); err != nil || wrapAbsDiff(own-starting.Started) > 0.05 {
		t.Errorf("starting started = %.3f, wrapper create time %.3f (%v)", starting.Started, own, err)
	}
	if starting.Role != "coder" || starting.ParentHeartbeat != "" {
		t.Errorf("role %q parent %q, want coder and a session lead", starting.Role, starting.ParentHeartbeat)
	}

	// After launch: running with the child's pid and its create time.
	running := wrapWaitStatus(t, p, hbPath, model.StatusRunning, 5*time.Second)
	if running.PID == p.cmd.Process.Pid || !wrapPidAlive(running.PID) {
		t.Fatalf("running pid = %d: want the live child, not the wrapper %d", running.PID, p.cmd.Process.Pid)
	}
	if childStarted, err := protocol.ProcessStarted(running.PID); err != nil || wrapAbsDiff(childStarted-running.Started) > 0.05 {
		t.Errorf("running started = %.3f, child create time %.3f (%v)", running.Started, childStarted, err)
	}

	// Beats bump the mtime while the child lives.
	first := running.Mtime
	time.Sleep(350 * time.Millisecond)
	if later, _ := wrapReadHB(t, hbPath); !later.Mtime.After(first) {
		t.Errorf("mtime did not advance while running: %v then %v", first, later.Mtime)
	}

	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, p.stderr)
	}
	final, _ := wrapReadHB(t, hbPath)
	if final.Status != model.StatusCompleted || final.ExitCode == nil || *final.ExitCode != 0 || final.PID != running.PID {
		t.Errorf("final heartbeat = %+v, want completed, exit_code 0, the child's pid", final)
	}
	if want := "out-" + hbPath; !strings.Contains(p.stdout.String(), want) {
		t.Errorf("child stdout %q lacks %q (DISPATCHTOP_HEARTBEAT)", p.stdout, want)
	}
	// No beat after the child exited.
	time.Sleep(300 * time.Millisecond)
	if after, _ := wrapReadHB(t, hbPath); !after.Mtime.Equal(final.Mtime) {
		t.Errorf("heartbeat touched after exit: %v then %v", final.Mtime, after.Mtime)
	}
	if _, err := os.Stat(filepath.Join(infra, ".heartbeat.tmp")); !os.IsNotExist(err) {
		t.Errorf(".heartbeat.tmp left behind")
	}
}

func TestWrapFinalStatusAndExitCodePassThrough(t *testing.T) {
	tests := []struct {
		name       string
		argv       []string
		wantCode   int
		wantStatus string
	}{
		{"exit 0 is completed", []string{"true"}, 0, model.StatusCompleted},
		{"non-zero exit is withdrawn with its code", []string{"sh", "-c", "exit 3"}, 3, model.StatusWithdrawn},
		{"killed by a signal is withdrawn, 128+N", []string{"sh", "-c", "kill -9 $$"}, 137, model.StatusWithdrawn},
		{"a command that cannot start is withdrawn, 127", []string{"no-such-command-anywhere"}, 127, model.StatusWithdrawn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			infra := t.TempDir()
			p := startWrap(t, append([]string{"wrap", "--infra", infra, "--beat", "100ms", "--"}, tt.argv...)...)
			if code := p.wait(t, 10*time.Second); code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.wantCode, p.stderr)
			}
			hb, ok := wrapReadHB(t, filepath.Join(infra, ".heartbeat"))
			if !ok {
				t.Fatal("no heartbeat written")
			}
			if hb.Status != tt.wantStatus || hb.ExitCode == nil || *hb.ExitCode != tt.wantCode {
				t.Errorf("heartbeat status %q exit_code %v, want %q %d", hb.Status, hb.ExitCode, tt.wantStatus, tt.wantCode)
			}
		})
	}
}

func TestWrapForwardsSignalsToTheChild(t *testing.T) {
	tests := []struct {
		name string
		sig  syscall.Signal
		code int
	}{
		{"SIGTERM", syscall.SIGTERM, 11},
		{"SIGINT", syscall.SIGINT, 12},
		{"SIGHUP", syscall.SIGHUP, 13},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			infra := t.TempDir()
			hbPath := filepath.Join(infra, ".heartbeat")
			// The child says it is ready once its trap is installed.
			script := fmt.Sprintf(`trap 'echo got-%s; exit %d' %s; touch "$DISPATCHTOP_INFRA/ready"; while :; do sleep 0.05; done`,
				strings.TrimPrefix(tt.name, "SIG"), tt.code, strings.TrimPrefix(tt.name, "SIG"))
			p := startWrap(t, "wrap", "--infra", infra, "--beat", "100ms", "--", "sh", "-c", script)
			running := wrapWaitStatus(t, p, hbPath, model.StatusRunning, 5*time.Second)
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(filepath.Join(infra, "ready")); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the child never installed its trap")
				}
			}
			if err := p.cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(t, 10*time.Second); code != tt.code {
				t.Errorf("exit %d, want the child's %d; stderr:\n%s", code, tt.code, p.stderr)
			}
			if want := "got-" + strings.TrimPrefix(tt.name, "SIG"); !strings.Contains(p.stdout.String(), want) {
				t.Errorf("child did not see the signal: stdout %q", p.stdout)
			}
			if hb, _ := wrapReadHB(t, hbPath); hb.Status != model.StatusWithdrawn {
				t.Errorf("status %q, want withdrawn", hb.Status)
			}
			if wrapPidAlive(running.PID) {
				t.Errorf("child %d still alive", running.PID)
			}
		})
	}
}

func TestWrapRegistersInTheParentsChildrenBeforeStarting(t *testing.T) {
	parentDir := t.TempDir()
	parentHB := filepath.Join(parentDir, ".heartbeat")
	// A live parent: this test process.
	self, err := protocol.ProcessStarted(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	wrapWriteParent(t, parentHB, os.Getpid(), self, time.Now())
	infra := filepath.Join(parentDir, "coding", "20261122-080000")
	p := startWrap(t, "wrap", "--infra", infra, "--parent", parentHB, "--team", "coding", "--task-id", "t-7",
		"--beat", "100ms", "--launch-delay", "1s", "--", "true")
	// The registration is there while the node is still starting.
	wrapWaitStatus(t, p, filepath.Join(infra, ".heartbeat"), model.StatusStarting, 5*time.Second)
	data, err := os.ReadFile(filepath.Join(parentDir, ".children"))
	if err != nil {
		t.Fatalf("no registry while starting: %v", err)
	}
	var entry model.ChildEntry
	if err := json.Unmarshal(bytes.TrimSpace(data), &entry); err != nil {
		t.Fatalf("registry %q: %v", data, err)
	}
	if entry.Heartbeat != filepath.Join(infra, ".heartbeat") || entry.Team != "coding" || entry.TaskIDString() != "t-7" || entry.Status != "active" {
		t.Errorf("registry entry = %+v", entry)
	}
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
	hb, _ := wrapReadHB(t, filepath.Join(infra, ".heartbeat"))
	if hb.ParentHeartbeat != parentHB || hb.Optional().Team != "coding" || hb.Optional().TaskID != "t-7" {
		t.Errorf("heartbeat = %+v, want parent %s, team coding, task t-7", hb.Heartbeat, parentHB)
	}
	// A second dispatch of the same node (a resume) adds no line.
	p2 := startWrap(t, "wrap", "--infra", infra, "--parent", parentHB, "--team", "coding", "--beat", "100ms", "--", "true")
	p2.wait(t, 10*time.Second)
	data, _ = os.ReadFile(filepath.Join(parentDir, ".children"))
	if n := bytes.Count(data, []byte("\n")); n != 1 {
		t.Errorf("registry has %d lines after a re-dispatch, want 1:\n%s", n, data)
	}
}

func wrapWriteParent(t *testing.T, path string, pid int, started float64, mtime time.Time) {
	t.Helper()
	body := fmt.Sprintf(`{"pid": %d, "parent_heartbeat": "", "role": "lead", "started": %f, "status": "running"}`, pid, started)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func TestWrapEndsTheChildAfterTheParentGraceWhenTheParentDies(t *testing.T) {
	tests := []struct {
		name  string
		child string
	}{
		{"child that honours SIGTERM", `while :; do sleep 0.05; done`},
		{"child that ignores SIGTERM gets SIGKILL", `trap '' TERM; while :; do sleep 0.05; done`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parentDir := t.TempDir()
			parentHB := filepath.Join(parentDir, ".heartbeat")
			lead := exec.Command("sleep", "60")
			if err := lead.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = lead.Process.Kill(); _ = lead.Wait() })
			leadStarted, err := protocol.ProcessStarted(lead.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			wrapWriteParent(t, parentHB, lead.Process.Pid, leadStarted, time.Now())
			infra := filepath.Join(parentDir, "team", "1")
			hbPath := filepath.Join(infra, ".heartbeat")
			p := startWrap(t, "wrap", "--infra", infra, "--parent", parentHB, "--beat", "100ms",
				"--stale", "1s", "--exit-grace", "300ms", "--parent-grace", "1s", "--end-wait", "500ms",
				"--", "sh", "-c", tt.child)
			running := wrapWaitStatus(t, p, hbPath, model.StatusRunning, 5*time.Second)

			// A live parent whose beat goes stale (stalled, not dead) is not
			// a reason to end the child.
			time.Sleep(2 * time.Second)
			if p.exited() {
				t.Fatalf("wrap ended while its parent was alive; stderr:\n%s", p.stderr)
			}

			lead.Process.Kill()
			lead.Wait()
			killed := time.Now()
			code := p.wait(t, 10*time.Second)
			took := time.Since(killed)
			if took < time.Second {
				t.Errorf("child ended %s after the parent died, before the 1s grace", took)
			}
			if code == 0 {
				t.Errorf("exit 0, want the child's signal exit")
			}
			hb, _ := wrapReadHB(t, hbPath)
			if hb.Status != model.StatusWithdrawn {
				t.Errorf("status %q, want withdrawn", hb.Status)
			}
			if wrapPidAlive(running.PID) {
				t.Errorf("child %d survived", running.PID)
			}
			if !strings.Contains(p.stderr.String(), "is gone") {
				t.Errorf("stderr does not say the parent is gone:\n%s", p.stderr)
			}
		})
	}
}

func TestWrapUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no command", []string{"wrap", "--infra", "x"}},
		{"no infra", []string{"wrap", "--", "true"}},
		{"negative parent grace", []string{"wrap", "--infra", "x", "--parent-grace", "-1s", "--", "true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := Execute(tt.args, strings.NewReader(""), &stdout, &stderr); code != ExitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, ExitUsage, stderr.String())
			}
		})
	}
}

func wrapAbsDiff(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}
