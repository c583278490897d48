package actions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/sources"
)

// dirlessStore is a source whose records have no dir: "gone" stopped
// beating an hour ago with no pid (dead), "done" completed.
type dirlessStore struct{ rowStore }

func (dirlessStore) Kind() sources.Kind { return "dirless" }

func (dirlessStore) Read(path string, now time.Time) sources.Facts {
	rec := func(id, status string) *model.Node {
		return &model.Node{Source: "dirless", ID: id, HeartbeatPath: path + "#" + id, HasHeartbeat: true,
			Heartbeat: &model.Heartbeat{Status: status, Role: "agent", HasParentField: true},
			BeatMtime: now.Add(-time.Hour)}
	}
	return sources.Facts{Nodes: []*model.Node{rec("gone", model.StatusRunning), rec("done", model.StatusCompleted)}}
}

// SPEC §3, §5.2, §5.4: resume and merge work in the node's infra dir. A
// record with none is refused before anything is read or written, the
// reason naming its source — never a path relative to the working
// directory (a `.retry-count`, a `.resume-pending`, a `.merged` there).
func TestResumeAndMergeRefuseANodeWithoutADir(t *testing.T) {
	store := t.TempDir()
	writeJSON(t, filepath.Join(store, rowFile), []row{})
	cwd := t.TempDir()
	t.Chdir(cwd)
	// Garbage where a relative path would lead: reading it would refuse
	// for another reason, naming it.
	if err := os.WriteFile(filepath.Join(cwd, ".retry-count"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := New(EngineOptions{Scan: scanner.Options{Roots: []string{store}, Thresholds: model.DefaultThresholds(),
		Sources: []sources.Source{dirlessStore{}}}, Config: Config{
		Resume: CommandConfig{Argv: []string{"true"}}, Merge: CommandConfig{Argv: []string{"true"}}}})
	tests := []struct {
		action model.Action
		node   string
		dryRun bool
	}{
		{model.ActionResume, "gone", true},
		{model.ActionResume, "gone", false},
		{model.ActionMerge, "done", true},
		{model.ActionMerge, "done", false},
	}
	for _, tc := range tests {
		t.Run(string(tc.action)+map[bool]string{true: " dry run", false: ""}[tc.dryRun], func(t *testing.T) {
			res, err := e.Run(context.Background(), Request{Action: tc.action, Node: tc.node, DryRun: tc.dryRun})
			if err != nil || !res.Refused || !strings.Contains(res.Message, "its dirless record has no dir") {
				t.Errorf("%s %s: %s: %s (%v), want refused, naming the source", tc.action, tc.node, res.Outcome, res.Message, err)
			}
		})
	}
	entries, err := os.ReadDir(cwd)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the working directory holds %v, want only the planted .retry-count", names)
	}
}
