package actions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// fleet writes a root with one node for every action:
//
//	run     running (a live helper), its registry holding a finished child
//	run/old finished: compactable from run's registry
//	dead    dead, CfA EXECUTE: resumable
//	p, p/c  a finished parent and its completed child: mergeable
//	stuck   alive but not beating for an hour: a kill candidate
func fleet(t *testing.T, root string) map[string]int {
	t.Helper()
	run := startHelper(t, "sleep")
	stuck := startHelper(t, "sleep")
	writeNode(t, root, nodeSpec{dir: "run", pid: run.Process.Pid, started: testproc.Started(t, run.Process.Pid), status: "running"})
	writeNode(t, root, nodeSpec{dir: "run/old", status: "completed", parent: "run"})
	register(t, root, "run", "run/old", "t", "1", "active")
	writeNode(t, root, nodeSpec{dir: "dead", pid: testproc.Gone(t), started: float64(time.Now().Add(-time.Hour).Unix()), status: "running", age: 10 * time.Minute, cfa: "EXECUTE"})
	finishedChild(t, root, "t", "2", true)
	writeNode(t, root, nodeSpec{dir: "stuck", pid: stuck.Process.Pid, started: testproc.Started(t, stuck.Process.Pid), status: "running", age: time.Hour})
	return map[string]int{"run": run.Process.Pid, "stuck": stuck.Process.Pid}
}

func fleetConfig(out string) Config {
	return Config{
		Resume: CommandConfig{Argv: helperArgv("argv", out, "resume", "{id}")},
		Merge:  CommandConfig{Argv: helperArgv("argv", out, "merge", "{id}")},
	}
}

