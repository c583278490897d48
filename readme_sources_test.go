package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/sources/teaparty/teapartytest"
)

// readmeSystemCommand is the one command of the README's section "Using
// dispatchtop with <system>": the first line of its sh block, its comment
// cut off.
func readmeSystemCommand(t *testing.T, system string) string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	head := "### Using dispatchtop with " + system + "\n"
	_, section, ok := strings.Cut(string(readme), head)
	if !ok {
		t.Fatalf("README.md has no section %q", strings.TrimSpace(head))
	}
	m := regexp.MustCompile("(?s)\\A\\s*```sh\\n([^\\n]*)\\n```").FindStringSubmatch(section)
	if m == nil {
		t.Fatalf("the section %q does not open with one sh command", strings.TrimSpace(head))
	}
	cmd, _, _ := strings.Cut(m[1], "#")
	return strings.TrimSpace(cmd)
}

// copyTree copies the committed tree src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The README's section per system gives the one command that shows it. Run
// as written (its $HOME the test's, in a project holding the stores), with
// --once --json added, it reads each store with the system's source and
// shows its nodes — for TeaParty, the bus's workers under the lead the
// file protocol reads.
func TestReadmeCommandShowsEachSystem(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	// TeaParty: a job whose lead beats through its .heartbeat, one worker
	// in its bus.
	job := filepath.Join(project, ".teaparty", "jobs", "job-20260507-101500--dark-mode")
	pid, started := testproc.Live(t)
	writeAged(t, filepath.Join(job, ".heartbeat"), fmt.Sprintf(`{"pid": %d, "parent_heartbeat": "", "role": "job-lead", "started": %f, "status": "running"}`, pid, started), 0)
	bus, err := teapartytest.Open(filepath.Join(job, "messages.db"), teapartytest.DDL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Close() })
	now := epoch(time.Now())
	if err := teapartytest.Insert(bus,
		teapartytest.Conversation{ID: "job:webapp:1", Type: "job", CreatedAt: now, Agent: "webapp-lead"},
		teapartytest.Conversation{ID: "dispatch:w1", Type: "dispatch", CreatedAt: now, Parent: "job:webapp:1", PID: pid, PIDStarted: started},
	); err != nil {
		t.Fatal(err)
	}
	// middle: one workflow in ~/.middle.
	db := storefixtures.NewDB(t, filepath.Join(home, ".middle", "db.sqlite3"), storefixtures.MiddleMigrations)
	ms := time.Now().UnixMilli()
	if _, err := db.Exec(`INSERT INTO workflows (id, kind, repo, adapter, state, created_at, updated_at) VALUES ('wf-1', 'implementation', 'acme/api', 'claude', 'completed', ?, ?)`, ms, ms); err != nil {
		t.Fatal(err)
	}
	// opencode-teams and chatroom: the committed stores, where each
	// system keeps it.
	copyTree(t, opencodeFixture, filepath.Join(project, ".opencode", "opencode-teams"))
	copyTree(t, filepath.Join("testdata", "sources", "chatroom", "home", ".chatroom"), filepath.Join(home, ".chatroom"))

	tests := []struct {
		system, source string
		nodes          int
	}{
		{"TeaParty", "teaparty", 1}, // the worker; the lead is the file protocol's
		{"middle", "middle", 1},
		{"opencode-teams", "opencode-teams", 10}, // the fixture's 2 leaders and 8 agents (a 9th file is torn)
		{"chatroom", "chatroom", 5},              // the fixture's daemon and its 4 agents
	}
	for _, tc := range tests {
		t.Run(tc.system, func(t *testing.T) {
			line := readmeSystemCommand(t, tc.system)
			argv := strings.Fields(strings.ReplaceAll(line, "$HOME", home))
			if len(argv) < 2 || argv[0] != "dispatchtop" {
				t.Fatalf("the command %q is not dispatchtop and its roots", line)
			}
			cmd := exec.Command(binary, append(argv[1:], "--once", "--json", "--fail-on", "none")...)
			cmd.Dir = project
			cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+t.TempDir(), "OPENCODE_TEAMS_DIR=", "OPENCODE_PROJECT_ROOT=")
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
			read := false
			for _, r := range doc.RootSources {
				read = read || r.Source == tc.source
			}
			count := 0
			var walk func(parent *e2eNode, ns []e2eNode)
			walk = func(parent *e2eNode, ns []e2eNode) {
				for i := range ns {
					n := &ns[i]
					if n.Source == tc.source {
						count++
						if tc.source == "teaparty" && (parent == nil || parent.Source != "native" || parent.InfraDir != job) {
							t.Errorf("the bus worker %s is not under the job's lead", n.Key)
						}
					}
					walk(n, n.Children)
				}
			}
			walk(nil, doc.Sessions)
			if !read || count != tc.nodes {
				t.Errorf("%s: roots %v, %d %s nodes; want the store read by %s and %d nodes", line, doc.RootSources, count, tc.source, tc.source, tc.nodes)
			}
		})
	}
}
