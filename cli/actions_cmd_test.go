package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// actionsFixture writes a root with a dead, resumable session `dead`
// (CfA EXECUTE, its pid gone, beat ten minutes old) and a finished session
// `fin` whose registry holds a finished child.
func actionsFixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	sleep := exec.Command("sleep", "100")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	gone := sleep.Process.Pid
	_ = sleep.Process.Kill()
	_ = sleep.Wait()
	write := func(rel string, v any, age time.Duration) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-age)
		os.Chtimes(p, when, when)
	}
	write("dead/.heartbeat", map[string]any{"pid": gone, "parent_heartbeat": "", "role": "lead", "started": float64(time.Now().Add(-time.Hour).Unix()), "status": "running"}, 10*time.Minute)
	write("dead/.cfa-state.json", map[string]any{"state": "EXECUTE"}, 0)
	write("fin/.heartbeat", map[string]any{"pid": 0, "parent_heartbeat": "", "role": "lead", "started": 1, "status": "completed"}, time.Minute)
	write("fin/c/.heartbeat", map[string]any{"pid": 0, "parent_heartbeat": filepath.Join(root, "fin/.heartbeat"), "role": "w", "started": 1, "status": "completed"}, time.Minute)
	line, _ := json.Marshal(map[string]any{"heartbeat": filepath.Join(root, "fin/c/.heartbeat"), "team": "t", "task_id": "1", "status": "active"})
	if err := os.WriteFile(filepath.Join(root, "fin/.children"), append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// SPEC §4: the action subcommands' exit codes (0 done, 1 refused or
// failed, 2 usage) and one-line messages on stderr.
func TestActionCommandsExitCodes(t *testing.T) {
	resumeCfg := func(t *testing.T, root string) string {
		p := filepath.Join(t.TempDir(), "config.toml")
		os.WriteFile(p, []byte(`[resume]
argv = ["touch", "{infra_dir}/resumed-by-cli"]

[merge]
argv = ["touch", "{infra_dir}/merged-by-cli"]
`), 0o644)
		return p
	}
	tests := []struct {
		name       string
		args       func(t *testing.T, root string) []string
		wantCode   int
		wantStdout string
		wantStderr string
		check      func(t *testing.T, root string)
	}{
		{name: "kill without NODE is usage", wantCode: 2, wantStderr: "exactly one NODE",
			args: func(t *testing.T, root string) []string { return []string{"kill", "--root", root} }},
		{name: "merge with two NODEs is usage", wantCode: 2, wantStderr: "exactly one NODE",
			args: func(t *testing.T, root string) []string { return []string{"merge", "--root", root, "a", "b"} }},
		{name: "compact with NODE and --all is usage", wantCode: 2, wantStderr: "not both",
			args: func(t *testing.T, root string) []string { return []string{"compact", "--root", root, "--all", "fin"} }},
		{name: "kill with a zero grace is usage", wantCode: 2, wantStderr: "--grace",
			args: func(t *testing.T, root string) []string {
				return []string{"kill", "--root", root, "--grace", "0s", "dead"}
			}},
		{name: "an unknown flag is usage", wantCode: 2,
			args: func(t *testing.T, root string) []string {
				return []string{"resume", "--root", root, "--frobnicate", "dead"}
			}},
		{name: "kill with no readable root is usage", wantCode: 2, wantStderr: "no root could be read",
			args: func(t *testing.T, root string) []string {
				return []string{"kill", "--root", filepath.Join(root, "nonexistent"), "s"}
			}},
		{name: "compact --all with no readable root is usage", wantCode: 2, wantStderr: "no root could be read",
			args: func(t *testing.T, root string) []string {
				return []string{"compact", "--root", filepath.Join(root, "nonexistent"), "--all"}
			}},
		{name: "recover with no readable root is usage", wantCode: 2, wantStderr: "no root could be read",
			args: func(t *testing.T, root string) []string {
				return []string{"recover", filepath.Join(root, "nonexistent")}
			}},
		{name: "a journal that cannot be written refuses the action before it runs, in one line", wantCode: 1, wantStderr: "no action runs that cannot be journaled",
			args: func(t *testing.T, root string) []string {
				if err := os.WriteFile(filepath.Join(root, ".dispatchtop"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(t.TempDir(), "config.toml")
				os.WriteFile(p, []byte("[merge]\nargv = [\"false\"]\n"), 0o644)
				return []string{"merge", "--root", root, "--config", p, "fin/c"}
			}},
		{name: "an unknown node fails", wantCode: 1, wantStderr: "nosuch",
			args: func(t *testing.T, root string) []string { return []string{"resume", "--root", root, "nosuch"} }},
		{name: "kill of a dead node is refused", wantCode: 1, wantStderr: "kill dead refused: node dead is dead, not running",
			args: func(t *testing.T, root string) []string { return []string{"kill", "--root", root, "dead"} }},
		{name: "resume without a configured command names the key", wantCode: 1, wantStderr: "resume.argv",
			args: func(t *testing.T, root string) []string { return []string{"resume", "--root", root, "dead"} }},
		{name: "resume --dry-run prints the plan and changes nothing", wantCode: 0, wantStdout: "would resume dead",
			args: func(t *testing.T, root string) []string {
				return []string{"resume", "--root", root, "--config", resumeCfg(t, root), "--dry-run", "dead"}
			},
			check: func(t *testing.T, root string) {
				for _, f := range []string{"dead/.resume-pending", "dead/.retry-count", ".dispatchtop"} {
					if _, err := os.Stat(filepath.Join(root, f)); err == nil {
						t.Fatalf("a dry run wrote %s", f)
					}
				}
			}},
		{name: "the id as a view of several roots shows it (the root's name before it) is the node", wantCode: 0, wantStdout: "would resume dead",
			args: func(t *testing.T, root string) []string {
				return []string{"resume", "--root", root, "--config", resumeCfg(t, root), "--dry-run", filepath.Base(root) + "/dead"}
			}},
		{name: "resume runs the configured command", wantCode: 0, wantStdout: "resumed dead",
			args: func(t *testing.T, root string) []string {
				return []string{"resume", "--root", root, "--config", resumeCfg(t, root), "dead"}
			},
			check: func(t *testing.T, root string) {
				deadline := time.Now().Add(5 * time.Second)
				for {
					if _, err := os.Stat(filepath.Join(root, "dead/resumed-by-cli")); err == nil {
						return
					}
					if time.Now().After(deadline) {
						t.Fatal("the resume command did not run")
					}
					time.Sleep(20 * time.Millisecond)
				}
			}},
		{name: "--readonly refuses", wantCode: 1, wantStderr: "read-only",
			args: func(t *testing.T, root string) []string {
				return []string{"resume", "--root", root, "--config", resumeCfg(t, root), "--readonly", "dead"}
			}},
		{name: "--readonly still answers --dry-run", wantCode: 0, wantStdout: "would resume dead",
			args: func(t *testing.T, root string) []string {
				return []string{"resume", "--root", root, "--config", resumeCfg(t, root), "--readonly", "--dry-run", "dead"}
			}},
		{name: "recover under --readonly prints the plan", wantCode: 0, wantStdout: "would resume dead",
			args: func(t *testing.T, root string) []string {
				return []string{"recover", "--config", resumeCfg(t, root), "--readonly", root}
			}},
		{name: "a config inside the directory holding a NODE outside the roots is refused", wantCode: 1, wantStderr: "inside",
			args: func(t *testing.T, root string) []string {
				p := filepath.Join(root, "config.toml")
				os.WriteFile(p, []byte("[resume]\nargv = [\"touch\", \"{infra_dir}/resumed-by-cli\"]\n"), 0o644)
				return []string{"resume", "--root", t.TempDir(), "--config", p, filepath.Join(root, "dead")}
			},
			check: func(t *testing.T, root string) {
				time.Sleep(100 * time.Millisecond)
				if _, err := os.Stat(filepath.Join(root, "dead/resumed-by-cli")); err == nil {
					t.Fatal("the resume command ran")
				}
			}},
		{name: "compact --all compacts", wantCode: 0, wantStdout: "removed 1 line(s) from 1 registr",
			args: func(t *testing.T, root string) []string { return []string{"compact", "--root", root, "--all"} },
			check: func(t *testing.T, root string) {
				if b, _ := os.ReadFile(filepath.Join(root, "fin/.children")); len(b) != 0 {
					t.Fatalf("fin/.children still holds %q", b)
				}
			}},
		{name: "recover prints the plan as a dry run", wantCode: 0, wantStdout: "dry run: nothing was changed",
			args: func(t *testing.T, root string) []string { return []string{"recover", root} },
			check: func(t *testing.T, root string) {
				if _, err := os.Stat(filepath.Join(root, ".dispatchtop")); err == nil {
					t.Fatal("recover without --apply wrote the journal")
				}
			}},
		{name: "recover --apply resumes the dead session and merges the finished ones", wantCode: 0, wantStdout: "resumed dead",
			args: func(t *testing.T, root string) []string {
				return []string{"recover", "--config", resumeCfg(t, root), "--apply", root}
			},
			check: func(t *testing.T, root string) {
				for _, f := range []string{"fin/merged-by-cli", "fin/.merged", "fin/c/merged-by-cli", "fin/c/.merged"} {
					if _, err := os.Stat(filepath.Join(root, f)); err != nil {
						t.Fatalf("recover --apply did not merge: %v", err)
					}
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			root := actionsFixture(t)
			var stdout, stderr bytes.Buffer
			code := Execute(tc.args(t, root), strings.NewReader(""), &stdout, &stderr)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.wantStdout) {
				t.Fatalf("stdout %q, want it to say %q", stdout.String(), tc.wantStdout)
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Fatalf("stderr %q, want it to say %q", stderr.String(), tc.wantStderr)
			}
			if tc.wantCode != 0 && strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
				t.Fatalf("stderr is not one line: %q", stderr.String())
			}
			if tc.check != nil {
				tc.check(t, root)
			}
		})
	}
}
