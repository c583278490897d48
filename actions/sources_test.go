package actions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/sources"
)

// rowStore is a source for these tests: a directory holding rows.json, a
// list of rows, each a node with the traits it names.
type rowStore struct{}

const rowFile = "rows.json"

type row struct {
	ID         string        `json:"id"`
	PID        int           `json:"pid"`
	Started    float64       `json:"started"`
	NeverKill  bool          `json:"never_kill"`
	StartSlack time.Duration `json:"start_slack"`
	InfraDir   string        `json:"infra_dir"`
}

func (rowStore) Kind() sources.Kind { return "rows" }
func (rowStore) Detect(path string) bool {
	_, err := os.Stat(filepath.Join(path, rowFile))
	return err == nil
}
func (rowStore) WatchPaths(path string) []string { return []string{filepath.Join(path, rowFile)} }
func (rowStore) Thresholds() model.Thresholds    { return model.DefaultThresholds() }
func (rowStore) Read(path string, now time.Time) sources.Facts {
	var rows []row
	b, err := os.ReadFile(filepath.Join(path, rowFile))
	if err == nil {
		err = json.Unmarshal(b, &rows)
	}
	if err != nil {
		return sources.Facts{Problems: []model.Problem{{Path: path, Error: err.Error()}}}
	}
	var facts sources.Facts
	for _, r := range rows {
		facts.Nodes = append(facts.Nodes, &model.Node{
			Source: "rows", ID: r.ID, HeartbeatPath: path + "#" + r.ID, HasHeartbeat: true, InfraDir: r.InfraDir,
			Heartbeat: &model.Heartbeat{PID: r.PID, Started: r.Started, Status: model.StatusRunning, Role: "agent",
				HasParentField: true},
			BeatMtime: now,
			Traits:    model.Traits{NeverKill: r.NeverKill, StartSlack: r.StartSlack},
			Rare:      &model.Rare{SourceFields: []model.Field{{Name: "row", Value: r.ID}}},
		})
	}
	return facts
}

// rowEngine is an engine over a store of rows.
func rowEngine(t *testing.T, rows ...row) (*Engine, string) {
	t.Helper()
	store := t.TempDir()
	writeJSON(t, filepath.Join(store, rowFile), rows)
	// A minute ahead: a `started` stamped 20 s after a process created
	// just now is not in the future.
	ahead := func() time.Time { return time.Now().Add(time.Minute) }
	return New(EngineOptions{Scan: scanner.Options{Roots: []string{store}, Thresholds: model.DefaultThresholds(),
		Sources: []sources.Source{rowStore{}}, Now: ahead}}), store
}

// SPEC §5.1, §10: kill verifies a source's pid as the classifier does,
// within the source's StartSlack — a process whose `started` was stamped
// late is the same process and is killed — and never kills a node a human
// controls.
func TestKillOfASourceNodeHonoursItsTraits(t *testing.T) {
	late := startHelper(t, "sleep")
	human := startHelper(t, "sleep")
	e, _ := rowEngine(t,
		row{ID: "late", PID: late.Process.Pid, Started: testproc.Started(t, late.Process.Pid) + 20, StartSlack: 30 * time.Second},
		row{ID: "human", PID: human.Process.Pid, Started: testproc.Started(t, human.Process.Pid), NeverKill: true},
	)
	res, err := e.Run(context.Background(), Request{Action: model.ActionKill, Node: "late", Grace: time.Second})
	if err != nil || res.Outcome != OutcomeDone {
		t.Fatalf("kill of a late-stamped process: %s: %s (%v)", res.Outcome, res.Message, err)
	}
	if !waitFor(5*time.Second, func() bool { return !processAlive(late.Process.Pid) }) {
		t.Error("the late-stamped process is still alive")
	}

	res, err = e.Run(context.Background(), Request{Action: model.ActionKill, Node: "human", Grace: time.Second})
	if err != nil || !res.Refused || !strings.Contains(res.Message, "controlled by a human") {
		t.Fatalf("kill of a human-controlled node: %s: %s (%v), want refused, naming why", res.Outcome, res.Message, err)
	}
	if !processAlive(human.Process.Pid) {
		t.Error("the human-controlled process was killed")
	}
}

