package actions

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/teaparty"
	"github.com/dispatchtop/dispatchtop/sources/teaparty/teapartytest"
)

// teaPartyJob writes a TeaParty home with one job: its lead beats through
// the job dir's .heartbeat, its two workers are rows of the job's bus with
// their session dirs under the job dir, each run by a live process. It
// returns the home and the job dir.
func teaPartyJob(t *testing.T) (home, job string) {
	t.Helper()
	home = filepath.Join(t.TempDir(), "webapp", ".teaparty")
	job = filepath.Join(home, "jobs", "job-20260507-101500--scoped")
	lead := startHelper(t, "sleep")
	writeNode(t, job, nodeSpec{pid: lead.Process.Pid, started: testproc.Started(t, lead.Process.Pid), status: "running", extra: map[string]any{"role": "job-lead"}})
	db, err := teapartytest.Open(filepath.Join(job, "messages.db"), teapartytest.DDL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	const jobID = "job:webapp:20260507-101500"
	created := float64(time.Now().Add(-time.Minute).Unix())
	rows := []teapartytest.Conversation{{ID: jobID, Type: "job", State: "active", CreatedAt: created, Agent: "webapp-lead", Slug: "webapp"}}
	for _, sid := range []string{"w1", "w2"} {
		p := startHelper(t, "sleep")
		dir := filepath.Join(job, "tasks", sid)
		if err := os.MkdirAll(filepath.Join(dir, "worktree"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "stream.jsonl"), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, teapartytest.Conversation{ID: "dispatch:" + sid, Type: "dispatch", State: "active", CreatedAt: created,
			Agent: "coding-agent", Parent: jobID, Slug: "webapp", Worktree: filepath.Join(dir, "worktree"),
			PID: p.Process.Pid, PIDStarted: testproc.Started(t, p.Process.Pid)})
	}
	if err := teapartytest.Insert(db, rows...); err != nil {
		t.Fatal(err)
	}
	return home, job
}

// SPEC §5, §10: an action re-reads its node's session with the roots
// prepared as the scan prepares them, sources included: a node under a
// `teaparty:PATH` root is found by that root alone (no full re-read), with
// the workers its bus hangs under it, so kill --tree names them.
func TestScopedReReadOfATeaPartyJobFindsItByItsPrefixedRoot(t *testing.T) {
	home, job := teaPartyJob(t)
	e := New(EngineOptions{Scan: scanner.Options{Roots: []string{"teaparty:" + home}, Thresholds: model.DefaultThresholds(),
		Sources: []sources.Source{teaparty.New()}}})
	hint, err := e.scan(e.opts.Scan)
	if err != nil {
		t.Fatal(err)
	}
	lead := hint.Node("jobs/job-20260507-101500--scoped")
	if lead == nil || len(lead.Children) != 2 || lead.Children[0].Source != string(sources.TeaParty) {
		t.Fatal("fixture: the full scan has no job lead with its 2 TeaParty workers")
	}
	if scope := sessionScopes(hint)[lead.ID]; scope != job {
		t.Fatalf("fixture: the lead's session scope is %q, want its job dir %s", scope, job)
	}

	snap, err := e.scanSession(job)
	if err != nil {
		t.Fatalf("scoped re-read of %s: %v", job, err)
	}
	got := snap.Node(lead.ID)
	if got == nil {
		t.Fatalf("the scoped re-read lost %s", lead.ID)
	}
	if got.State != lead.State || got.Action != lead.Action || len(got.Children) != len(lead.Children) {
		t.Fatalf("scoped re-read: %s %s %d children; full scan: %s %s %d children",
			got.State, got.Action, len(got.Children), lead.State, lead.Action, len(lead.Children))
	}

	// The action itself: no full re-read, and the plan kills the workers.
	e.scan = func(scanner.Options) (*model.Snapshot, error) {
		return nil, fmt.Errorf("full re-read")
	}
	res, err := e.RunWithHint(context.Background(), Request{Action: model.ActionKill, Node: lead.ID, Tree: true, DryRun: true}, hint)
	if err != nil || res.Outcome != OutcomeDryRun {
		t.Fatalf("kill --tree --dry-run %s: %s: %s (%v)", lead.ID, res.Outcome, res.Message, err)
	}
	plan := strings.Join(res.Plan, "\n")
	for _, w := range lead.Children {
		if !strings.Contains(plan, "node "+w.ID+",") {
			t.Errorf("the plan does not kill worker %s:\n%s", w.ID, plan)
		}
	}
}
