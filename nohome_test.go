package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// runWithoutHome executes the binary as cron, systemd or a bare CI job
// would: no HOME, and no XDG_CONFIG_HOME unless configHome names one.
func runWithoutHome(t *testing.T, dir, configHome string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = withoutHome(configHome)
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

// withoutHome is this process's environment without HOME, and with
// XDG_CONFIG_HOME only when configHome names one.
func withoutHome(configHome string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	if configHome != "" {
		env = append(env, "XDG_CONFIG_HOME="+configHome)
	}
	return env
}

// TestCommandsRunWithoutHome: without HOME there is no default config
// file, and no default root that needs one; every command still runs on
// the roots it is given (or the working directory's).
func TestCommandsRunWithoutHome(t *testing.T) {
	root, _ := e2eTree(t)
	lead := filepath.Join(root, "20261122-050000")
	cwd := filepath.Dir(root)
	tests := []struct {
		name string
		args []string
		want string // in stdout
	}{
		{"once", []string{"--once", "--fail-on", "none", root}, "lead"},
		{"once json", []string{"--once", "--json", "--fail-on", "none", root}, `"schema"`},
		{"once json, default roots", []string{"--once", "--json", "--fail-on", "none"}, `"lead"`},
		{"kill dry run", []string{"kill", "--dry-run", "--root", root, lead}, "SIGTERM"},
		{"recover", []string{"recover", root}, ""},
		{"journal", []string{"journal", root}, ""},
		{"wrap", []string{"wrap", "--infra", filepath.Join(t.TempDir(), "w"), "--", "true"}, ""},
		{"demo help", []string{"demo", "--help"}, "demo"},
		{"serve help", []string{"serve", "--help"}, "serve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := runWithoutHome(t, cwd, "", tt.args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("stdout lacks %q:\n%s", tt.want, out)
			}
		})
	}
}

// TestServeListensWithoutHome: serve parses its flags, scans its root and
// listens; without HOME nothing blames the config.
func TestServeListensWithoutHome(t *testing.T) {
	root, _ := e2eTree(t)
	cmd := exec.Command(binary, "serve", "--listen", "127.0.0.1:0", root)
	cmd.Dir = t.TempDir()
	cmd.Env = withoutHome("")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, _ := bufio.NewReader(stderr).ReadString('\n')
	if !strings.Contains(line, "listening on http://127.0.0.1:") {
		t.Fatalf("serve said %q, want it listening", line)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v", err)
	}
}

// TestConfigHomeWithoutHomeIsStillRead: XDG_CONFIG_HOME alone locates the
// config; a config there is read (its threshold shows in the document).
func TestConfigHomeWithoutHomeIsStillRead(t *testing.T) {
	root, _ := e2eTree(t)
	configHome := t.TempDir()
	if err := os.MkdirAll(filepath.Join(configHome, "dispatchtop"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(configHome, "dispatchtop", "config.toml"), []byte("stale = \"7m\"\nkill_after = \"20m\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runWithoutHome(t, t.TempDir(), configHome, "--once", "--json", "--fail-on", "none", root)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var doc struct {
		Thresholds map[string]any `json:"thresholds"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Thresholds["stale_s"]; got != float64(420) {
		t.Errorf("stale_s = %v, want 420 from the config; thresholds %v", got, doc.Thresholds)
	}
}
