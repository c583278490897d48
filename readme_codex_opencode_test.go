package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
)

// The README's sections for Codex CLI and OpenCode give the one command
// that shows each: run as written ($HOME the test's), it reads the store
// with the system's source and shows its records, a spawned child under
// its parent.
func TestReadmeCommandShowsCodexAndOpencode(t *testing.T) {
	home := t.TempDir()
	now := time.Now()
	codexDB := storefixtures.NewDB(t, filepath.Join(home, ".codex", "state_5.sqlite"), storefixtures.CodexStateDDL)
	for _, id := range []string{"th-root", "th-kid"} {
		if _, err := codexDB.Exec(`INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title,
			sandbox_policy, approval_mode) VALUES (?, '', ?, ?, 'cli', 'openai', '/w', 't', 'read-only', 'on-request')`, id, now.Unix(), now.Unix()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := codexDB.Exec(`INSERT INTO thread_spawn_edges VALUES ('th-root', 'th-kid', 'open')`); err != nil {
		t.Fatal(err)
	}
	ocDB := storefixtures.NewDB(t, filepath.Join(home, ".local", "share", "opencode", "opencode.db"), storefixtures.OpencodeDDL)
	if _, err := ocDB.Exec(`INSERT INTO project (id) VALUES ('p1')`); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]any{{"ses_root", nil}, {"ses_kid", "ses_root"}} {
		if _, err := ocDB.Exec(`INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated)
			VALUES (?, 'p1', ?, 's', '/w', 't', '1', ?, ?)`, r[0], r[1], now.UnixMilli(), now.UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ system, source, child string }{
		{"Codex CLI", "codex", "th-kid"},
		{"OpenCode", "opencode", "ses_kid"},
	} {
		t.Run(tc.system, func(t *testing.T) {
			line := readmeSystemCommand(t, tc.system)
			argv := strings.Fields(strings.ReplaceAll(line, "$HOME", home))
			if len(argv) < 2 || argv[0] != "dispatchtop" {
				t.Fatalf("the command %q is not dispatchtop and its roots", line)
			}
			cmd := exec.Command(binary, append(argv[1:], "--once", "--json", "--fail-on", "none")...)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+t.TempDir())
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v: %s", line, err, stderr.String())
			}
			var doc struct {
				RootSources []struct{ Path, Source string } `json:"root_sources"`
				Sessions    []e2eNode                       `json:"sessions"`
			}
			if err := json.Unmarshal(out, &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.RootSources) != 1 || doc.RootSources[0].Source != tc.source {
				t.Fatalf("roots %v, want one read by %s", doc.RootSources, tc.source)
			}
			count, childUnderParent := 0, false
			var walk func(parent *e2eNode, ns []e2eNode)
			walk = func(parent *e2eNode, ns []e2eNode) {
				for i := range ns {
					n := &ns[i]
					if n.Source == tc.source {
						count++
						if strings.HasSuffix(n.Key, "#"+tc.child) && parent != nil && parent.Source == tc.source {
							childUnderParent = true
						}
					}
					walk(n, n.Children)
				}
			}
			walk(nil, doc.Sessions)
			if count != 2 || !childUnderParent {
				t.Errorf("%s: %d %s nodes, child under its parent %v", line, count, tc.source, childUnderParent)
			}
		})
	}
}
