package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
)

// hostileName is a node directory that clears the screen and turns the
// text red when printed raw.
const hostileName = "\x1b[2J\x1b[31mEVIL"

// hostileFixture writes a root holding one dead, resumable session in a
// directory named hostileName (CfA EXECUTE, its pid gone) whose registry
// holds a finished child `kid`, itself a merge candidate.
func hostileFixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	sleep := exec.Command("sleep", "100")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	gone := sleep.Process.Pid
	_ = sleep.Process.Kill()
	_ = sleep.Wait()
	session := filepath.Join(root, hostileName)
	write := func(path string, v any, age time.Duration) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-age)
		if err := os.Chtimes(path, when, when); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(session, ".heartbeat"), map[string]any{"pid": gone, "parent_heartbeat": "", "role": "lead\x1b]0;pwned\x07",
		"started": float64(time.Now().Add(-time.Hour).Unix()), "status": "running"}, 10*time.Minute)
	write(filepath.Join(session, ".cfa-state.json"), map[string]any{"state": "EXECUTE"}, 0)
	kid := filepath.Join(session, "kid", ".heartbeat")
	write(kid, map[string]any{"pid": 0, "parent_heartbeat": filepath.Join(session, ".heartbeat"), "role": "w", "started": 1, "status": "completed"}, time.Minute)
	write(filepath.Join(session, ".children"), map[string]any{"heartbeat": kid, "team": "t", "task_id": "1", "status": "active"}, time.Minute)
	return root
}

// terminalSafe says what in out a terminal would not show as text: any
// control character but the line ends, or a bidirectional override.
func terminalSafe(out string) string {
	for _, r := range out {
		if r == '\n' {
			continue
		}
		if unicode.IsControl(r) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return fmt.Sprintf("it holds %U", r)
		}
	}
	return ""
}

// Every line dispatchtop prints for an action, a recovery plan or an error
// is terminal text: a node id, a role or an argument carrying escape
// sequences shows them neutralised, never performs them.
func TestTerminalLinesNeutraliseEscapes(t *testing.T) {
	resumeCfg := func(t *testing.T) string {
		p := filepath.Join(t.TempDir(), "config.toml")
		os.WriteFile(p, []byte("[resume]\nargv = [\"true\", \"{id}\", \"{role}\"]\n\n[merge]\nargv = [\"true\", \"{id}\"]\n"), 0o644)
		return p
	}
	evil := func(root string) string { return filepath.Join(root, hostileName) }
	tests := []struct {
		name     string
		args     func(t *testing.T, root string) []string
		wantCode int
		wantOut  string // the neutralised text that must show, on stdout or stderr
	}{
		{name: "recover prints the plan", wantCode: 0, wantOut: "\uFFFD[2J\uFFFD[31mEVIL",
			args: func(t *testing.T, root string) []string { return []string{"recover", "--config", resumeCfg(t), root} }},
		{name: "recover without a resume command prints the refusal", wantCode: 0, wantOut: "\uFFFD[2J\uFFFD[31mEVIL",
			args: func(t *testing.T, root string) []string { return []string{"recover", root} }},
		{name: "kill refused", wantCode: 1, wantOut: "refused: node \uFFFD[2J\uFFFD[31mEVIL is dead",
			args: func(t *testing.T, root string) []string { return []string{"kill", "--root", root, evil(root)} }},
		{name: "kill --dry-run refused", wantCode: 1, wantOut: "refused: node \uFFFD[2J\uFFFD[31mEVIL is dead",
			args: func(t *testing.T, root string) []string {
				return []string{"kill", "--dry-run", "--root", root, evil(root)}
			}},
		{name: "resume --dry-run", wantCode: 0, wantOut: "would resume \uFFFD[2J\uFFFD[31mEVIL",
			args: func(t *testing.T, root string) []string {
				return []string{"resume", "--dry-run", "--config", resumeCfg(t), "--root", root, evil(root)}
			}},
		{name: "resume refused", wantCode: 1, wantOut: "resume \uFFFD[2J\uFFFD[31mEVIL refused",
			args: func(t *testing.T, root string) []string { return []string{"resume", "--root", root, evil(root)} }},
		{name: "compact --dry-run", wantCode: 0, wantOut: "EVIL/.children",
			args: func(t *testing.T, root string) []string {
				return []string{"compact", "--dry-run", "--root", root, evil(root)}
			}},
		{name: "compact", wantCode: 0, wantOut: "EVIL/.children",
			args: func(t *testing.T, root string) []string { return []string{"compact", "--root", root, evil(root)} }},
		{name: "merge --dry-run", wantCode: 0, wantOut: "would merge \uFFFD[2J\uFFFD[31mEVIL/kid",
			args: func(t *testing.T, root string) []string {
				return []string{"merge", "--dry-run", "--config", resumeCfg(t), "--root", root, filepath.Join(evil(root), "kid")}
			}},
		{name: "merge refused", wantCode: 1, wantOut: "merge \uFFFD[2J\uFFFD[31mEVIL refused",
			args: func(t *testing.T, root string) []string { return []string{"merge", "--root", root, evil(root)} }},
		{name: "an unknown node is an error", wantCode: 1, wantOut: "nosuch\uFFFD[2J",
			args: func(t *testing.T, root string) []string {
				return []string{"resume", "--root", root, "nosuch" + hostileName}
			}},
		{name: "an unknown flag is an error", wantCode: 2, wantOut: "--x\uFFFD[2J",
			args: func(t *testing.T, root string) []string { return []string{"--x" + hostileName} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			root := hostileFixture(t)
			var stdout, stderr bytes.Buffer
			code := Execute(tc.args(t, root), strings.NewReader(""), &stdout, &stderr)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %q\nstderr: %q", code, tc.wantCode, stdout.String(), stderr.String())
			}
			for name, out := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String()} {
				if why := terminalSafe(out); why != "" {
					t.Errorf("%s is not terminal text: %s\n%q", name, why, out)
				}
			}
			if all := stdout.String() + stderr.String(); !strings.Contains(all, tc.wantOut) {
				t.Errorf("output does not show %q:\nstdout: %q\nstderr: %q", tc.wantOut, stdout.String(), stderr.String())
			}
			if n := strings.Count(strings.TrimSuffix(stderr.String(), "\n"), "\n"); n != 0 {
				t.Errorf("stderr is %d lines, want one: %q", n+1, stderr.String())
			}
		})
	}
}
