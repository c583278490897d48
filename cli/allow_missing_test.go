package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SPEC §4: a root that is missing or cannot be read makes --once bad usage
// (exit 2, nothing on stdout, one line naming the root), even when another
// root reads: a typo in a CI job must fail it. --allow-missing keeps the
// others' report, the missing root among its problems; no root read at
// all is bad usage still.
func TestOnceWithAMissingRootIsAUsageErrorUnlessAllowMissing(t *testing.T) {
	tests := []struct {
		name       string
		args       func(tree, missing string) []string
		want       int
		wantStdout []string
		wantStderr []string
	}{
		{name: "a missing root beside a tree", args: func(tree, missing string) []string { return []string{"--once", missing, tree} },
			want: ExitUsage, wantStderr: []string{"a root could not be read", "no such file or directory", "--allow-missing"}},
		{name: "with --json", args: func(tree, missing string) []string { return []string{"--once", "--json", tree, missing} },
			want: ExitUsage, wantStderr: []string{"a root could not be read"}},
		{name: "--allow-missing reads the others", args: func(tree, missing string) []string {
			return []string{"--once", "--allow-missing", "--fail-on", "none", missing, tree}
		}, want: ExitOK, wantStdout: []string{"lead", "1 problems:", "no such file or directory"}},
		{name: "--allow-missing --json", args: func(tree, missing string) []string {
			return []string{"--once", "--json", "--allow-missing", "--fail-on", "none", missing, tree}
		}, want: ExitOK, wantStdout: []string{`"problems": [`, "no such file or directory"}},
		{name: "--allow-missing with no root that reads", args: func(tree, missing string) []string {
			return []string{"--once", "--allow-missing", missing}
		}, want: ExitUsage, wantStderr: []string{"no root could be read", "no such file or directory"}},
		{name: "--allow-missing needs --once", args: func(tree, missing string) []string { return []string{"--allow-missing", tree} },
			want: ExitUsage, wantStderr: []string{"--allow-missing needs --once"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			tree := recoveringLeadFixture(t, false)
			missing := filepath.Join(t.TempDir(), "typo", ".sessions")
			stdout, stderr, code := execute(t, tt.args(tree, missing)...)
			if code != tt.want {
				t.Fatalf("exit %d, want %d; stderr %q\n%s", code, tt.want, stderr, stdout)
			}
			for _, want := range tt.wantStdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			if tt.want == ExitUsage {
				if stdout != "" {
					t.Errorf("a usage error printed a snapshot: %q", stdout)
				}
				if msg := strings.TrimSpace(stderr); strings.Contains(msg, "\n") || !strings.Contains(msg, "typo") && !strings.Contains(msg, "needs --once") {
					t.Errorf("stderr %q: want one line naming the missing root", msg)
				}
			}
			for _, want := range tt.wantStderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q lacks %q", stderr, want)
				}
			}
		})
	}
}

// The default roots are those found, not given: a store among them that
// cannot be read (a corrupt ~/.middle) is a problem of the run, not a
// usage error, and the tree of the working directory is reported.
func TestOnceOverDefaultRootsListsAnUnreadableDefaultStore(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	home := t.TempDir()
	t.Setenv("HOME", home)
	db := filepath.Join(home, ".middle", "db.sqlite3")
	if err := os.MkdirAll(db, 0o755); err != nil {
		t.Fatal(err)
	}
	tree := recoveringLeadFixture(t, false)
	t.Chdir(tree)
	stdout, stderr, code := execute(t, "--once", "--fail-on", "none")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	if !strings.Contains(stdout, "lead") || !strings.Contains(stdout, db) || !strings.Contains(stdout, "not a regular file (directory)") {
		t.Errorf("stdout lacks the tree or the problem of %s:\n%s", db, stdout)
	}
	// Named, the same store must be read.
	if _, stderr, code := execute(t, "--once", "--fail-on", "none", tree, filepath.Dir(db)); code != ExitUsage || !strings.Contains(stderr, db) {
		t.Errorf("named: exit %d, stderr %q: want 2 naming %s", code, stderr, db)
	}
}
