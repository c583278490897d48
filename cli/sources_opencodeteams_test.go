package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
)

// An opencode-teams agent's session is looked up in the OpenCode database
// an OpenCode root names (`opencode:PATH`, or a path read as OpenCode's),
// not in the one at OpenCode's default place: two databases hold the
// agent's session, updated at different times, and the named one's is the
// beat (the "session updated" field). With no OpenCode root, the default
// place's.
func TestAnOpencodeRootNamesTheDatabaseOfTheAgentsBeats(t *testing.T) {
	_, project := storeHome(t)
	const session = "ses_3c1f9a2b7ffeK4mQ8rT2vXyZ1a"
	xdg := t.TempDir()
	t.Setenv("XDG_DATA_HOME", xdg)
	now := time.Now().Truncate(time.Millisecond)
	atDefault, atNamed := now.Add(-20*time.Second), now.Add(-3*time.Second)
	sessionDB := func(dir string, updated time.Time) {
		db := storefixtures.NewDB(t, filepath.Join(dir, "opencode.db"), storefixtures.OpencodeDDL)
		for _, q := range []string{`INSERT INTO project (id) VALUES ('p1')`, fmt.Sprintf(`INSERT INTO session
			(id, project_id, slug, directory, title, version, time_created, time_updated)
			VALUES ('%s', 'p1', 'brave-fox', '/home/dev/acme-api', 'builder-1', '1.1.0', %d, %d)`, session, updated.UnixMilli()-60000, updated.UnixMilli())} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	named := filepath.Join(t.TempDir(), "opencode")
	sessionDB(filepath.Join(xdg, "opencode"), atDefault)
	sessionDB(named, atNamed)
	store := filepath.Join(project, ".opencode", "opencode-teams")
	agent, err := json.Marshal(map[string]any{
		"id": "builder-1", "name": "builder-1", "teamName": "alpha", "role": "worker", "model": "claude-sonnet-4",
		"sessionId": session, "serverPort": 28799, "cwd": project, "color": "#FF6B6B", "status": "active", "isActive": true,
		"createdAt": now.Add(-time.Hour).UTC().Format(time.RFC3339Nano), "heartbeatTs": now.Add(-time.Minute).UTC().Format(time.RFC3339Nano),
		"updatedAt": now.Add(-time.Minute).UTC().Format(time.RFC3339Nano), "consecutiveMisses": 0, "sessionRotationCount": 0,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, "agents", "builder-1.json"), agent, 0o644); err != nil {
		t.Fatal(err)
	}
	stamp := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
	tests := []struct {
		name  string
		roots []string
		want  time.Time
	}{
		{name: "opencode:PATH", roots: []string{"opencode:" + named, "opencode-teams:" + store}, want: atNamed},
		{name: "after the store", roots: []string{"opencode-teams:" + store, "opencode:" + named}, want: atNamed},
		{name: "its database", roots: []string{"opencode-teams:" + store, "opencode:" + filepath.Join(named, "opencode.db")}, want: atNamed},
		{name: "a path read as OpenCode's", roots: []string{named, "opencode-teams:" + store}, want: atNamed},
		{name: "no OpenCode root: the default place's", roots: []string{"opencode-teams:" + store}, want: atDefault},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := execute(t, append([]string{"--once", "--json", "--allow-empty", "--fail-on", "none"}, tc.roots...)...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got, found := "", false
			var walk func(ns []jsonNode)
			walk = func(ns []jsonNode) {
				for _, n := range ns {
					if filepath.Base(n.Heartbeat) == "builder-1.json" {
						found = true
						for _, f := range n.SourceFields {
							if f.Name == "session updated" {
								got = f.Value
							}
						}
					}
					walk(n.Children)
				}
			}
			var doc struct{ Sessions []jsonNode }
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			walk(doc.Sessions)
			if !found || got != stamp(tc.want) {
				t.Errorf("the agent's session updated %q (found %v), want %s", got, found, stamp(tc.want))
			}
		})
	}
}

// jsonNode is what the test reads of a node of the --once --json document.
type jsonNode struct {
	Heartbeat    string
	SourceFields []struct{ Name, Value string } `json:"source_fields"`
	Children     []jsonNode
}
