package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// execute runs the command line in-process and returns stdout, stderr and
// the exit code.
func execute(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Execute(args, strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// SPEC §4: --version says what `dispatchtop version` says.
func TestVersionFlagPrintsTheVersion(t *testing.T) {
	flag, stderr, code := execute(t, "--version")
	if code != ExitOK {
		t.Fatalf("--version: exit %d, stderr %q", code, stderr)
	}
	cmd, _, _ := execute(t, "version")
	if flag != cmd || !strings.HasPrefix(flag, "dispatchtop ") || strings.Count(flag, "\n") != 1 {
		t.Fatalf("--version printed %q, version printed %q: want the same one line", flag, cmd)
	}
}

// SPEC §4: a word that is neither a command nor an existing path is a
// mistyped command, said in one line with cobra's suggestions; an existing
// directory of that name is still a root.
func TestMistypedCommandSaysDidYouMean(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		makeDir    string
		wantCode   int
		wantStderr []string
	}{
		{name: "transposed letters", args: []string{"versoin"}, wantCode: ExitUsage,
			wantStderr: []string{`unknown command "versoin"`, `did you mean "version"?`}},
		{name: "a prefix", args: []string{"recov"}, wantCode: ExitUsage,
			wantStderr: []string{`unknown command "recov"`, `"recover"`}},
		{name: "with --once before it", args: []string{"--once", "kil"}, wantCode: ExitUsage,
			wantStderr: []string{`unknown command "kil"`, `"kill"`}},
		{name: "a word like nothing known", args: []string{"--once", "frobnicate"}, wantCode: ExitUsage,
			wantStderr: []string{`unknown command "frobnicate"`, "no directory of that name"}},
		{name: "an existing directory named like a command is a root", args: []string{"--once", "--fail-on", "none", "versoin"},
			makeDir: "versoin", wantCode: ExitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			dir := t.TempDir()
			t.Chdir(dir)
			if tt.makeDir != "" {
				writeHeartbeat(t, filepath.Join(dir, tt.makeDir, "s1"), `{"pid": 0, "status": "completed"}`)
			}
			stdout, stderr, code := execute(t, tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tt.wantCode, stdout, stderr)
			}
			for _, want := range tt.wantStderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q lacks %q", stderr, want)
				}
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("stderr is not one line: %q", stderr)
			}
			if tt.makeDir != "" && !strings.Contains(stdout, "s1") {
				t.Errorf("the directory was not watched as a root: %q", stdout)
			}
		})
	}
}

