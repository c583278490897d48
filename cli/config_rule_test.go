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

// homeWithConfig makes a home directory that holds the default config
// (~/.config/dispatchtop/config.toml: stale 200s, and a resume command that
// touches the returned marker) and a dead, resumable session `s1` right
// under it; it sets HOME, clears XDG_CONFIG_HOME and moves into the home.
// With no root given the root is then the home itself, config included.
func homeWithConfig(t *testing.T) (home, marker string) {
	t.Helper()
	home = t.TempDir()
	marker = filepath.Join(t.TempDir(), "resumed")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Chdir(home)
	cfg := filepath.Join(home, ".config", "dispatchtop", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("stale = \"200s\"\n\n[resume]\nargv = [\"touch\", \""+marker+"\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sleep := exec.Command("sleep", "100")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	gone := sleep.Process.Pid
	_ = sleep.Process.Kill()
	_ = sleep.Wait()
	session := filepath.Join(home, "s1")
	if err := os.MkdirAll(session, 0o755); err != nil {
		t.Fatal(err)
	}
	hb, _ := json.Marshal(map[string]any{"pid": gone, "parent_heartbeat": "", "role": "lead", "started": float64(time.Now().Add(-time.Hour).Unix()), "status": "running"})
	if err := os.WriteFile(filepath.Join(session, ".heartbeat"), hb, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-10 * time.Minute)
	if err := os.Chtimes(filepath.Join(session, ".heartbeat"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(session, ".cfa-state.json"), []byte(`{"state": "EXECUTE"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return home, marker
}

// SPEC §5.5: the config may not lie inside a root where it would choose
// what an action runs. A command that runs no action — a snapshot, the
// recovery plan — reads it wherever the operator keeps it, so dispatchtop
// run from $HOME (default root ".") with the default config under
// ~/.config works; every command that acts still refuses it.
func TestConfigInsideARootIsRefusedOnlyForActions(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
		check      func(t *testing.T, stdout string)
	}{
		{name: "--once reads it and reports the dead session", args: []string{"--once"}, wantCode: 1, wantStdout: "s1"},
		{name: "--once --json applies its thresholds", args: []string{"--once", "--json", "--fail-on", "none"}, wantCode: 0,
			check: func(t *testing.T, stdout string) {
				var doc struct {
					Thresholds struct {
						Stale float64 `json:"stale_s"`
					} `json:"thresholds"`
				}
				if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
					t.Fatal(err)
				}
				if doc.Thresholds.Stale != 200 {
					t.Fatalf("stale_s %v, want the config's 200", doc.Thresholds.Stale)
				}
			}},
		{name: "recover without --apply prints the plan, each step refused", args: []string{"recover"}, wantCode: 0,
			wantStdout: "inside the watched root"},
		{name: "recover --apply refuses", args: []string{"recover", "--apply"}, wantCode: 2, wantStderr: "inside the watched root"},
		{name: "resume refuses", args: []string{"resume", "s1"}, wantCode: 2, wantStderr: "inside the watched root"},
		{name: "resume --dry-run refuses, as the resume would be", args: []string{"resume", "--dry-run", "s1"}, wantCode: 2,
			wantStderr: "inside the watched root"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, marker := homeWithConfig(t)
			var stdout, stderr bytes.Buffer
			code := Execute(tc.args, strings.NewReader(""), &stdout, &stderr)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.wantStdout) || !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Fatalf("stdout %q, want %q\nstderr %q, want %q", stdout.String(), tc.wantStdout, stderr.String(), tc.wantStderr)
			}
			if tc.check != nil {
				tc.check(t, stdout.String())
			}
			time.Sleep(50 * time.Millisecond) // a detached resume would have run by now
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the config's resume command ran")
			}
		})
	}
}

// SPEC §5.5, §6: the dashboard can act, so a config inside a root does not
// arm it: it runs read-only and its header says why. Under --readonly, or
// with the config outside every root, nothing changes.
func TestDashboardWithAConfigInsideARootIsReadOnly(t *testing.T) {
	tests := []struct {
		name         string
		readonly     bool
		configInRoot bool
		wantReadonly bool
		wantNote     string
	}{
		{name: "config inside a root: read-only, with a note", configInRoot: true, wantReadonly: true,
			wantNote: "actions disabled: config "},
		{name: "config inside a root under --readonly: read-only, nothing to add", readonly: true, configInRoot: true, wantReadonly: true},
		{name: "config outside every root: actions armed", configInRoot: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home, _ := homeWithConfig(t)
			g := &Globals{Readonly: tc.readonly}
			if !tc.configInRoot {
				g.Roots = []string{filepath.Join(home, "s1")}
			}
			_, path, err := g.Config()
			if err != nil {
				t.Fatalf("the dashboard's config: %v", err)
			}
			readonly, note, err := dashboardActions(g, path)
			if err != nil {
				t.Fatal(err)
			}
			if readonly != tc.wantReadonly || !strings.Contains(note, tc.wantNote) || (tc.wantNote == "") != (note == "") {
				t.Fatalf("read-only %v, note %q; want %v and %q", readonly, note, tc.wantReadonly, tc.wantNote)
			}
			if tc.wantNote != "" && (!strings.Contains(note, path) || !strings.Contains(note, home)) {
				t.Fatalf("the note %q does not name the config %s and the root %s", note, path, home)
			}
		})
	}
}
