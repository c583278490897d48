package actions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const goodConfig = `
beat = "1s"
stale = "4s"
kill_after = "10s"
exit_grace = "2s"
ignore = ["node_modules", "tmp*"]
theme = "mono"

[resume]
argv = ["teaparty", "resume", "{infra_dir}", "--task", "{task_id}"]

[merge]
argv = ["git", "-C", "{worktree}", "merge"]
`

// SPEC §5.5: config is TOML with thresholds, ignore globs, theme and argvs.
func TestLoadConfigReadsEveryKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(path, []byte(goodConfig), 0o644)
	cfg, used, err := LoadConfig(path, []string{t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if used != path {
		t.Fatalf("read from %q, want %q", used, path)
	}
	if cfg.Beat.Duration() != time.Second || cfg.Stale.Duration() != 4*time.Second || cfg.KillAfter.Duration() != 10*time.Second || cfg.ExitGrace.Duration() != 2*time.Second {
		t.Fatalf("thresholds %v %v %v %v", cfg.Beat, cfg.Stale, cfg.KillAfter, cfg.ExitGrace)
	}
	if strings.Join(cfg.Ignore, ",") != "node_modules,tmp*" || cfg.Theme != "mono" {
		t.Fatalf("ignore %v theme %q", cfg.Ignore, cfg.Theme)
	}
	if len(cfg.Resume.Argv) != 5 || cfg.Resume.Argv[2] != "{infra_dir}" || cfg.Merge.Argv[0] != "git" {
		t.Fatalf("argvs %q %q", cfg.Resume.Argv, cfg.Merge.Argv)
	}
}

// SPEC §5.5: where the config comes from, and what is refused.
func TestLoadConfigSources(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(t *testing.T, root, outside string) (explicit string)
		wantErr  string // "" for success
		wantUsed bool   // a file was read
	}{
		{name: "no file at the default location is an empty config", setup: func(t *testing.T, root, outside string) string {
			t.Setenv("XDG_CONFIG_HOME", outside)
			return ""
		}},
		{name: "the XDG location is read", wantUsed: true, setup: func(t *testing.T, root, outside string) string {
			t.Setenv("XDG_CONFIG_HOME", outside)
			os.MkdirAll(filepath.Join(outside, "dispatchtop"), 0o755)
			os.WriteFile(filepath.Join(outside, "dispatchtop", "config.toml"), []byte(goodConfig), 0o644)
			return ""
		}},
		{name: "no HOME and no XDG_CONFIG_HOME: no default file, an empty config", setup: func(t *testing.T, root, outside string) string {
			t.Setenv("XDG_CONFIG_HOME", "")
			os.Unsetenv("XDG_CONFIG_HOME")
			t.Setenv("HOME", "")
			os.Unsetenv("HOME")
			return ""
		}},
		{name: "no HOME: XDG_CONFIG_HOME is read", wantUsed: true, setup: func(t *testing.T, root, outside string) string {
			t.Setenv("HOME", "")
			os.Unsetenv("HOME")
			t.Setenv("XDG_CONFIG_HOME", outside)
			os.MkdirAll(filepath.Join(outside, "dispatchtop"), 0o755)
			os.WriteFile(filepath.Join(outside, "dispatchtop", "config.toml"), []byte(goodConfig), 0o644)
			return ""
		}},
		{name: "no HOME and a relative XDG_CONFIG_HOME (ignored, as the XDG spec says): no default file", setup: func(t *testing.T, root, outside string) string {
			t.Setenv("HOME", "")
			os.Unsetenv("HOME")
			t.Chdir(outside)
			t.Setenv("XDG_CONFIG_HOME", "rel")
			os.MkdirAll(filepath.Join(outside, "rel", "dispatchtop"), 0o755)
			os.WriteFile(filepath.Join(outside, "rel", "dispatchtop", "config.toml"), []byte(goodConfig), 0o644)
			return ""
		}},
		{name: "an explicit file is read without HOME", wantUsed: true, setup: func(t *testing.T, root, outside string) string {
			t.Setenv("HOME", "")
			os.Unsetenv("HOME")
			p := filepath.Join(outside, "c.toml")
			os.WriteFile(p, []byte(goodConfig), 0o644)
			return p
		}},
		{name: "a missing explicit file is an error", wantErr: "read config", setup: func(t *testing.T, root, outside string) string {
			return filepath.Join(outside, "nope.toml")
		}},
		{name: "a config inside a watched root is refused", wantErr: "inside the watched root", setup: func(t *testing.T, root, outside string) string {
			p := filepath.Join(root, "s", "config.toml")
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(goodConfig), 0o644)
			return p
		}},
		{name: "a symlink outside that points into a root is refused", wantErr: "inside the watched root", setup: func(t *testing.T, root, outside string) string {
			p := filepath.Join(root, "evil.toml")
			os.WriteFile(p, []byte(goodConfig), 0o644)
			link := filepath.Join(outside, "config.toml")
			os.Symlink(p, link)
			return link
		}},
		{name: "XDG_CONFIG_HOME inside a root is refused", wantErr: "inside the watched root", setup: func(t *testing.T, root, outside string) string {
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "cfg"))
			os.MkdirAll(filepath.Join(root, "cfg", "dispatchtop"), 0o755)
			os.WriteFile(filepath.Join(root, "cfg", "dispatchtop", "config.toml"), []byte(goodConfig), 0o644)
			return ""
		}},
		{name: "an unknown key is an error that names it", wantErr: "argvv", setup: func(t *testing.T, root, outside string) string {
			p := filepath.Join(outside, "c.toml")
			os.WriteFile(p, []byte("[resume]\nargvv = [\"x\"]\n"), 0o644)
			return p
		}},
		{name: "a placeholder in argv[0] is an error that names the key", wantErr: "merge.argv[0]", setup: func(t *testing.T, root, outside string) string {
			p := filepath.Join(outside, "c.toml")
			os.WriteFile(p, []byte("[merge]\nargv = [\"{worktree}/merge.sh\", \"{id}\"]\n"), 0o644)
			return p
		}},
		{name: "a bad duration is an error", wantErr: "duration", setup: func(t *testing.T, root, outside string) string {
			p := filepath.Join(outside, "c.toml")
			os.WriteFile(p, []byte("stale = \"soon\"\n"), 0o644)
			return p
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			explicit := tc.setup(t, root, outside)
			cfg, used, err := LoadConfig(explicit, []string{root})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tc.wantErr)
				}
				if cfg.Resume.Argv != nil || used != "" {
					t.Fatalf("a refused config was read: %+v from %q", cfg, used)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (used != "") != tc.wantUsed {
				t.Fatalf("used %q, want a file read: %v", used, tc.wantUsed)
			}
			if tc.wantUsed && cfg.Stale.Duration() != 4*time.Second {
				t.Fatalf("config not read: %+v", cfg)
			}
		})
	}
}

