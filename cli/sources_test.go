package cli

import (
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// storeHome makes a home and a project (the working directory) holding an
// empty store of each system that keeps one in a known place: the
// project's .opencode/opencode-teams, ~/.middle/db.sqlite3 and
// ~/.chatroom, beside a native .sessions.
func storeHome(t *testing.T) (home, project string) {
	t.Helper()
	home, project = t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("OPENCODE_TEAMS_DIR", "")
	t.Setenv("OPENCODE_PROJECT_ROOT", "")
	t.Setenv("CODEX_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Chdir(project)
	for _, dir := range []string{
		filepath.Join(project, ".sessions"),
		filepath.Join(project, ".opencode", "opencode-teams", "agents"),
		filepath.Join(home, ".chatroom", "machines", "state"),
	} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	storefixtures.NewDB(t, filepath.Join(home, ".middle", "db.sqlite3"), storefixtures.MiddleMigrations)
	return home, project
}

// rootSources runs --once --json and returns each root's source by path.
func rootSources(t *testing.T, args ...string) map[string]string {
	t.Helper()
	out, stderr, code := execute(t, append([]string{"--once", "--json", "--allow-empty", "--fail-on", "none"}, args...)...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		RootSources []struct{ Path, Source string } `json:"root_sources"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := map[string]string{}
	for _, r := range doc.RootSources {
		got[r.Path] = r.Source
	}
	return got
}

// SPEC §1, §10: with no ROOT the defaults add the store of every system
// found where it keeps it, each read by its own source, beside the native
// defaults; a KIND:PATH root is read by the source it names.
func TestDefaultRootsAddTheStoresThatExist(t *testing.T) {
	home, project := storeHome(t)
	want := map[string]string{
		filepath.Join(project, ".sessions"):                   "native",
		filepath.Join(project, ".opencode", "opencode-teams"): "opencode-teams",
		filepath.Join(home, ".middle"):                        "middle",
		filepath.Join(home, ".chatroom"):                      "chatroom",
	}
	if got := rootSources(t); !maps.Equal(got, want) {
		t.Errorf("default roots = %v, want %v", got, want)
	}

	// $OPENCODE_TEAMS_DIR moves the opencode-teams store.
	moved := filepath.Join(t.TempDir(), "teams-store")
	if err := os.MkdirAll(filepath.Join(moved, "teams"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENCODE_TEAMS_DIR", moved)
	got := rootSources(t)
	if got[moved] != "opencode-teams" {
		t.Errorf("with $OPENCODE_TEAMS_DIR: roots = %v, want %s read as opencode-teams", got, moved)
	}
	if _, ok := got[filepath.Join(project, ".opencode", "opencode-teams")]; ok {
		t.Errorf("with $OPENCODE_TEAMS_DIR: the project's own store is still a root: %v", got)
	}

	// A store that is not there adds nothing.
	if err := os.RemoveAll(filepath.Join(home, ".chatroom")); err != nil {
		t.Fatal(err)
	}
	if got := rootSources(t); got[filepath.Join(home, ".chatroom")] != "" {
		t.Errorf("without ~/.chatroom: roots = %v", got)
	}

	// A root given by KIND:PATH is read by that source.
	if got := rootSources(t, "middle:"+filepath.Join(home, ".middle")); !maps.Equal(got, map[string]string{filepath.Join(home, ".middle"): "middle"}) {
		t.Errorf("middle:PATH read as %v", got)
	}
}

// SPEC §1, §10: Claude Code's store is a default root where it exists
// (~/.claude, or $CLAUDE_CONFIG_DIR), a plain path holding its layout is
// detected as it, `claude:PATH` names it, and its teams/ (a layout
// opencode-teams shares) is read as Claude Code's, not opencode-teams'.
func TestDefaultRootsAddClaudeCode(t *testing.T) {
	home, _ := storeHome(t)
	store := filepath.Join(home, ".claude")
	if got := rootSources(t); got[store] != "" {
		t.Errorf("without ~/.claude: roots = %v", got)
	}
	for _, dir := range []string{filepath.Join(store, "teams"), filepath.Join(store, "settings")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got := rootSources(t); got[store] != "claude" {
		t.Errorf("~/.claude with teams/: roots = %v, want %s read as claude", got, store)
	}
	if got := rootSources(t, store); !maps.Equal(got, map[string]string{store: "claude"}) {
		t.Errorf("the plain path %s read as %v, want claude", store, got)
	}
	moved := filepath.Join(t.TempDir(), "claude-config")
	for _, sub := range []string{"sessions", "projects"} {
		if err := os.MkdirAll(filepath.Join(moved, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got := rootSources(t, "claude:"+moved); !maps.Equal(got, map[string]string{moved: "claude"}) {
		t.Errorf("claude:PATH read as %v", got)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", moved)
	got := rootSources(t)
	if got[moved] != "claude" || got[store] != "" {
		t.Errorf("with $CLAUDE_CONFIG_DIR: roots = %v, want %s read as claude and not %s", got, moved, store)
	}
	// A project's own .claude (settings, commands) is no store.
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, ".claude", "commands"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := rootSources(t, project); got[project] != "native" {
		t.Errorf("a project with its own .claude read as %v, want native", got)
	}
}

// SPEC §1, §10: today's default `.teaparty/jobs` is read by the file
// protocol as it always was — its job's lead beats through `.heartbeat` —
// and by TeaParty's source too, as one root: the bus's workers hang under
// the lead, and the root is named once, read by "teaparty".
func TestDefaultTeaPartyJobsIsReadBothWays(t *testing.T) {
	_, project := storeHome(t)
	jobs := filepath.Join(project, ".teaparty", "jobs")
	job := filepath.Join(jobs, "job-1--fix")
	if err := os.MkdirAll(job, 0o755); err != nil {
		t.Fatal(err)
	}
	hb := `{"pid": 0, "parent_heartbeat": "", "role": "lead", "started": 0, "status": "completed"}`
	if err := os.WriteFile(filepath.Join(job, ".heartbeat"), []byte(hb), 0o644); err != nil {
		t.Fatal(err)
	}
	bus := storefixtures.NewDB(t, filepath.Join(job, "messages.db"), storefixtures.TeaPartyBusDDL)
	if _, err := bus.Exec(`INSERT INTO conversations (id, type, state, created_at, parent_conversation_id) VALUES
		('job:webapp:1', 'job', 'closed', 1746630000, ''),
		('dispatch:aa', 'dispatch', 'closed', 1746630000, 'job:webapp:1')`); err != nil {
		t.Fatal(err)
	}
	if got := rootSources(t); got[jobs] != "teaparty" {
		t.Errorf("default roots = %v, want %s read as teaparty", got, jobs)
	}
	out, stderr, code := execute(t, "--once", "--json", "--fail-on", "none")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Roots    []string `json:"roots"`
		Sessions []struct {
			ID       string `json:"id"`
			Source   string `json:"source"`
			Children []struct {
				ID     string `json:"id"`
				Source string `json:"source"`
			} `json:"children"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var lead string
	for _, s := range doc.Sessions {
		if s.ID == "jobs/job-1--fix" && s.Source == "native" && len(s.Children) == 1 &&
			s.Children[0].ID == "jobs/job-1--fix/dispatch:aa" && s.Children[0].Source == "teaparty" {
			lead = s.ID
		}
	}
	if lead == "" {
		t.Errorf("no native lead jobs/job-1--fix with its bus worker below it in %s", out)
	}
	seen := map[string]bool{}
	for _, r := range doc.Roots {
		if seen[r] {
			t.Errorf("root %s named twice in %v", r, doc.Roots)
		}
		seen[r] = true
	}
}

// SPEC §5.5: a config inside a KIND:PATH root is inside that root: an
// action refuses it as it would for the bare path.
func TestConfigInsideAKindPathRootIsRefused(t *testing.T) {
	home, _ := storeHome(t)
	cfg := filepath.Join(home, ".chatroom", "config.toml")
	if err := os.WriteFile(cfg, []byte("[resume]\nargv = [\"true\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := execute(t, "recover", "--apply", "--config", cfg, "chatroom:"+filepath.Join(home, ".chatroom"))
	if code != ExitUsage || !strings.Contains(stderr, "inside the watched root") {
		t.Errorf("exit %d, stderr %q: want the config refused as inside the root", code, stderr)
	}
}

// SPEC §10: the scanner learns which thresholds the operator gave — by a
// flag or in the config — to put those, and only those, over a source's.
func TestScanOptionsSayWhichThresholdsWereGiven(t *testing.T) {
	storeHome(t)
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("beat = \"40s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, g := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
	if err := root.ParseFlags([]string{"--stale", "3m", "--config", cfg}); err != nil {
		t.Fatal(err)
	}
	opts, err := g.ScanOptions()
	if err != nil {
		t.Fatal(err)
	}
	want := scanner.GivenThresholds{Beat: true, Stale: true}
	if opts.ThresholdsGiven != want {
		t.Errorf("given %+v, want %+v (the config's beat, the flag's stale)", opts.ThresholdsGiven, want)
	}
	kinds := map[string]bool{}
	for _, src := range opts.Sources {
		kinds[string(src.Kind())] = true
	}
	for _, k := range []string{"teaparty", "middle", "opencode-teams", "chatroom", "codex", "opencode", "claude"} {
		if !kinds[k] {
			t.Errorf("sources registered %v lack %s", kinds, k)
		}
	}
}
