package main

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/dispatchtop/dispatchtop/actions"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/themes"
)

// exampleConfig documents every key of the config file.
var exampleConfig = filepath.Join("docs", "config.example.toml")

// docs/config.example.toml loads with the real loader, sets every key the
// loader knows (read from its Config, so a key added there must be added
// here), each under a comment, and its thresholds, ignore globs and theme
// are the defaults.
func TestConfigExampleSetsEveryKnownKeyToItsDefault(t *testing.T) {
	cfg, used, err := actions.LoadConfig(exampleConfig, []string{t.TempDir()})
	if err != nil {
		t.Fatalf("the real loader refuses %s: %v", exampleConfig, err)
	}
	if used == "" {
		t.Fatal("nothing read")
	}

	raw, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := toml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var set []string
	var flatten func(prefix string, m map[string]any)
	flatten = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				flatten(prefix+k+".", sub)
				continue
			}
			set = append(set, prefix+k)
		}
	}
	flatten("", doc)
	slices.Sort(set)
	if known := actions.ConfigKeys(); !slices.Equal(set, known) {
		t.Errorf("%s sets %v; the loader knows %v", exampleConfig, set, known)
	}

	def := model.DefaultThresholds()
	if cfg.Beat.Duration() != def.Beat || cfg.Stale.Duration() != def.Stale ||
		cfg.KillAfter.Duration() != def.KillAfter || cfg.ExitGrace.Duration() != def.ExitGrace {
		t.Errorf("thresholds %v %v %v %v, the defaults are %v %v %v %v", cfg.Beat.Duration(), cfg.Stale.Duration(),
			cfg.KillAfter.Duration(), cfg.ExitGrace.Duration(), def.Beat, def.Stale, def.KillAfter, def.ExitGrace)
	}
	if len(cfg.Ignore) != 0 || cfg.Theme != themes.Dark {
		t.Errorf("ignore %q theme %q, the defaults are none and %q", cfg.Ignore, cfg.Theme, themes.Dark)
	}
	if len(cfg.Resume.Argv) == 0 || len(cfg.Merge.Argv) == 0 {
		t.Errorf("the example commands are empty: resume %q merge %q", cfg.Resume.Argv, cfg.Merge.Argv)
	}

	// Each key and each table is introduced by a comment.
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	prev, n := "", 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		startsEntry := strings.HasPrefix(line, "[") || (line != "" && !strings.HasPrefix(line, "#") && strings.Contains(line, "="))
		afterTable := strings.HasPrefix(prev, "[")
		if startsEntry && !afterTable && !strings.HasPrefix(prev, "#") {
			t.Errorf("%s:%d: %q has no comment above it", exampleConfig, n, line)
		}
		prev = line
	}
}