// SPEC §5.5: for a command that acts, a config inside a root is never read —
// not even opened: its content must never matter.
func TestConfigInsideARootIsNeverRead(t *testing.T) {
	root := t.TempDir()
	fifo := filepath.Join(root, "config.toml")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := LoadConfig(fifo, []string{root})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "inside the watched root") {
			t.Fatalf("err %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("LoadConfig opened a config inside a root")
	}
}

// SPEC §5.5: the rule guards what runs. A command that runs no action reads
// the config wherever the operator keeps it, inside a root too (dispatchtop
// run from $HOME, the default root ".", with the default config under
// ~/.config).
func TestReadOnlyConfigIsReadInsideARoot(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root, outside string) (explicit string)
	}{
		{name: "an explicit config inside a root", setup: func(t *testing.T, root, outside string) string {
			p := filepath.Join(root, "s", "config.toml")
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(goodConfig), 0o644)
			return p
		}},
		{name: "XDG_CONFIG_HOME inside a root", setup: func(t *testing.T, root, outside string) string {
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "cfg"))
			os.MkdirAll(filepath.Join(root, "cfg", "dispatchtop"), 0o755)
			os.WriteFile(filepath.Join(root, "cfg", "dispatchtop", "config.toml"), []byte(goodConfig), 0o644)
			return ""
		}},
		{name: "the home as the root, the default config under ~/.config", setup: func(t *testing.T, root, outside string) string {
			t.Setenv("XDG_CONFIG_HOME", "")
			t.Setenv("HOME", root)
			os.MkdirAll(filepath.Join(root, ".config", "dispatchtop"), 0o755)
			os.WriteFile(filepath.Join(root, ".config", "dispatchtop", "config.toml"), []byte(goodConfig), 0o644)
			return ""
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			explicit := tc.setup(t, root, outside)
			if _, _, err := LoadConfig(explicit, []string{root}); err == nil || !strings.Contains(err.Error(), "inside the watched root") {
				t.Fatalf("LoadConfig, for actions: err %v, want a refusal", err)
			}
			cfg, used, err := LoadReadOnlyConfig(explicit)
			if err != nil {
				t.Fatal(err)
			}
			if used == "" || cfg.Stale.Duration() != 4*time.Second {
				t.Fatalf("config not read: %+v from %q", cfg, used)
			}
			if r, inside := ConfigInsideRoot(used, []string{outside, root}); !inside || r != root {
				t.Fatalf("ConfigInsideRoot(%s) = %q, %v; want %s", used, r, inside, root)
			}
		})
	}
}

// A config must be a regular file: a FIFO at its path is refused at once,
// never waited on, by either loader.
func TestConfigThatIsNoRegularFileIsRefusedWithoutBlocking(t *testing.T) {
	for name, load := range map[string]func(string) error{
		"LoadConfig":         func(p string) error { _, _, err := LoadConfig(p, []string{t.TempDir()}); return err },
		"LoadReadOnlyConfig": func(p string) error { _, _, err := LoadReadOnlyConfig(p); return err },
	} {
		t.Run(name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "config.toml")
			if err := mkfifo(fifo); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			done := make(chan error, 1)
			go func() { done <- load(fifo) }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "not a regular file") {
					t.Fatalf("err %v, want one saying it is not a regular file", err)
				}
			case <-time.After(5 * time.Second):
				// Unblock the reader so the test ends.
				if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					f.Close()
				}
				t.Fatal("the loader blocked on a FIFO")
			}
		})
	}
}
