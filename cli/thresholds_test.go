package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SPEC §5.5: a threshold out of order is blamed on where it came from: the
// config's key when the config set it (a flag that was never given must not
// be named as the culprit), the flag otherwise.
func TestThresholdErrorNamesTheConfigKeyWhenTheConfigSetIt(t *testing.T) {
	tests := []struct {
		name   string
		config string   // "" for no config file
		args   []string // flags besides --once and --config
		want   string   // the error after "dispatchtop: "; CONFIG is the config's path
	}{
		{"stale from the config, exit grace the default", `stale = "5s"`, nil,
			`CONFIG: stale = "5s": must be longer than --exit-grace (5s)`},
		{"both from the config", "stale = \"5s\"\nexit_grace = \"10s\"", nil,
			`CONFIG: stale = "5s": must be longer than exit_grace = "10s"`},
		{"exit grace from the config, stale the default", `exit_grace = "3m"`, nil,
			`CONFIG: exit_grace = "3m0s": must be shorter than --stale (2m0s)`},
		{"beat from the config", `beat = "5m"`, nil,
			`CONFIG: beat = "5m0s": must not be longer than --stale (2m0s)`},
		{"kill after from the config, stale from a flag", `kill_after = "1m"`, []string{"--stale", "90s"},
			`CONFIG: kill_after = "1m0s": must not be shorter than --stale (1m30s)`},
		{"stale from a flag, kill after from the config", `kill_after = "4m"`, []string{"--stale", "5m"},
			`CONFIG: kill_after = "4m0s": must not be shorter than --stale (5m0s)`},
		{"a flag overrides the config and is blamed itself", `stale = "60s"`, []string{"--stale", "5s"},
			`--stale (5s) must be longer than --exit-grace (5s)`},
		{"flags alone", "", []string{"--stale", "5s"},
			`--stale (5s) must be longer than --exit-grace (5s)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
			args := []string{"--once", "--fail-on", "none"}
			config := filepath.Join(dir, "config.toml")
			if tt.config != "" {
				if err := os.WriteFile(config, []byte(tt.config+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", config)
			}
			args = append(append(args, tt.args...), t.TempDir())
			var stdout, stderr bytes.Buffer
			code := Execute(args, strings.NewReader(""), &stdout, &stderr)
			want := "dispatchtop: " + strings.ReplaceAll(tt.want, "CONFIG", config) + "\n"
			if code != ExitUsage || stderr.String() != want {
				t.Errorf("exit %d, stderr\n  %q\nwant exit %d and\n  %q", code, stderr.String(), ExitUsage, want)
			}
		})
	}
}