// writeHeartbeat writes dir/.heartbeat with body.
func writeHeartbeat(t *testing.T, dir, body string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".heartbeat"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// helpFlags lists the long flags the Flags sections of a help text name.
func helpFlags(help string) map[string]bool {
	_, flags, _ := strings.Cut(help, "\nFlags:\n")
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z-]+)`).FindAllStringSubmatch(flags, -1) {
		names[m[1]] = true
	}
	return names
}

// SPEC §4: each command offers its own flags and the shared ones it reads,
// no others.
func TestEachCommandShowsOnlyTheFlagsItReads(t *testing.T) {
	scan := []string{"root", "config", "beat", "stale", "kill-after", "exit-grace", "ignore", "no-pid-check"}
	tests := []struct {
		args    []string
		want    []string
		notWant []string
	}{
		{args: []string{"--help"}, want: append([]string{"once", "json", "fail-on", "theme", "poll", "readonly", "version", "remote"}, scan...)},
		{args: []string{"kill", "--help"}, want: append([]string{"tree", "grace", "dry-run", "readonly"}, scan...),
			notWant: []string{"theme", "poll", "fail-on", "once"}},
		{args: []string{"resume", "--help"}, want: append([]string{"force", "dry-run", "readonly"}, scan...),
			notWant: []string{"theme", "poll", "fail-on"}},
		{args: []string{"compact", "--help"}, want: append([]string{"all", "dry-run", "readonly"}, scan...),
			notWant: []string{"theme", "poll", "fail-on"}},
		{args: []string{"merge", "--help"}, want: append([]string{"dry-run", "readonly"}, scan...),
			notWant: []string{"theme", "poll", "fail-on"}},
		{args: []string{"recover", "--help"}, want: append([]string{"apply", "kill-stalled", "readonly"}, scan...),
			notWant: []string{"theme", "poll", "fail-on"}},
		{args: []string{"serve", "--help"}, want: append([]string{"listen", "token-file", "poll"}, scan...),
			notWant: []string{"theme", "readonly", "fail-on"}},
		{args: []string{"wrap", "--help"}, want: []string{"infra", "beat", "stale", "exit-grace", "no-pid-check"},
			notWant: []string{"root", "config", "kill-after", "theme", "poll", "readonly", "fail-on", "ignore"}},
		{args: []string{"demo", "--help"}, want: []string{"keep", "dir", "theme"},
			notWant: []string{"root", "config", "beat", "stale", "fail-on"}},
		{args: []string{"journal", "--help"}, want: []string{"root", "node", "since", "json"},
			notWant: []string{"config", "beat", "stale", "theme", "poll", "readonly", "fail-on"}},
		{args: []string{"version", "--help"}, notWant: []string{"root", "config", "beat", "theme", "poll", "readonly", "fail-on"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, code := execute(t, tt.args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if strings.Contains(stdout, "Global Flags:") {
				t.Errorf("help lists global flags:\n%s", stdout)
			}
			flags := helpFlags(stdout)
			for _, f := range tt.want {
				if !flags[f] {
					t.Errorf("help lacks --%s:\n%s", f, stdout)
				}
			}
			for _, f := range tt.notWant {
				if flags[f] {
					t.Errorf("help offers --%s, which the command does not read:\n%s", f, stdout)
				}
			}
		})
	}
}

// visibleCommands walks the command tree: every command a user can call.
func visibleCommands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			out = append(out, visibleCommands(sub)...)
		}
	}
	return out
}

// SPEC §4: a usage line names each flag once (no "[--tree] … [flags]"), and
// every command shows examples.
func TestUsageLinesAndExamples(t *testing.T) {
	root, _ := newRootCmd(nil, nil, nil)
	cmds := visibleCommands(root)
	if len(cmds) < 12 {
		t.Fatalf("found %d commands, want every one", len(cmds))
	}
	for _, c := range cmds {
		t.Run(c.CommandPath(), func(t *testing.T) {
			line := c.UseLine()
			if strings.Contains(line, "[flags]") && strings.Contains(line, "[--") {
				t.Errorf("usage line names flags twice: %q", line)
			}
			if c.Name() == "help" {
				return // cobra's own
			}
			if strings.TrimSpace(c.Example) == "" {
				t.Errorf("%q has no examples", c.CommandPath())
			}
			continued := false
			for _, ex := range strings.Split(strings.TrimSpace(c.Example), "\n") {
				ex = strings.TrimSpace(ex)
				wasContinued := continued
				continued = strings.HasSuffix(ex, "\\")
				if ex != "" && !wasContinued && !strings.HasPrefix(ex, "#") && !strings.Contains(ex, "dispatchtop") {
					t.Errorf("%q: example line %q does not run dispatchtop", c.CommandPath(), ex)
				}
			}
		})
	}
}

// Flag validation reports in a fixed order: the same mistake always gets the
// same message (a map's order would pick a different flag from run to run).
func TestWrapReportsBadThresholdsInFlagOrder(t *testing.T) {
	infra := t.TempDir()
	for i := 0; i < 30; i++ {
		_, stderr, code := execute(t, "wrap", "--infra", infra, "--beat", "0s", "--stale", "0s", "--exit-grace", "0s", "--", "true")
		if code != ExitUsage || !strings.Contains(stderr, "--beat must be positive") {
			t.Fatalf("run %d: exit %d, stderr %q: want the first flag, --beat, named every time", i, code, stderr)
		}
	}
}
