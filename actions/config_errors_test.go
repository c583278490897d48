package actions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// loadConfigText writes body as a config file and loads it with the loader
// of a command that runs nothing (both loaders share the reading).
func loadConfigText(t *testing.T, body string) (Config, string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := LoadReadOnlyConfig(path)
	return cfg, path, err
}

// SPEC §5.5: a duration is a string with a unit. A bare number is not read
// as nanoseconds (`beat = 30` was 30 ns): it is an error naming the file,
// the line, the key and the value as written.
func TestConfigDurationNeedsAUnit(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string // after "<path>:"
	}{
		{"an integer", "beat = 30\n", `1: beat = 30: a duration needs a unit, e.g. "30s"`},
		{"an integer on its own line", "# thresholds\ntheme = \"mono\"\nstale = 5 # seconds\n", `3: stale = 5: a duration needs a unit, e.g. "30s"`},
		{"a float", "kill_after = 1.5\n", `1: kill_after = 1.5: a duration needs a unit, e.g. "30s"`},
		{"a string without a unit", "exit_grace = \"5\"\n", `1: exit_grace = "5": a duration needs a unit, e.g. "30s"`},
		{"a boolean", "beat = true\n", `1: beat = true: a duration is a string with a unit, e.g. "30s"`},
		{"a word", "stale = \"soon\"\n", `1: stale = "soon": not a duration (e.g. "30s", "2m")`},
		{"a negative duration", "stale = \"-5s\"\n", `1: stale = "-5s": a duration must be positive`},
		{"zero", "beat = \"0s\"\n", `1: beat = "0s": a duration must be positive`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, path, err := loadConfigText(t, tt.body)
			if err == nil {
				t.Fatalf("loaded %+v, want an error", cfg)
			}
			if got, want := err.Error(), path+":"+tt.want; got != want {
				t.Errorf("err\n  %s\nwant\n  %s", got, want)
			}
		})
	}
}

// The durations that are right still load.
func TestConfigDurationsWithUnitsLoad(t *testing.T) {
	cfg, _, err := loadConfigText(t, "beat = \"30s\"\nstale = \"2m\"\nkill_after = \"1h\"\nexit_grace = \"500ms\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{cfg.Beat.Duration().String(), cfg.Stale.Duration().String(), cfg.KillAfter.Duration().String(), cfg.ExitGrace.Duration().String()}; strings.Join(got, " ") != "30s 2m0s 1h0m0s 500ms" {
		t.Errorf("durations %v", got)
	}
}

// An unknown key is one line: where it is, its name and the nearest known
// key when one is near (a typo), else the keys there are.
func TestConfigUnknownKeyIsOneLineWithTheNearestKey(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string // after "<path>:"
	}{
		{"a typo of a top-level key", "stal = \"5s\"\n", `1: unknown key "stal" (did you mean "stale"?)`},
		{"a dash for an underscore", "theme = \"mono\"\nkill-after = \"5m\"\n", `2: unknown key "kill-after" (did you mean "kill_after"?)`},
		{"a typo inside a table", "[resume]\nargvv = [\"x\"]\n", `2: unknown key "resume.argvv" (did you mean "resume.argv"?)`},
		{"a typo of a table", "[merg]\nargv = [\"x\"]\n", `1: unknown table "merg" (did you mean "merge"?)`},
		{"nothing near", "colour = \"red\"\n", `1: unknown key "colour" (known keys: beat, exit_grace, ignore, kill_after, merge.argv, resume.argv, stale, theme)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, path, err := loadConfigText(t, tt.body)
			if err == nil {
				t.Fatal("loaded, want an error")
			}
			if got, want := err.Error(), path+":"+tt.want; got != want {
				t.Errorf("err\n  %s\nwant\n  %s", got, want)
			}
		})
	}
}

// Several unknown keys are still one line, each with its place.
func TestConfigSeveralUnknownKeysAreOneLine(t *testing.T) {
	_, path, err := loadConfigText(t, "stal = \"5s\"\nbeat = \"1s\"\n[resume]\nargvv = [\"x\"]\n")
	if err == nil {
		t.Fatal("loaded, want an error")
	}
	want := path + `:1: unknown key "stal" (did you mean "stale"?); ` + path + `:4: unknown key "resume.argvv" (did you mean "resume.argv"?)`
	if got := err.Error(); got != want {
		t.Errorf("err\n  %s\nwant\n  %s", got, want)
	}
}

// Any other error of the file is one line with its place too: a value of
// the wrong type names the key and what it wants, a syntax error its line.
func TestConfigOtherErrorsAreOneLineWithTheirLine(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string // after "<path>:"
	}{
		{"a number for a string", "beat = \"1s\"\ntheme = 3\n", `2: theme = 3: want a string`},
		{"a string for a list", "ignore = \"tmp*\"\n", `1: ignore = "tmp*": want a list of strings`},
		{"a string for a table", "resume = \"x\"\n", `1: resume = "x": want a table, [resume]`},
		{"a syntax error", "beat = \"1s\"\nstale \"4s\"\n", `2: expected '=' after key`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, path, err := loadConfigText(t, tt.body)
			if err == nil {
				t.Fatal("loaded, want an error")
			}
			got := err.Error()
			if strings.Contains(got, "\n") || !strings.HasPrefix(got, path+":"+tt.want) {
				t.Errorf("err\n  %q\nwant one line starting\n  %q", got, path+":"+tt.want)
			}
		})
	}
}

// configKeys is what the loader knows, read from Config itself, so a key
// added there is known to the suggestions and to the example's test.
func TestConfigKeysAreReadFromConfig(t *testing.T) {
	got := strings.Join(ConfigKeys(), " ")
	if want := "beat exit_grace ignore kill_after merge.argv resume.argv stale theme"; got != want {
		t.Errorf("ConfigKeys() = %s, want %s", got, want)
	}
}
