package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/dispatchtop/dispatchtop/model"
)

// completions runs cobra's hidden __complete command and returns the
// offered values (with their descriptions) and the directive line.
func completions(t *testing.T, args ...string) (map[string]string, string) {
	t.Helper()
	stdout, stderr, code := execute(t, append([]string{"__complete"}, args...)...)
	if code != ExitOK {
		t.Fatalf("__complete %v: exit %d: %s", args, code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	directive := lines[len(lines)-1]
	offered := map[string]string{}
	for _, l := range lines[:len(lines)-1] {
		value, desc, _ := strings.Cut(l, "\t")
		offered[value] = desc
	}
	return offered, directive
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// completionFixture adds to actionsFixture a running session `run`, a dead
// session `spent` whose retry budget is spent, and a merged session `done`.
func completionFixture(t *testing.T) string {
	t.Helper()
	root := actionsFixture(t)
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("run/.heartbeat", `{"pid": 0, "parent_heartbeat": "", "role": "lead", "status": "running"}`)
	dead, err := os.ReadFile(filepath.Join(root, "dead/.heartbeat"))
	if err != nil {
		t.Fatal(err)
	}
	write("spent/.heartbeat", string(dead))
	st, _ := os.Stat(filepath.Join(root, "dead/.heartbeat"))
	os.Chtimes(filepath.Join(root, "spent/.heartbeat"), st.ModTime(), st.ModTime())
	count, _ := json.Marshal(map[string]any{"total": 9, "by_phase": map[string]int{"EXECUTE": 3}})
	write("spent/.retry-count", string(count))
	write("spent/.cfa-state.json", `{"state": "EXECUTE"}`)
	write("done/.heartbeat", `{"pid": 0, "parent_heartbeat": "", "role": "lead", "started": 1, "status": "completed"}`)
	write("done/.merged", "")
	return root
}

// SPEC §4 (shell completion): NODE completes to the nodes the command can
// act on, each described by its state and recommended action.
func TestNodeCompletionOffersWhatTheCommandCanActOn(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := completionFixture(t)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "kill: running nodes", args: []string{"kill", "--root", root, ""}, want: []string{"run"}},
		{name: "resume: dead nodes with retries left", args: []string{"resume", "--root", root, ""}, want: []string{"dead"}},
		{name: "resume --force: every dead node", args: []string{"resume", "--force", "--root", root, ""}, want: []string{"dead", "spent"}},
		{name: "compact: nodes with a .children", args: []string{"compact", "--root", root, ""}, want: []string{"fin"}},
		{name: "compact --all takes no node", args: []string{"compact", "--all", "--root", root, ""}, want: []string{}},
		{name: "merge: succeeded, not running, parent not running, not merged", args: []string{"merge", "--root", root, ""}, want: []string{"fin", "fin/c"}},
		{name: "a prefix narrows", args: []string{"merge", "--root", root, "fin/"}, want: []string{"fin/c"}},
		{name: "one NODE only", args: []string{"merge", "--root", root, "fin", ""}, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offered, directive := completions(t, tt.args...)
			if got := keys(offered); strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("offered %v, want %v", got, tt.want)
			}
			if directive != ":4" {
				t.Errorf("directive %s, want :4 (no file completion)", directive)
			}
		})
	}
	offered, _ := completions(t, "resume", "--force", "--root", root, "")
	if d := offered["dead"]; !strings.HasPrefix(d, "dead, resume") {
		t.Errorf("dead is described %q, want its state and action first", d)
	}
	if d := offered["spent"]; !strings.HasPrefix(d, "dead, surface") || !strings.Contains(d, "retry budget spent") {
		t.Errorf("spent is described %q, want state, action and reason", d)
	}
}

// SPEC §4 (shell completion): --fail-on completes the names of the list
// being typed, after a comma or a plus; --theme completes the themes.
func TestFlagValuesComplete(t *testing.T) {
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	dir := filepath.Join(cfgHome, "dispatchtop", "themes")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "paper.toml"), []byte("extends = \"light\"\n"), 0o644)
	tests := []struct {
		name          string
		args          []string
		want, notWant []string
		directive     string
	}{
		{name: "fail-on from nothing", args: []string{"--once", "--fail-on", ""}, directive: ":6",
			want: []string{"dead", "running", "kill_candidate", "orphaned", "action:kill", "action:resume", "action:surface", "none"}},
		{name: "fail-on after a plus", args: []string{"--once", "--fail-on", "dead+action:re"}, directive: ":6",
			want: []string{"dead+action:resume"}, notWant: []string{"dead+action:kill", "dead+dead", "dead+none"}},
		{name: "fail-on after a comma", args: []string{"--once", "--fail-on", "dead,kill"}, directive: ":6",
			want: []string{"dead,kill_candidate"}, notWant: []string{"dead,dead"}},
		{name: "theme", args: []string{"--theme", ""}, directive: ":4",
			want: []string{"dark", "light", "high-contrast", "mono", "paper"}},
		{name: "demo's theme", args: []string{"demo", "--theme", "p"}, directive: ":4",
			want: []string{"paper"}, notWant: []string{"dark"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offered, directive := completions(t, tt.args...)
			for _, w := range tt.want {
				if _, ok := offered[w]; !ok {
					t.Errorf("offered %v, want %q among them", keys(offered), w)
				}
			}
			for _, w := range tt.notWant {
				if _, ok := offered[w]; ok {
					t.Errorf("offered %q", w)
				}
			}
			if directive != tt.directive {
				t.Errorf("directive %s, want %s", directive, tt.directive)
			}
		})
	}
}

// A ROOT's KIND: prefix completes (SPEC §10), each kind described, without
// a space after it so the path follows.
func TestRootKindsComplete(t *testing.T) {
	offered, directive := completions(t, "")
	for _, kind := range []string{"native:", "teaparty:", "middle:", "opencode-teams:", "chatroom:"} {
		if offered[kind] == "" {
			t.Errorf("completion of a ROOT lacks %s (offered %v)", kind, offered)
		}
	}
	if directive != ":2" {
		t.Errorf("directive %q, want :2 (no space after a kind)", directive)
	}
}

// SPEC §4 (shell completion), §5.2, §5.4: resume and merge work in a
// node's infra dir, so a node of a source that gives it none (a chatroom
// agent, a row without a worktree) is never offered to either.
func TestNodeWithoutADirIsNotOfferedToResumeOrMerge(t *testing.T) {
	for _, cmd := range []*cobra.Command{newResumeCmd(&Globals{}), newMergeCmd(&Globals{})} {
		for _, dir := range []string{"/srv/fleet/job-7", ""} {
			n := &model.Node{ID: "w", Source: "chatroom", InfraDir: dir, State: model.StateDead,
				HasHeartbeat: true, Heartbeat: &model.Heartbeat{Status: model.StatusCompleted}}
			can := resumable
			if cmd.Name() == "merge" {
				can = mergeable
			}
			if got, want := can(cmd, n), dir != ""; got != want {
				t.Errorf("%s offers a node with infra dir %q: %v, want %v", cmd.Name(), dir, got, want)
			}
		}
	}
}