// SPEC §5.3: a source's node with no `.children` — no dir, or a dir with
// none — is refused, the reason naming its source; nothing of the working
// directory is read for it.
func TestCompactOfASourceNodeWithoutARegistryNamesItsSource(t *testing.T) {
	e, store := rowEngine(t)
	dir := filepath.Join(store, "withdir") // inside the root: a dir outside is refused for that
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(store, rowFile), []row{{ID: "nodir"}, {ID: "withdir", InfraDir: dir}})
	for _, id := range []string{"nodir", "withdir"} {
		t.Run(id, func(t *testing.T) {
			res, err := e.Run(context.Background(), Request{Action: model.ActionCompact, Node: id})
			if err != nil || !res.Refused || !strings.Contains(res.Message, "no .children") || !strings.Contains(res.Message, "rows record") {
				t.Errorf("compact %s: %s: %s (%v), want refused naming the source", id, res.Outcome, res.Message, err)
			}
		})
	}
}

// SPEC §5.5: {source}, {row_id} and {session_name} give a source's node
// its KIND, its record's id and its tmux session; "" where it has none.
func TestSourcePlaceholders(t *testing.T) {
	argv := []string{"cmd", "{source}", "row={row_id}", "session={session_name}"}
	tests := []struct {
		name string
		n    *model.Node
		want []string
	}{
		{"middle", &model.Node{ID: "wf", Source: "middle", Rare: &model.Rare{SourceFields: []model.Field{
			{Name: "workflow", Value: "wf-7"}, {Name: "tmux_session", Value: "mid-7"}}}},
			[]string{"cmd", "middle", "row=wf-7", "session=mid-7"}},
		{"teaparty", &model.Node{ID: "c", Source: "teaparty", Rare: &model.Rare{SourceFields: []model.Field{{Name: "conversation", Value: "dispatch:ab12"}}}},
			[]string{"cmd", "teaparty", "row=dispatch:ab12", "session="}},
		{"native", &model.Node{ID: "s"}, []string{"cmd", "native", "row=", "session="}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := expandArgv("resume.argv", argv, tc.n)
			if err != nil || strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("expandArgv = %q (%v), want %q", got, err, tc.want)
			}
		})
	}
}

// fileRowStore is rowStore kept in one file: its root is the file itself,
// as a middle root may be its database.
type fileRowStore struct{ rowStore }

func (fileRowStore) Detect(path string) bool         { return filepath.Base(path) == rowFile }
func (fileRowStore) WatchPaths(path string) []string { return []string{path} }
func (fileRowStore) Read(path string, now time.Time) sources.Facts {
	return rowStore{}.Read(filepath.Dir(path), now)
}

// SPEC §5: the journal of a store whose root is a file (a database) lives
// beside it, in the directory that holds the file: an action on its node
// is journaled, and `journal` reads it back from the same root.
func TestAStoreFileRootIsJournaledBesideTheFile(t *testing.T) {
	p := startHelper(t, "sleep")
	dir := t.TempDir()
	store := filepath.Join(dir, rowFile)
	writeJSON(t, store, []row{{ID: "w", PID: p.Process.Pid, Started: testproc.Started(t, p.Process.Pid)}})
	e := New(EngineOptions{Scan: scanner.Options{Roots: []string{store}, Thresholds: model.DefaultThresholds(),
		Sources: []sources.Source{fileRowStore{}}}})
	res, err := e.Run(context.Background(), Request{Action: model.ActionKill, Node: "w", Grace: time.Second})
	if err != nil || res.Outcome != OutcomeDone {
		t.Fatalf("kill: %s: %s (%v)", res.Outcome, res.Message, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".dispatchtop", "journal.jsonl")); err != nil {
		t.Fatalf("no journal beside the store file: %v", err)
	}
	entries, err := ReadJournal(store, "w")
	if err != nil || len(entries) != 1 || entries[0].Outcome != OutcomeDone {
		t.Fatalf("ReadJournal(store file) = %+v (%v), want the kill", entries, err)
	}
}