// SPEC §5, §9: --dry-run prints what it would do and changes nothing on disk.
func TestDryRunChangesNothingOnDisk(t *testing.T) {
	root := t.TempDir()
	pids := fleet(t, root)
	out := filepath.Join(t.TempDir(), "argv")
	e := testEngine(root, model.Thresholds{}, fleetConfig(out))
	tests := []struct {
		name string
		req  Request
	}{
		{"kill", Request{Action: model.ActionKill, Node: "run", Tree: true}},
		{"resume", Request{Action: model.ActionResume, Node: "dead"}},
		{"compact", Request{Action: model.ActionCompact, Node: "run"}},
		{"compact --all", Request{Action: model.ActionCompact, All: true}},
		{"merge", Request{Action: model.ActionMerge, Node: "p/c"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := treeHash(t, root)
			res, err := e.DryRun(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != OutcomeDryRun || res.Refused || len(res.Plan) == 0 {
				t.Fatalf("dry run: %s %q plan %q", res.Outcome, res.Message, res.Plan)
			}
			if treeHash(t, root) != before {
				t.Fatalf("a dry run changed the tree")
			}
		})
	}
	t.Run("recover", func(t *testing.T) {
		before := treeHash(t, root)
		results, err := e.Recover(context.Background(), false, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(results) == 0 {
			t.Fatal("recover planned nothing")
		}
		if treeHash(t, root) != before {
			t.Fatalf("recover without --apply changed the tree")
		}
	})
	for name, pid := range pids {
		if !processAlive(pid) {
			t.Fatalf("a dry run ended %s", name)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if d := dispatches(t, out); len(d) != 0 {
		t.Fatalf("a dry run ran commands: %v", d)
	}
}

// SPEC §4: --readonly refuses every action (and writes nothing).
func TestReadonlyRefusesEveryAction(t *testing.T) {
	root := t.TempDir()
	fleet(t, root)
	out := filepath.Join(t.TempDir(), "argv")
	e := New(EngineOptions{Scan: scanner.Options{Roots: []string{root}}, Config: fleetConfig(out), Readonly: true})
	before := treeHash(t, root)
	for _, req := range []Request{
		{Action: model.ActionKill, Node: "stuck"},
		{Action: model.ActionResume, Node: "dead"},
		{Action: model.ActionCompact, Node: "run"},
		{Action: model.ActionCompact, All: true},
		{Action: model.ActionMerge, Node: "p/c"},
	} {
		res, err := e.Run(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Refused || !strings.Contains(res.Message, "read-only") {
			t.Fatalf("%s under --readonly: %s %q", req.Action, res.Outcome, res.Message)
		}
	}
	if treeHash(t, root) != before {
		t.Fatalf("--readonly changed the tree")
	}
}

// SPEC §5: the journal holds one line for each action and each refusal,
// with who, where, what was checked and the outcome.
func TestJournalHoldsALineForEachActionAndRefusal(t *testing.T) {
	root := t.TempDir()
	fleet(t, root)
	out := filepath.Join(t.TempDir(), "argv")
	e := testEngine(root, model.Thresholds{}, fleetConfig(out))
	steps := []struct {
		req  Request
		want string
	}{
		{Request{Action: model.ActionCompact, Node: "run"}, OutcomeDone},
		{Request{Action: model.ActionResume, Node: "run"}, OutcomeRefused},
		{Request{Action: model.ActionKill, Node: "dead"}, OutcomeRefused},
		{Request{Action: model.ActionResume, Node: "dead"}, OutcomeDone},
		{Request{Action: model.ActionMerge, Node: "dead"}, OutcomeRefused},
		{Request{Action: model.ActionMerge, Node: "p/c"}, OutcomeDone},
	}
	for _, s := range steps {
		if _, err := e.Run(context.Background(), s.req); err != nil {
			t.Fatal(err)
		}
	}
	all := journalFor(t, root, "")
	if len(all) != len(steps) {
		t.Fatalf("journal holds %d lines, want %d", len(all), len(steps))
	}
	for i, j := range all {
		s := steps[i]
		if j.Action != s.req.Action || j.Node != s.req.Node || j.Outcome != s.want {
			t.Fatalf("line %d: %s %s %s, want %s %s %s", i+1, j.Action, j.Node, j.Outcome, s.req.Action, s.req.Node, s.want)
		}
		if j.User == "" || j.Host == "" || j.Time.IsZero() || j.Message == "" || len(j.Checks) == 0 || j.By != os.Getpid() {
			t.Fatalf("line %d lacks who/where/what: %+v", i+1, j)
		}
		if j.Line() == "" {
			t.Fatal("empty rendering")
		}
	}
	if js := journalFor(t, root, "dead"); len(js) != 3 {
		t.Fatalf("journal lines for dead: %d, want 3", len(js))
	}
}

// SPEC §4: a NODE outside every root belongs to the directory that holds
// its session (its topmost ancestor through parent_heartbeat).
func TestNodeOutsideEveryRootActsInItsSessionHolder(t *testing.T) {
	holder := t.TempDir()
	writeNode(t, holder, nodeSpec{dir: "sess", status: "completed", age: time.Minute})
	infra := writeNode(t, holder, nodeSpec{dir: "sess/team/1", pid: testproc.Gone(t), started: 1, status: "running", parent: "sess", age: 10 * time.Minute, cfa: "PLAN"})
	out := filepath.Join(t.TempDir(), "argv")
	elsewhere := t.TempDir()
	e := testEngine(elsewhere, model.Thresholds{}, fleetConfig(out))
	res, err := e.Run(context.Background(), Request{Action: model.ActionResume, Node: filepath.Join(infra, ".heartbeat")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeDone || res.Root != holder || res.NodeID != "sess/team/1" {
		t.Fatalf("resume outside the roots: %s %q root %s id %s", res.Outcome, res.Message, res.Root, res.NodeID)
	}
	if js := journalFor(t, holder, "sess/team/1"); len(js) != 1 {
		t.Fatalf("journal in the session holder: %+v", js)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, ".dispatchtop")); err == nil {
		t.Fatal("the journal went to a root that does not hold the node")
	}
}

// SPEC §3, §4 (recover): the plan lists the recommended actions; --apply
// carries out merge, resume and compact, and kill only with --kill-stalled.
func TestRecoverAppliesThePlan(t *testing.T) {
	for _, killStalled := range []bool{false, true} {
		t.Run(map[bool]string{false: "without --kill-stalled", true: "with --kill-stalled"}[killStalled], func(t *testing.T) {
			root := t.TempDir()
			pids := fleet(t, root)
			out := filepath.Join(t.TempDir(), "argv")
			e := testEngine(root, model.Thresholds{}, fleetConfig(out))
			plan, err := e.Plan(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]model.Action{}
			for _, s := range plan {
				got[s.NodeID] = s.Action
			}
			want := map[string]model.Action{"dead": model.ActionResume, "p/c": model.ActionMerge, "stuck": model.ActionKill}
			for id, a := range want {
				if got[id] != a {
					t.Fatalf("plan for %s: %q, want %q (plan %+v)", id, got[id], a, plan)
				}
			}
			results, err := e.Recover(context.Background(), true, killStalled)
			if err != nil {
				t.Fatal(err)
			}
			outcome := map[string]string{}
			for _, r := range results {
				outcome[r.NodeID] = r.Outcome
			}
			if outcome["dead"] != OutcomeDone || outcome["p/c"] != OutcomeDone {
				t.Fatalf("recover --apply: %+v", results)
			}
			wantKill := OutcomeSkipped
			if killStalled {
				wantKill = OutcomeDone
			}
			if outcome["stuck"] != wantKill {
				t.Fatalf("stuck: %s, want %s", outcome["stuck"], wantKill)
			}
			if alive := waitFor(3*time.Second, func() bool { return processAlive(pids["stuck"]) != killStalled }); !alive {
				t.Fatalf("stuck alive=%v with killStalled=%v", processAlive(pids["stuck"]), killStalled)
			}
			if !processAlive(pids["run"]) {
				t.Fatal("recover killed a healthy node")
			}
		})
	}
}

// SPEC §1, §9: actions write only inside the roots — a registry, journal
// or log planted as a symlink to a file outside is never written through.
func TestActionsNeverWriteThroughSymlinksOutOfTheRoot(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, root, target string)
		req   Request
	}{
		{name: "registry", req: Request{Action: model.ActionCompact, Node: "fin"}, plant: func(t *testing.T, root, target string) {
			os.Remove(filepath.Join(root, "fin", ".children"))
			os.Symlink(target, filepath.Join(root, "fin", ".children"))
		}},
		{name: "journal directory", req: Request{Action: model.ActionKill, Node: "dead"}, plant: func(t *testing.T, root, target string) {
			os.Symlink(filepath.Dir(target), filepath.Join(root, ".dispatchtop"))
		}},
		{name: "resume log", req: Request{Action: model.ActionResume, Node: "dead"}, plant: func(t *testing.T, root, target string) {
			os.Symlink(target, filepath.Join(root, "dead", ".resume.log"))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			deadNode(t, root, "EXECUTE")
			writeNode(t, root, nodeSpec{dir: "fin", status: "completed", age: time.Minute})
			writeNode(t, root, nodeSpec{dir: "fin/c", status: "completed", parent: "fin", age: time.Minute})
			outsideDir := t.TempDir()
			target := filepath.Join(outsideDir, "journal.jsonl")
			line := `{"heartbeat":"` + filepath.Join(root, "fin/c/.heartbeat") + `","team":"t","task_id":"1","status":"active"}` + "\n"
			os.WriteFile(target, []byte(line), 0o644)
			tc.plant(t, root, target)
			before := treeHash(t, outsideDir)
			out := filepath.Join(t.TempDir(), "argv")
			res, err := testEngine(root, model.Thresholds{}, fleetConfig(out)).Run(context.Background(), tc.req)
			if err == nil && res.Outcome == OutcomeDone {
				t.Fatalf("%s through a symlink succeeded: %q", tc.req.Action, res.Message)
			}
			if treeHash(t, outsideDir) != before {
				t.Fatalf("a file outside the root was written through the %s symlink", tc.name)
			}
		})
	}
}

// recover re-reads a self-contained session alone: that must find every
// node as the full scan does, and a session with a member outside its
// directory must not be scoped.
func TestSessionScopedReReadMatchesTheFullScan(t *testing.T) {
	root := t.TempDir()
	fleet(t, root)
	// "spread" registers a child whose infra dir lies outside its own.
	writeNode(t, root, nodeSpec{dir: "spread", status: "completed", age: time.Minute})
	writeNode(t, root, nodeSpec{dir: "elsewhere/kid", status: "completed", parent: "spread", age: time.Minute})
	register(t, root, "spread", "elsewhere/kid", "t", "1", "active")
	e := testEngine(root, model.Thresholds{}, Config{})
	full, err := e.scan(e.opts.Scan)
	if err != nil {
		t.Fatal(err)
	}
	scopes := sessionScopes(full)
	for _, id := range []string{"spread", "elsewhere/kid"} {
		if full.Node(id) == nil {
			t.Fatalf("fixture: no node %s in the full scan", id)
		}
		if _, ok := scopes[id]; ok {
			t.Fatalf("%s is scoped though its session reaches outside its directory", id)
		}
	}
	for _, id := range []string{"run", "run/old", "dead", "p", "p/c", "stuck"} {
		scope, ok := scopes[id]
		if !ok {
			t.Fatalf("%s is not scoped", id)
		}
		snap, err := e.scanSession(scope)
		if err != nil {
			t.Fatal(err)
		}
		got, want := snap.Node(id), full.Node(id)
		if got == nil {
			t.Fatalf("the scoped re-read of %s lost it", id)
		}
		if got.State != want.State || got.Action != want.Action || got.Reason != want.Reason || len(got.Children) != len(want.Children) || got.ParentID != want.ParentID {
			t.Fatalf("%s scoped: %s %s %q %d children; full: %s %s %q %d children", id,
				got.State, got.Action, got.Reason, len(got.Children), want.State, want.Action, want.Reason, len(want.Children))
		}
	}
}

// RunWithHint acts like Run: the hint only narrows what is re-read, and a
// hint that no longer matches the disk is no excuse to act on stale facts.
func TestRunWithHintRereadsTheNode(t *testing.T) {
	root := t.TempDir()
	fleet(t, root)
	out := filepath.Join(t.TempDir(), "argv")
	e := testEngine(root, model.Thresholds{}, fleetConfig(out))
	hint, err := e.scan(e.opts.Scan)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.RunWithHint(context.Background(), Request{Action: model.ActionResume, Node: "dead"}, hint)
	if err != nil || res.Outcome != OutcomeDone {
		t.Fatalf("resume with a hint: %v %s %q", err, res.Outcome, res.Message)
	}
	// The hint still says p/c is mergeable; the disk now says merged.
	os.WriteFile(filepath.Join(root, "p/c/.merged"), []byte("{}\n"), 0o644)
	res, err = e.RunWithHint(context.Background(), Request{Action: model.ActionMerge, Node: "p/c"}, hint)
	if err != nil || !res.Refused || !strings.Contains(res.Message, "already merged") {
		t.Fatalf("merge with a stale hint: %v %s %q", err, res.Outcome, res.Message)
	}
	// A node the hint does not know is found by a full re-read.
	writeNode(t, root, nodeSpec{dir: "late", pid: testproc.Gone(t), started: 1, status: "running", age: 10 * time.Minute, cfa: "PLAN"})
	res, err = e.RunWithHint(context.Background(), Request{Action: model.ActionResume, Node: "late"}, hint)
	if err != nil || res.Outcome != OutcomeDone {
		t.Fatalf("resume of a node the hint lacks: %v %s %q", err, res.Outcome, res.Message)
	}
	// Both resumes run detached: each writes its line after RunWithHint
	// returned, and one still on its way would write into the temp dir
	// while it is being removed.
	if !waitFor(10*time.Second, func() bool { return len(dispatches(t, out)) == 2 }) {
		t.Errorf("the two resumes dispatched %d commands, want 2", len(dispatches(t, out)))
	}
}

// SPEC §4, §5: --readonly promises nothing is written; a dry run writes
// nothing, so it is still answered, recover's plan included.
func TestReadonlyStillAnswersDryRuns(t *testing.T) {
	root := t.TempDir()
	fleet(t, root)
	out := filepath.Join(t.TempDir(), "argv")
	e := New(EngineOptions{Scan: scanner.Options{Roots: []string{root}}, Config: fleetConfig(out), Readonly: true})
	before := treeHash(t, root)
	for _, req := range []Request{
		{Action: model.ActionKill, Node: "stuck"},
		{Action: model.ActionResume, Node: "dead"},
		{Action: model.ActionCompact, Node: "run"},
		{Action: model.ActionCompact, All: true},
		{Action: model.ActionMerge, Node: "p/c"},
	} {
		res, err := e.DryRun(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Refused || res.Outcome != OutcomeDryRun {
			t.Fatalf("%s --dry-run under --readonly: %s %q", req.Action, res.Outcome, res.Message)
		}
	}
	results, err := e.Recover(context.Background(), false, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Refused {
			t.Fatalf("recover's plan under --readonly: %s %s %q", r.NodeID, r.Outcome, r.Message)
		}
	}
	if treeHash(t, root) != before {
		t.Fatalf("a dry run under --readonly changed the tree")
	}
}

// SPEC §4, §5.5: a NODE outside every root acts in the directory that holds
// its session; a config inside that directory is as untrusted as one inside
// a root, and the action is refused.
func TestConfigInsideTheSessionHolderOfANodeOutsideTheRootsIsRefused(t *testing.T) {
	holder := t.TempDir()
	writeNode(t, holder, nodeSpec{dir: "sess", status: "completed", age: time.Minute})
	infra := writeNode(t, holder, nodeSpec{dir: "sess/team/1", pid: testproc.Gone(t), started: 1, status: "running", parent: "sess", age: 10 * time.Minute, cfa: "PLAN"})
	cfgPath := filepath.Join(holder, "config.toml")
	if err := os.WriteFile(cfgPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "argv")
	e := New(EngineOptions{Scan: scanner.Options{Roots: []string{t.TempDir()}}, Config: fleetConfig(out), ConfigPath: cfgPath})
	res, err := e.Run(context.Background(), Request{Action: model.ActionResume, Node: infra})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Refused || !strings.Contains(res.Message, "inside") || !strings.Contains(res.Message, cfgPath) {
		t.Fatalf("resume with a config inside the node's root: %s %q", res.Outcome, res.Message)
	}
	time.Sleep(100 * time.Millisecond)
	if d := dispatches(t, out); len(d) != 0 {
		t.Fatalf("dispatched %v", d)
	}
}

// SPEC §5.5: the engine never runs a config that lies inside any of its
// roots, whoever loaded it: with two roots, a config inside one does not
// act on a node of the other.
func TestConfigInsideAnotherRootIsRefused(t *testing.T) {
	withConfig, withNode := t.TempDir(), t.TempDir()
	writeNode(t, withNode, nodeSpec{dir: "sess", pid: testproc.Gone(t), started: 1, status: "running", age: 10 * time.Minute, cfa: "PLAN"})
	cfgPath := filepath.Join(withConfig, "config.toml")
	if err := os.WriteFile(cfgPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "argv")
	e := New(EngineOptions{Scan: scanner.Options{Roots: []string{withConfig, withNode}}, Config: fleetConfig(out), ConfigPath: cfgPath})
	res, err := e.Run(context.Background(), Request{Action: model.ActionResume, Node: filepath.Join(withNode, "sess")})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Refused || !strings.Contains(res.Message, "inside") || !strings.Contains(res.Message, withConfig) {
		t.Fatalf("resume with a config inside another root: %s %q", res.Outcome, res.Message)
	}
	time.Sleep(100 * time.Millisecond)
	if d := dispatches(t, out); len(d) != 0 {
		t.Fatalf("dispatched %v", d)
	}
}
