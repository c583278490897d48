package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SPEC §6 Themes via the command line: --theme, then the config's theme,
// then dark; NO_COLOR selects mono; an unknown --theme is bad usage, while
// a bad config theme or user file only becomes a header note.
func TestSelectTheme(t *testing.T) {
	cfgHome := t.TempDir()
	dir := filepath.Join(cfgHome, "dispatchtop", "themes")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "paper.toml"), []byte("extends = \"light\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		flag, conf string
		noColor    string
		want       string
		wantErr    bool
		wantNote   string
	}{
		{name: "default dark", want: "dark"},
		{name: "flag", flag: "high-contrast", want: "high-contrast"},
		{name: "config", conf: "light", want: "light"},
		{name: "user theme", flag: "paper", want: "paper"},
		{name: "NO_COLOR beats the flag", flag: "light", noColor: "1", want: "mono"},
		{name: "unknown flag is usage", flag: "neon", wantErr: true},
		{name: "unknown config is a note", conf: "neon", want: "dark", wantNote: `unknown theme "neon"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"XDG_CONFIG_HOME": cfgHome, "NO_COLOR": tt.noColor}
			set, notes, err := selectTheme(tt.flag, tt.conf, func(k string) string { return env[k] })
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "--theme") {
					t.Fatalf("err = %v, want a --theme usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := set.Themes[set.Start].Name; got != tt.want {
				t.Errorf("theme %q, want %q", got, tt.want)
			}
			if joined := strings.Join(notes, "; "); !strings.Contains(joined, tt.wantNote) || (tt.wantNote == "" && joined != "") {
				t.Errorf("notes %q, want %q", joined, tt.wantNote)
			}
		})
	}
}

// SPEC §8 idle CPU: once the cold scan is done the dashboard runs on one
// processor (the renderer's every frame tick wakes a second, idle one
// otherwise); a GOMAXPROCS the user set is theirs.
func TestDashboardProcessors(t *testing.T) {
	tests := []struct {
		name, env string
		want      int
	}{
		{"unset: one", "", 1},
		{"the user's: kept", "4", 0},
		{"the user's even if odd: kept", "x", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == "GOMAXPROCS" {
					return tt.env
				}
				return ""
			}
			if got := dashboardProcs(getenv); got != tt.want {
				t.Errorf("dashboardProcs with GOMAXPROCS=%q = %d, want %d", tt.env, got, tt.want)
			}
		})
	}
}
