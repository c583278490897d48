package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
)

// SPEC §10, §4: every store that cannot be read (corrupt SQLite, a missing
// table, zero bytes, a directory where a file goes, torn JSON, no
// permission), of each of the four sources, named with KIND: or found by
// its layout, is a problem that names the file and the cause:
//
//   - alone, `--once` (text or JSON, with or without --allow-missing)
//     exits 2 with one line naming them, never "no tree found";
//   - beside a tree that reads, `--once` exits 2 naming them unless
//     --allow-missing, and with it prints the tree and the problem, in the
//     text's problems and the JSON's.
//
// The permission cases run the binary as nobody (root reads a file of
// mode 000); where it cannot, they are skipped, saying so.
func TestEveryUnreadableStoreIsAProblemNamingItsFileAndCause(t *testing.T) {
	storefixtures.EachUnreadable(t, func(t *testing.T, u storefixtures.Unreadable, as func(string) string) {
		// Readable by all, up to the planted file: nobody runs the
		// binary in the permission cases.
		base, err := os.MkdirTemp("", "dispatchtop-unreadable-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(base) })
		if err := os.Chmod(base, 0o755); err != nil {
			t.Fatal(err)
		}
		root, file, err := u.Build(filepath.Join(base, "store"))
		if err != nil {
			t.Fatal(err)
		}
		tree := filepath.Join(base, "tree")
		writeAged(t, filepath.Join(tree, "s1", ".heartbeat"),
			`{"pid": 1, "started": 1, "status": "running", "parent_heartbeat": null}`, 0)
		arg := as(root)
		run := func(args ...string) (string, string, int) {
			return runAs(t, base, u.Denied, args...)
		}
		wantLine := func(stderr string, what string) {
			t.Helper()
			msg := strings.TrimSpace(stderr)
			if strings.Contains(msg, "\n") || !strings.Contains(msg, file) || !strings.Contains(msg, u.Cause) || strings.Contains(msg, "no tree found") {
				t.Errorf("%s: stderr %q: want one line naming %s and %q", what, msg, file, u.Cause)
			}
		}

		for _, args := range [][]string{{"--once"}, {"--once", "--json"}, {"--once", "--allow-missing"}} {
			stdout, stderr, code := run(append(args, arg)...)
			if code != 2 || stdout != "" {
				t.Errorf("%v alone: exit %d, stdout %q: want 2 and nothing", args, code, stdout)
			}
			wantLine(stderr, strings.Join(args, " ")+" alone")
		}

		stdout, stderr, code := run("--once", "--fail-on", "none", arg, tree)
		if code != 2 || stdout != "" || !strings.Contains(stderr, "--allow-missing") {
			t.Errorf("beside a tree: exit %d, stdout %q, stderr %q: want 2, nothing, and a word of --allow-missing", code, stdout, stderr)
		}
		wantLine(stderr, "beside a tree")

		stdout, stderr, code = run("--once", "--allow-missing", "--fail-on", "none", arg, tree)
		if code != 0 || !strings.Contains(stdout, "s1") {
			t.Fatalf("--allow-missing beside a tree: exit %d, stderr %q:\n%s", code, stderr, stdout)
		}
		if !strings.Contains(stdout, "problems:") || !strings.Contains(stdout, file) || !strings.Contains(stdout, u.Cause) {
			t.Errorf("--allow-missing text lacks the problem at %s (%q):\n%s", file, u.Cause, stdout)
		}

		stdout, stderr, code = run("--once", "--json", "--allow-missing", "--fail-on", "none", arg, tree)
		if code != 0 {
			t.Fatalf("--json --allow-missing beside a tree: exit %d, stderr %q", code, stderr)
		}
		var doc struct {
			Problems []struct{ Path, Error string } `json:"problems"`
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("json: %v\n%s", err, stdout)
		}
		found := false
		for _, p := range doc.Problems {
			found = found || p.Path == file && strings.Contains(p.Error, u.Cause)
		}
		if !found {
			t.Errorf("--json problems %+v: none at %s with %q", doc.Problems, file, u.Cause)
		}
	})
}

// runAs runs the binary in dir, as nobody when asNobody (skipping when it
// cannot), and returns stdout, stderr and the exit code.
func runAs(t *testing.T, dir string, asNobody bool, args ...string) (string, string, int) {
	t.Helper()
	if asNobody && os.Geteuid() != 0 {
		t.Skip("a file of mode 000 is refused to this user already, but the binary cannot be run as another to show it the same way in every case")
	}
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	config := filepath.Join(dir, "config")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config, "HOME="+dir)
	if asNobody {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		if asNobody {
			t.Skipf("cannot run the binary as nobody: %v", err)
		}
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v: still running after 30s", args)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}
