package actions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/middle"
	"github.com/dispatchtop/dispatchtop/sources/teaparty"
	"github.com/dispatchtop/dispatchtop/sources/teaparty/teapartytest"
)

// storeFixture is a store whose one node of interest is dead: the root to
// name, the sources to read it with, the node's id and its dir.
type storeFixture struct {
	root  string
	srcs  []sources.Source
	node  string
	infra string
}

// deadTeaPartyWorker writes a TeaParty home whose job's lead runs, and one
// worker, a row of the job's bus, whose turn's process is gone and whose
// stream has not moved for ten minutes: dead, past TeaParty's stale.
func deadTeaPartyWorker(t *testing.T) storeFixture {
	t.Helper()
	home := filepath.Join(t.TempDir(), "webapp", ".teaparty")
	job := filepath.Join(home, "jobs", "job-20260507-101500--dead")
	lead := startHelper(t, "sleep")
	writeNode(t, job, nodeSpec{pid: lead.Process.Pid, started: testproc.Started(t, lead.Process.Pid), status: "running", extra: map[string]any{"role": "job-lead"}})
	db, err := teapartytest.Open(filepath.Join(job, "messages.db"), teapartytest.DDL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	const jobID = "job:webapp:20260507-101500"
	created := float64(time.Now().Add(-10 * time.Minute).Unix())
	dir := filepath.Join(job, "tasks", "w1")
	if err := os.MkdirAll(filepath.Join(dir, "worktree"), 0o755); err != nil {
		t.Fatal(err)
	}
	stream := filepath.Join(dir, "stream.jsonl")
	if err := os.WriteFile(stream, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	age(t, stream, 10*time.Minute)
	gone := testproc.Gone(t)
	if err := teapartytest.Insert(db,
		teapartytest.Conversation{ID: jobID, Type: "job", State: "active", CreatedAt: created, Agent: "webapp-lead", Slug: "webapp"},
		teapartytest.Conversation{ID: "dispatch:w1", Type: "dispatch", State: "active", CreatedAt: created,
			Agent: "coding-agent", Parent: jobID, Slug: "webapp", Worktree: filepath.Join(dir, "worktree"),
			PID: gone, PIDStarted: float64(time.Now().Add(-time.Hour).Unix())}); err != nil {
		t.Fatal(err)
	}
	return storeFixture{root: "teaparty:" + home, srcs: []sources.Source{teaparty.New()},
		node: "jobs/job-20260507-101500--dead/dispatch:w1", infra: dir}
}

// deadMiddleWorkflow writes a middle home whose one workflow is running by
// its row, owns no tmux session and has not been updated for ten minutes:
// dead, past middle's stale. Its worktree is in middle's home, as middle's
// default worktree_root puts it.
func deadMiddleWorkflow(t *testing.T) storeFixture {
	t.Helper()
	home := filepath.Join(t.TempDir(), ".middle")
	worktree := filepath.Join(home, "worktrees", "acme-api", "wf-1")
	if err := os.MkdirAll(worktree, 0o755); err != nil {
		t.Fatal(err)
	}
	insertWorkflow(t, filepath.Join(home, "db.sqlite3"), "wf-1", worktree, time.Now().Add(-10*time.Minute))
	return storeFixture{root: "middle:" + home, srcs: []sources.Source{middle.New()}, node: "acme/api/wf-1", infra: worktree}
}

// insertWorkflow writes a running workflow row, last updated at updated,
// with its worktree, into the middle database at db (created as middle
// migrates it).
func insertWorkflow(t *testing.T, db, id, worktree string, updated time.Time) {
	t.Helper()
	d := storefixtures.NewDB(t, db, storefixtures.MiddleMigrations)
	ms := updated.UnixMilli()
	if _, err := d.Exec(`INSERT INTO workflows (id, kind, repo, epic_ref, adapter, state, created_at, updated_at, worktree_path, controlled_by)
		VALUES (?, 'implementation', 'acme/api', '7', 'claude', 'running', ?, ?, ?, 'middle')`, id, ms, ms, worktree); err != nil {
		t.Fatal(err)
	}
}

// storeEngine is an engine over the fixture's store.
func storeEngine(f storeFixture, cfg Config) *Engine {
	return New(EngineOptions{Scan: scanner.Options{Roots: []string{f.root}, Thresholds: model.DefaultThresholds(),
		Sources: f.srcs}, Config: cfg})
}

// SPEC §5.2: a node of another source is resumed as a native one is: its
// liveness is its record's, re-read through its store (its key,
// `<db>#<id>`, is no file), and the marker in its dir dedups a second
// resume: the command runs once.
func TestResumeOfAStoreNodeRunsOnceAndDedupsTheSecond(t *testing.T) {
	for name, fixture := range map[string]func(*testing.T) storeFixture{"teaparty": deadTeaPartyWorker, "middle": deadMiddleWorkflow} {
		t.Run(name, func(t *testing.T) {
			f := fixture(t)
			out := filepath.Join(t.TempDir(), "argv")
			e := storeEngine(f, Config{Resume: CommandConfig{Argv: helperArgv("argv", out, "{source}", "{row_id}")}})
			res, err := e.Run(context.Background(), Request{Action: model.ActionResume, Node: f.node})
			if err != nil || res.Outcome != OutcomeDone {
				t.Fatalf("resume %s: %s: %s (%v)", f.node, res.Outcome, res.Message, err)
			}
			if !waitFor(5*time.Second, func() bool { return len(dispatches(t, out)) == 1 }) {
				t.Fatalf("the resume command did not run once: %v", dispatches(t, out))
			}
			if got := dispatches(t, out)[0]; got[0] != name {
				t.Errorf("resume argv %q, want the source %s first", got, name)
			}
			res, err = e.Run(context.Background(), Request{Action: model.ActionResume, Node: f.node})
			if err != nil || !res.Refused || !strings.Contains(res.Message, "already pending") {
				t.Fatalf("second resume: %s: %s (%v), want refused as already pending", res.Outcome, res.Message, err)
			}
			time.Sleep(100 * time.Millisecond) // a second command would have written by now
			if got := dispatches(t, out); len(got) != 1 {
				t.Fatalf("the command ran %d times, want once: %v", len(got), got)
			}
			var rc model.RetryCount
			b, _ := os.ReadFile(filepath.Join(f.infra, ".retry-count"))
			if err := json.Unmarshal(b, &rc); err != nil || rc.Total != 1 {
				t.Fatalf(".retry-count %s (%v), want total 1", b, err)
			}
		})
	}
}

// SPEC §5.2, §9: what resume can know before it claims the marker it
// checks before: a node that beat after the lookup read it as dead is
// refused with nothing created in its dir (the dir's mtime, which a create
// and a remove would both move, stays as it was).
func TestResumeRefusesABeatSinceTheLookupBeforeAnySideEffect(t *testing.T) {
	root := t.TempDir()
	infra := deadNode(t, root, "EXECUTE")
	out := filepath.Join(t.TempDir(), "argv")
	e := testEngine(root, model.Thresholds{}, resumeConfig(out))
	hb := filepath.Join(infra, ".heartbeat")
	e.scan = func(opts scanner.Options) (*model.Snapshot, error) {
		snap, err := scanner.Scan(opts)
		// The agent beats right after the read that judged it dead.
		now := time.Now()
		if cerr := os.Chtimes(hb, now, now); cerr != nil {
			t.Fatal(cerr)
		}
		return snap, err
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(infra, old, old); err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background(), Request{Action: model.ActionResume, Node: "s"})
	if err != nil || !res.Refused || !strings.Contains(res.Message, "beat since") {
		t.Fatalf("resume: %s: %s (%v), want refused: it beat since", res.Outcome, res.Message, err)
	}
	st, err := os.Stat(infra)
	if err != nil {
		t.Fatal(err)
	}
	if !st.ModTime().Equal(old) {
		t.Errorf("%s was written to (mtime %s, was %s): the marker was created and removed on a refusal known before", infra, st.ModTime(), old)
	}
	if len(dispatches(t, out)) != 0 {
		t.Error("the command ran")
	}
}

// SPEC §5.2: the record a resume claimed its marker for is read again
// through its store: a workflow whose row was updated since the lookup
// (another resume took, and its agent runs) is refused, its marker
// removed, and the command never runs.
func TestResumeOfAStoreNodeRefusesARecordThatBeatSince(t *testing.T) {
	f := deadMiddleWorkflow(t)
	out := filepath.Join(t.TempDir(), "argv")
	e := storeEngine(f, Config{Resume: CommandConfig{Argv: helperArgv("argv", out, "{id}")}})
	db := storefixtures.NewDB(t, filepath.Join(strings.TrimPrefix(f.root, "middle:"), "db.sqlite3"), nil)
	scans := 0
	e.scan = func(opts scanner.Options) (*model.Snapshot, error) {
		snap, err := scanner.Scan(opts)
		if scans++; scans == 1 {
			// The row beats right after the lookup read it dead.
			if _, uerr := db.Exec(`UPDATE workflows SET updated_at = ? WHERE id = 'wf-1'`, time.Now().UnixMilli()); uerr != nil {
				t.Fatal(uerr)
			}
		}
		return snap, err
	}
	res, err := e.Run(context.Background(), Request{Action: model.ActionResume, Node: f.node})
	if err != nil || !res.Refused || !strings.Contains(res.Message, "beat since") {
		t.Fatalf("resume: %s: %s (%v), want refused: its record beat since", res.Outcome, res.Message, err)
	}
	if _, err := os.Lstat(filepath.Join(f.infra, ".resume-pending")); !os.IsNotExist(err) {
		t.Errorf("the marker is left behind (%v)", err)
	}
	if len(dispatches(t, out)) != 0 {
		t.Error("the command ran")
	}
}
