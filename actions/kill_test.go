package actions

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/model"
)

// patient thresholds keep a reused or unverifiable pid `running` (its beat
// is fresh), so that kill's own re-verification is what is tested.
func patient() model.Thresholds {
	th := model.DefaultThresholds()
	th.ExitGrace = time.Hour
	th.Stale = 2 * time.Hour
	th.KillAfter = 3 * time.Hour
	return th
}

// SPEC §5.1: kill ends a verified process and its descendants.
func TestKillEndsAVerifiedProcessAndItsDescendants(t *testing.T) {
	root := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "children")
	lead := startHelper(t, "spawn", pidFile, "2")
	var kids []int
	if !waitFor(5*time.Second, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil || len(b) == 0 {
			return false
		}
		kids = nil
		for _, f := range strings.Fields(string(b)) {
			p, _ := strconv.Atoi(f)
			kids = append(kids, p)
		}
		return len(kids) == 2
	}) {
		t.Fatal("the helper did not spawn its children")
	}
	pid := lead.Process.Pid
	writeNode(t, root, nodeSpec{dir: "s", pid: pid, started: testproc.Started(t, pid), status: "running"})
	hbBefore, _ := os.ReadFile(filepath.Join(root, "s", ".heartbeat"))

	res, err := testEngine(root, model.Thresholds{}, Config{}).Run(context.Background(), Request{Action: model.ActionKill, Node: "s", Grace: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeDone || res.Refused {
		t.Fatalf("kill: %s: %s", res.Outcome, res.Message)
	}
	for _, p := range append([]int{pid}, kids...) {
		if !waitFor(2*time.Second, func() bool { return !processAlive(p) }) {
			t.Fatalf("pid %d is still alive after kill", p)
		}
	}
	hbAfter, _ := os.ReadFile(filepath.Join(root, "s", ".heartbeat"))
	if string(hbAfter) != string(hbBefore) {
		t.Fatalf("kill changed the heartbeat")
	}
	js := journalFor(t, root, "s")
	if len(js) != 1 || js[0].Outcome != OutcomeDone || len(js[0].Signals) < 3 {
		t.Fatalf("journal for s: %+v", js)
	}
}

// SPEC §5.1: survivors of SIGTERM get SIGKILL after the grace.
func TestKillEscalatesToSigkillAfterTheGrace(t *testing.T) {
	root := t.TempDir()
	p := startHelper(t, "sleep-ignore-term")
	time.Sleep(200 * time.Millisecond) // let it install its handler
	pid := p.Process.Pid
	writeNode(t, root, nodeSpec{dir: "s", pid: pid, started: testproc.Started(t, pid), status: "running"})
	start := time.Now()
	res, err := testEngine(root, model.Thresholds{}, Config{}).Run(context.Background(), Request{Action: model.ActionKill, Node: "s", Grace: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeDone || !strings.Contains(res.Message, "SIGKILL") {
		t.Fatalf("kill: %s: %s", res.Outcome, res.Message)
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Fatalf("SIGKILL came before the grace ended")
	}
	if !waitFor(2*time.Second, func() bool { return !processAlive(pid) }) {
		t.Fatalf("pid %d survived", pid)
	}
}

// SPEC §5.1, §9: kill refuses what it must never signal, and leaves it alive.
func TestKillRefusesUnsafeTargets(t *testing.T) {
	self := os.Getpid()
	tests := []struct {
		name   string
		spec   func(t *testing.T) nodeSpec
		want   string
		victim func(nodeSpec) int // a process that must still be alive
	}{
		{
			name: "reused pid: a live unrelated process with another create time",
			spec: func(t *testing.T) nodeSpec {
				p := startHelper(t, "sleep")
				// Seconds earlier, not hours: a started before the host's
				// boot cannot be compared at all (unverified, not reused).
				return nodeSpec{dir: "s", pid: p.Process.Pid, started: testproc.Started(t, p.Process.Pid) - 20, status: "running"}
			},
			want:   "now belongs to another process",
			victim: func(s nodeSpec) int { return s.pid },
		},
		{
			name:   "pid 1",
			spec:   func(t *testing.T) nodeSpec { return nodeSpec{dir: "s", pid: 1, started: 1, status: "running"} },
			want:   "pid 1 of node s is never signalled",
			victim: func(nodeSpec) int { return 1 },
		},
		{
			name: "dispatchtop itself",
			spec: func(t *testing.T) nodeSpec {
				return nodeSpec{dir: "s", pid: self, started: testproc.Started(t, self), status: "running"}
			},
			want:   "dispatchtop itself or one of its ancestors",
			victim: func(nodeSpec) int { return self },
		},
		{
			name: "an ancestor of dispatchtop",
			spec: func(t *testing.T) nodeSpec {
				pp := os.Getppid()
				return nodeSpec{dir: "s", pid: pp, started: testproc.Started(t, pp), status: "running"}
			},
			want:   "dispatchtop itself or one of its ancestors",
			victim: func(nodeSpec) int { return os.Getppid() },
		},
		{
			name: "a dead node",
			spec: func(t *testing.T) nodeSpec {
				return nodeSpec{dir: "s", pid: testproc.Gone(t), started: float64(time.Now().Unix() - 600), status: "running", age: 3 * time.Hour}
			},
			want: "not running",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			spec := tc.spec(t)
			writeNode(t, root, spec)
			before := treeHash(t, filepath.Join(root, "s"))
			res, err := testEngine(root, patient(), Config{}).Run(context.Background(), Request{Action: model.ActionKill, Node: "s", Grace: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Refused || !strings.Contains(res.Message, tc.want) {
				t.Fatalf("got refused=%v %q, want a refusal saying %q", res.Refused, res.Message, tc.want)
			}
			if tc.victim != nil {
				time.Sleep(50 * time.Millisecond)
				if v := tc.victim(spec); !processAlive(v) {
					t.Fatalf("pid %d was signalled", v)
				}
			}
			if treeHash(t, filepath.Join(root, "s")) != before {
				t.Fatalf("a refused kill changed the node's files")
			}
			js := journalFor(t, root, "s")
			if len(js) != 1 || js[0].Outcome != OutcomeRefused || js[0].Message != res.Message {
				t.Fatalf("journal for the refusal: %+v", js)
			}
		})
	}
}

// SPEC §5.1: --tree kills every running dispatch node below, bottom-up.
func TestKillTreeGoesBottomUp(t *testing.T) {
	root := t.TempDir()
	pids := map[string]int{}
	for _, n := range []struct{ dir, parent string }{{"s", ""}, {"s/a", "s"}, {"s/a/b", "s/a"}, {"s/c", "s"}} {
		p := startHelper(t, "sleep")
		pids[n.dir] = p.Process.Pid
		writeNode(t, root, nodeSpec{dir: n.dir, pid: p.Process.Pid, started: testproc.Started(t, p.Process.Pid), status: "running", parent: n.parent})
	}
	e := testEngine(root, model.Thresholds{}, Config{})
	dry, err := e.DryRun(context.Background(), Request{Action: model.ActionKill, Node: "s", Tree: true})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, line := range dry.Plan {
		if i := strings.Index(line, "(node "); i >= 0 {
			order = append(order, strings.Fields(line[i+len("(node "):])[0])
		}
	}
	want := []string{"s/a/b,", "s/a,", "s/c,", "s,"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Fatalf("dry-run order %v, want %v (plan %q)", order, want, dry.Plan)
	}
	for dir, pid := range pids {
		if !processAlive(pid) {
			t.Fatalf("dry run killed %s", dir)
		}
	}
	res, err := e.Run(context.Background(), Request{Action: model.ActionKill, Node: "s", Tree: true, Grace: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeDone {
		t.Fatalf("kill --tree: %s: %s", res.Outcome, res.Message)
	}
	for dir, pid := range pids {
		if !waitFor(2*time.Second, func() bool { return !processAlive(pid) }) {
			t.Fatalf("%s (pid %d) survived kill --tree", dir, pid)
		}
	}
	var journaled []string
	for _, j := range journalFor(t, root, "") {
		journaled = append(journaled, j.Node)
	}
	if strings.Join(journaled, " ") != "s/a/b s/a s/c s" {
		t.Fatalf("journal order %v, want bottom-up", journaled)
	}
}

// SPEC §5.1 (--tree): a lead that is no longer running is skipped, and the
// running nodes below it (its orphans) are still ended.
func TestKillTreeOfADeadLeadEndsItsRunningOrphans(t *testing.T) {
	root := t.TempDir()
	writeNode(t, root, nodeSpec{dir: "s", pid: testproc.Gone(t), started: 1, status: "running", age: 10 * time.Minute})
	orphan := startHelper(t, "sleep")
	writeNode(t, root, nodeSpec{dir: "s/a", pid: orphan.Process.Pid, started: testproc.Started(t, orphan.Process.Pid), status: "running", parent: "s"})
	e := testEngine(root, model.Thresholds{}, Config{})
	res, err := e.Run(context.Background(), Request{Action: model.ActionKill, Node: "s", Tree: true, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeDone || res.Refused {
		t.Fatalf("kill --tree of a dead lead: %s %q", res.Outcome, res.Message)
	}
	if !waitFor(2*time.Second, func() bool { return !processAlive(orphan.Process.Pid) }) {
		t.Fatal("the orphan survived")
	}
	// Without --tree the dead lead is refused.
	res, _ = e.Run(context.Background(), Request{Action: model.ActionKill, Node: "s"})
	if !res.Refused {
		t.Fatalf("kill of a dead lead without --tree: %s %q", res.Outcome, res.Message)
	}
}

// SPEC §5: a dry run says exactly what would be done. kill --tree --dry-run
// counts and lists only the nodes that would be killed, lists the ones that
// would be refused, and is itself a refusal when the named node would be.
func TestKillTreeDryRunCountsOnlyWhatWouldBeKilled(t *testing.T) {
	tests := []struct {
		name        string
		reused      string // the node whose pid now belongs to another process
		wantRefused bool
		wantMsg     []string
	}{
		{name: "a refused descendant is listed, not counted", reused: "s/a",
			wantMsg: []string{"would kill 1 node(s): s;", "would refuse 1: s/a: pid"}},
		{name: "a refused named node refuses the dry run", reused: "s", wantRefused: true,
			wantMsg: []string{"now belongs to another process"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, n := range []struct{ dir, parent string }{{"s", ""}, {"s/a", "s"}} {
				p := startHelper(t, "sleep")
				started := testproc.Started(t, p.Process.Pid)
				if n.dir == tc.reused {
					started -= 20 // after the boot, outside the tolerance
				}
				writeNode(t, root, nodeSpec{dir: n.dir, pid: p.Process.Pid, started: started, status: "running", parent: n.parent})
			}
			res, err := testEngine(root, patient(), Config{}).DryRun(context.Background(), Request{Action: model.ActionKill, Node: "s", Tree: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Refused != tc.wantRefused || (res.Outcome == OutcomeDryRun) == tc.wantRefused {
				t.Fatalf("refused=%v %s %q, want refused=%v", res.Refused, res.Outcome, res.Message, tc.wantRefused)
			}
			for _, want := range tc.wantMsg {
				if !strings.Contains(res.Message, want) {
					t.Fatalf("message %q, want it to say %q", res.Message, want)
				}
			}
			if !strings.Contains(strings.Join(res.Plan, "\n"), "refuse "+tc.reused+":") {
				t.Fatalf("plan %q does not list the refusal", res.Plan)
			}
		})
	}
}

// SPEC §3, §5.1: a heartbeat whose started is not a Unix time in seconds
// (1.7e12 is milliseconds) cannot verify its pid. Comparing it with the
// create time once overflowed into "the same process", and kill, or recover
// --apply --kill-stalled, ended an innocent process that merely had the
// pid. Both now refuse, saying why, and the process lives.
func TestKillRefusesAPidWhoseStartedIsNotUnixSeconds(t *testing.T) {
	for _, started := range []float64{1.7e12, 1e18} {
		for _, tc := range []struct {
			name     string
			th       model.Thresholds
			age      time.Duration
			namesWhy bool // the refusal names the value (recover plans no kill at all)
			run      func(e *Engine) (string, bool)
		}{
			{name: "kill, fresh beat", th: patient(), namesWhy: true, run: func(e *Engine) (string, bool) {
				res, _ := e.Run(context.Background(), Request{Action: model.ActionKill, Node: "s", Grace: time.Second})
				return res.Message, res.Refused
			}},
			{name: "kill, beat past kill-after", age: 6 * time.Minute, namesWhy: true, run: func(e *Engine) (string, bool) {
				res, _ := e.Run(context.Background(), Request{Action: model.ActionKill, Node: "s", Grace: time.Second})
				return res.Message, res.Refused
			}},
			{name: "recover --apply --kill-stalled, beat past kill-after", age: 6 * time.Minute, run: func(e *Engine) (string, bool) {
				results, err := e.Recover(context.Background(), true, true)
				if err != nil {
					return err.Error(), false
				}
				for _, r := range results {
					if r.Action == model.ActionKill {
						return r.Message, r.Refused
					}
				}
				return "no kill planned", true
			}},
		} {
			t.Run(fmt.Sprintf("started %g, %s", started, tc.name), func(t *testing.T) {
				root := t.TempDir()
				p := startHelper(t, "sleep")
				writeNode(t, root, nodeSpec{dir: "s", pid: p.Process.Pid, started: started, status: "running", age: tc.age})
				e := testEngine(root, tc.th, Config{})
				// The beat is after the boot (an hour ago), whatever the host's.
				e.opts.Scan.Probe = testproc.BootedAt(time.Now().Add(-time.Hour))
				msg, refused := tc.run(e)
				if !refused {
					t.Fatalf("not refused: %q", msg)
				}
				if tc.namesWhy && !strings.Contains(msg, strconv.FormatFloat(started, 'g', -1, 64)) {
					t.Errorf("refusal %q does not name started %g", msg, started)
				}
				time.Sleep(50 * time.Millisecond)
				if !processAlive(p.Process.Pid) {
					t.Fatalf("pid %d was signalled", p.Process.Pid)
				}
			})
		}
	}
}

// kill re-verifies each victim before a signal by its create time; a
// recorded create time far from the process's own (past what a Duration
// holds) is another process, never the same one.
func TestKillNeverTakesAFarOffCreateTimeForTheSameProcess(t *testing.T) {
	p := startHelper(t, "sleep")
	pid := p.Process.Pid
	created := time.Unix(0, 0).Add(time.Duration(testproc.Started(t, pid) * float64(time.Second)))
	for _, tc := range []struct {
		name    string
		created time.Time
		want    bool
	}{
		{"its own create time", created, true},
		{"a create time in milliseconds read as seconds", time.Unix(int64(testproc.Started(t, pid)*1000), 0), false},
		{"the far past", time.Unix(-1e12, 0), false},
		{"an hour off", created.Add(time.Hour), false},
	} {
		if got := alive(victim{pid: pid, created: tc.created}); got != tc.want {
			t.Errorf("%s: alive = %v, want %v", tc.name, got, tc.want)
		}
	}
}
