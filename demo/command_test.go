package demo

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/protocol"
)

// runDemoCommand runs `dispatchtop demo --headless` with TMPDIR pointed at
// tmp, so that the temporary fleet dir lands where the test can look.
func runDemoCommand(t *testing.T, tmp string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"demo", "--headless", "3s"}, args...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "XDG_CONFIG_HOME="+filepath.Join(tmp, "xdg"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return out.String(), exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), 0
	case <-time.After(40 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("demo did not end; output:\n%s", out.String())
		return "", -1
	}
}

func TestDemoCommandRemovesItsTempDirUnlessKept(t *testing.T) {
	tests := []struct {
		name     string
		args     func(dir string) []string
		wantKept bool
	}{
		{"temporary dir is removed on quit", func(string) []string { return nil }, false},
		{"--keep keeps the temporary dir", func(string) []string { return []string{"--keep"} }, true},
		{"--dir is always kept", func(dir string) []string { return []string{"--dir", dir} }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			named := filepath.Join(t.TempDir(), "fleet")
			out, code := runDemoCommand(t, tmp, tt.args(named)...)
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			var fleetDirs []string
			if entries, _ := filepath.Glob(filepath.Join(tmp, "dispatchtop-demo-*")); len(entries) > 0 {
				fleetDirs = entries
			}
			if _, err := os.Stat(filepath.Join(named, ConfigFile)); err == nil {
				fleetDirs = append(fleetDirs, named)
			}
			if tt.wantKept != (len(fleetDirs) == 1) {
				t.Fatalf("fleet dirs left: %v, want kept = %v\n%s", fleetDirs, tt.wantKept, out)
			}
			if tt.wantKept && !strings.Contains(out, fleetDirs[0]) {
				t.Errorf("output does not name the kept dir %s:\n%s", fleetDirs[0], out)
			}
			if tt.wantKept {
				// Every process stopped: no heartbeat names a live agent.
				f := &Fleet{dir: fleetDirs[0]}
				if alive := f.liveAgents(); len(alive) > 0 {
					t.Errorf("agents alive after the demo ended: %v", alive)
				}
			}
		})
	}
}

func TestDemoCommandRefusesADirWithAFleet(t *testing.T) {
	tmp := t.TempDir()
	named := filepath.Join(t.TempDir(), "fleet")
	if err := os.MkdirAll(filepath.Join(named, protocol.SessionsRoot), 0o755); err != nil {
		t.Fatal(err)
	}
	out, code := runDemoCommand(t, tmp, "--dir", named)
	if code != 1 || !strings.Contains(out, "already holds a fleet") {
		t.Errorf("exit %d, want 1 with a refusal:\n%s", code, out)
	}
}

// The dashboard needs a terminal: without one, demo says so and starts no
// fleet at all (nothing to stop, nothing left behind).
func TestDemoWithoutTerminalStartsNothing(t *testing.T) {
	tmp := t.TempDir()
	cmd := exec.Command(binary, "demo")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "XDG_CONFIG_HOME="+filepath.Join(tmp, "xdg"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("exit %v, want 2; stderr:\n%s", err, stderr.String())
	}
	if msg := strings.TrimSpace(stderr.String()); !strings.Contains(msg, "terminal") || strings.Contains(msg, "\n") {
		t.Errorf("want one line that names the missing terminal, got:\n%s", msg)
	}
	if dirs, _ := filepath.Glob(filepath.Join(tmp, "dispatchtop-demo-*")); len(dirs) > 0 {
		t.Errorf("a fleet was built without a terminal: %v", dirs)
	}
}

// A demo ended by a signal (ctrl+c, kill, or the terminal closing: SIGHUP)
// still stops every process of its fleet and removes its temporary dir.
func TestDemoStopsOnSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			tmp := t.TempDir()
			cmd := exec.Command(binary, "demo", "--headless", "60s")
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "XDG_CONFIG_HOME="+filepath.Join(tmp, "xdg"))
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })

			var fleetDir string
			for deadline := time.Now().Add(20 * time.Second); fleetDir == ""; time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("no fleet came up:\n%s", out.String())
				}
				dirs, _ := filepath.Glob(filepath.Join(tmp, "dispatchtop-demo-*"))
				if len(dirs) == 1 && len(processesMentioning(dirs[0])) > 3 {
					fleetDir = dirs[0]
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("demo did not end after %s:\n%s", sig, out.String())
			}
			if _, err := os.Stat(fleetDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("fleet dir %s left after %s (stat: %v)", fleetDir, sig, err)
			}
			// Whatever still names the fleet's dir is a process left behind;
			// give a reparented one a moment to notice its leash is gone.
			var left []string
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				if left = processesMentioning(fleetDir); len(left) == 0 || time.Now().After(deadline) {
					break
				}
			}
			if len(left) > 0 {
				t.Errorf("processes left after %s:\n%s", sig, strings.Join(left, "\n"))
			}
		})
	}
}

// processesMentioning lists the command lines (from /proc) that name dir.
func processesMentioning(dir string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(dir)) {
			continue
		}
		found = append(found, e.Name()+": "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
	}
	return found
}
