package opencodeteams

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestDetect: a store is found as itself (the $OPENCODE_TEAMS_DIR layout,
// agents/ and teams/ directly in it) or inside a project.
func TestDetect(t *testing.T) {
	project := t.TempDir()
	inProject := filepath.Join(project, ".opencode", "opencode-teams")
	if err := os.MkdirAll(filepath.Join(inProject, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	envDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(envDir, "teams"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want bool
	}{
		{"a project holding .opencode/opencode-teams", project, true},
		{"the store itself", inProject, true},
		{"an OPENCODE_TEAMS_DIR with teams/ only", envDir, true},
		{"an empty directory", t.TempDir(), false},
		{"a path that does not exist", filepath.Join(project, "nope"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Source{}).Detect(tt.path); got != tt.want {
				t.Errorf("Detect(%s) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}

// TestDefaultStore follows storage-paths.ts: OPENCODE_TEAMS_DIR replaces the
// whole store dir; else OPENCODE_PROJECT_ROOT, else the nearest ancestor
// with a project marker, holds .opencode/opencode-teams.
func TestDefaultStore(t *testing.T) {
	project := t.TempDir()
	if err := os.Mkdir(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(project, "src", "orders")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name string
		env  map[string]string
		cwd  string
		want string
	}{
		{"OPENCODE_TEAMS_DIR is the store", map[string]string{StoreEnv: "/srv/teams", ProjectRootEnv: "/x"}, deep, "/srv/teams"},
		{"OPENCODE_PROJECT_ROOT is the project", map[string]string{ProjectRootEnv: "/x"}, deep, "/x/.opencode/opencode-teams"},
		{"the nearest ancestor with a marker is the project", nil, deep, filepath.Join(project, ".opencode", "opencode-teams")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DefaultStore(env(tt.env), tt.cwd); got != tt.want {
				t.Errorf("DefaultStore = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestWatchPaths: the dirs whose entries are replaced by rename: agent
// files, team configs and server files (stop writes isRunning false).
func TestWatchPaths(t *testing.T) {
	store := newStore(t, agentRecord())
	const hash = "ce3fa0aa9e98006977055c78d826399a"
	writeFile(t, filepath.Join(store, "servers", hash, "server.json"), []byte("{}"))
	got := Source{}.WatchPaths(store)
	want := []string{store, filepath.Join(store, "agents"), filepath.Join(store, "teams"), filepath.Join(store, "teams", "alpha"),
		filepath.Join(store, "servers"), filepath.Join(store, "servers", hash)}
	if !slices.Equal(got, want) {
		t.Errorf("WatchPaths = %v, want %v", got, want)
	}
}

// TestThresholdsAreTheSystemsDeadline: one beat and stale are the 60 s
// deadline; kill-after is two deadlines; the order the config checks holds.
func TestThresholdsAreTheSystemsDeadline(t *testing.T) {
	th := Source{}.Thresholds()
	if th.Beat != 60*time.Second || th.Stale != 60*time.Second || th.KillAfter != 120*time.Second {
		t.Errorf("thresholds %+v", th)
	}
	if th.Stale <= th.ExitGrace || th.Beat > th.Stale || th.KillAfter < th.Stale {
		t.Errorf("thresholds out of order: %+v", th)
	}
}

// TestAtomicRewritesNeverTearOrHide: a writer rewrites every agent file as
// the system does (writeAtomicJSON: a dot-prefixed temp in the same dir,
// then rename) while the reader reads again and again: every read sees
// every agent, whole, and no problem.
func TestAtomicRewritesNeverTearOrHide(t *testing.T) {
	const agents = 8
	var records []map[string]any
	for i := range agents {
		records = append(records, with(agentRecord(), "id", fmt.Sprintf("agent-%d", i)))
	}
	store := newStore(t, records...)
	dir := filepath.Join(store, "agents")

	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop) // before the wait: a failed read stops the writer too
	wg.Add(1)
	go func() {
		defer wg.Done()
		for round := 0; ; round++ {
			for i, r := range records {
				select {
				case <-stop:
					return
				default:
				}
				// A record that grows and shrinks, so a torn read would not parse.
				padding := fmt.Sprintf("%0*d", 1+(round*7+i)%4000, round)
				body := mustJSON(with(r, "lastError", padding, "heartbeatTs", fixtureNow.Add(-time.Duration(round%50)*time.Second).UTC().Format("2006-01-02T15:04:05.000Z")))
				tmp := filepath.Join(dir, fmt.Sprintf(".%s.json.%d.%d.tmp", r["id"], os.Getpid(), round))
				if err := os.WriteFile(tmp, body, 0o644); err != nil {
					t.Error(err)
					return
				}
				if err := os.Rename(tmp, filepath.Join(dir, r["id"].(string)+".json")); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	for range 300 {
		facts := recordsOnly.Read(store, fixtureNow)
		if len(facts.Problems) != 0 {
			t.Fatalf("problem during rewrites: %+v", facts.Problems)
		}
		if len(facts.Nodes) != agents+1 {
			t.Fatalf("%d nodes during rewrites, want %d", len(facts.Nodes), agents+1)
		}
	}
}
