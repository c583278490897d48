package teaparty

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/protocol"
)

// The job's lead is the native reader's node when the job has its
// .heartbeat: the bus row makes no second node, and its workers name the
// .heartbeat as their parent, so the two readers' nodes join in one tree.
func TestJobLeadWithHeartbeatIsTheNativeNodeAndItsWorkersAttachToIt(t *testing.T) {
	tr := newTree(t)
	db := newBus(t, tr.jobBus, busDDL)
	insertConv(t, db,
		conv{id: jobID, typ: typeJob, created: 1746638100.25, agent: "webapp-lead"},
		conv{id: workerID, typ: typeDispatch, created: createdAt, parent: jobID},
	)
	hbPath := copyFixture(t, "job-heartbeat.json", tr.job, protocol.HeartbeatFile)
	nodes, problems := read(t, tr.home)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if _, ok := nodes[hbPath]; ok {
		t.Errorf("the job row made a node keyed %s; the native reader owns it", hbPath)
	}
	w := nodes[tr.jobBus+"#"+workerID]
	if w == nil {
		t.Fatalf("no worker node among %v", keys(nodes))
	}
	if w.Heartbeat.ParentHeartbeat != hbPath {
		t.Errorf("worker's parent = %q, want the job's heartbeat %q", w.Heartbeat.ParentHeartbeat, hbPath)
	}
	if len(nodes) != 1 {
		t.Errorf("nodes = %v, want the worker alone", keys(nodes))
	}
}

// A job without .heartbeat (its lead not started yet) is read from its row,
// under the key the native lead will have, with its CfA state and its
// phase streams' newest write as its activity.
func TestJobLeadWithoutHeartbeatIsItsRowUnderTheHeartbeatKey(t *testing.T) {
	tr := newTree(t)
	db := newBus(t, tr.jobBus, busDDL)
	insertConv(t, db, conv{id: jobID, typ: typeJob, created: 1746638100.25, agent: "webapp-lead"})
	copyFixture(t, "cfa-state.json", tr.job, protocol.CfaFile)
	stream := copyFixture(t, "stream.jsonl", tr.job, ".plan-stream.jsonl")
	at := time.Unix(1746638400, 0)
	if err := os.Chtimes(stream, at, at); err != nil {
		t.Fatal(err)
	}
	nodes, _ := read(t, tr.home)
	n := nodes[filepath.Join(tr.job, protocol.HeartbeatFile)]
	if n == nil {
		t.Fatalf("no job node among %v", keys(nodes))
	}
	if n.InfraDir != tr.job || n.Cfa == nil || n.Cfa.State != "PLAN" || !n.ActivityMtime.Equal(at) || !n.BeatMtime.Equal(at) {
		t.Errorf("infra %q, cfa %+v, activity %v, beat %v", n.InfraDir, n.Cfa, n.ActivityMtime, n.BeatMtime)
	}
	if n.Heartbeat.ParentHeartbeat != "" || !n.Heartbeat.SessionLead() {
		t.Errorf("a job lead is a session lead; parent %q", n.Heartbeat.ParentHeartbeat)
	}
}

// A child whose parent is absent from its bus names the key the parent
// would have there: no node has it, so the scanner finds it orphaned.
func TestParentAbsentFromTheBusIsNamedByItsKey(t *testing.T) {
	tr := newTree(t)
	insertConv(t, newBus(t, tr.jobBus, busDDL),
		conv{id: "dispatch:deadbeef0001", typ: typeDispatch, created: 1746630000, parent: "dispatch:000000000000"})
	nodes, _ := read(t, tr.home)
	n := nodes[tr.jobBus+"#dispatch:deadbeef0001"]
	if n == nil || n.Heartbeat.ParentHeartbeat != tr.jobBus+"#dispatch:000000000000" {
		t.Fatalf("node %+v", n)
	}
}

// The chat tier keeps its conversations in the agent's own bus; a worker's
// pid stamped in the management bus is read there too, and a management row
// that only carries that stamp is no node.
func TestChatTierAgentBusIsRead(t *testing.T) {
	tr := newTree(t)
	agentBus := filepath.Join(tr.home, managementDir, agentsDir, "office-manager", "office-manager"+agentBusSuffix)
	agentDB := newBus(t, agentBus, busDDL)
	insertConv(t, agentDB,
		conv{id: "om", typ: "office_manager", created: 1746630000, agent: "office-manager"},
		conv{id: "dispatch:c0ffee000001", typ: typeDispatch, created: 1746630100, parent: "om", agent: "researcher"},
	)
	insertMessage(t, agentDB, "m1", "om", "human", "What is left on the dark mode job?", 1746630400)
	insertMessage(t, agentDB, "m2", "om", "office-manager", "Two workers are running.", 1746630500)
	// The listener's bookkeeping bus beside it is not a tree store.
	insertConv(t, newBus(t, filepath.Join(filepath.Dir(agentBus), busFile), busDDL),
		conv{id: "om", typ: "office_manager", created: 1746630000})
	insertConv(t, newBus(t, tr.management, busDDL),
		conv{id: "dispatch:c0ffee000001", typ: typeDispatch, created: 1746630100, pid: 4242, pidStarted: 1746630101})
	sessionDir := filepath.Join(tr.home, managementDir, sessionsDir, "c0ffee000001")
	copyFixture(t, "stream.jsonl", sessionDir, streamFile)

	nodes, problems := read(t, tr.home)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if len(nodes) != 2 {
		t.Fatalf("nodes = %v, want om and its worker", keys(nodes))
	}
	w := nodes[agentBus+"#dispatch:c0ffee000001"]
	if w == nil || w.Heartbeat.ParentHeartbeat != agentBus+"#om" || w.Heartbeat.PID != 4242 || w.InfraDir != sessionDir {
		t.Fatalf("worker %+v", w)
	}
	om := nodes[agentBus+"#om"]
	if om == nil || om.ID != "management/agents/office-manager/om" {
		t.Fatalf("om %+v", om)
	}
	// A chat conversation lives between its turns, with no process then;
	// its last message is its newest sign of life.
	if om.Heartbeat.Status != "running" || !om.Traits.NoProcessExpected || !om.BeatMtime.Equal(time.Unix(1746630500, 0)) {
		t.Errorf("om: status %q, traits %+v, beat %v", om.Heartbeat.Status, om.Traits, om.BeatMtime)
	}
}

func TestDetect(t *testing.T) {
	tr := newTree(t)
	newBus(t, tr.jobBus, busDDL)
	bare := filepath.Join(t.TempDir(), "elsewhere")
	newBus(t, filepath.Join(bare, "job-1--x", busFile), busDDL)
	home := filepath.Join(t.TempDir(), "home")
	newBus(t, filepath.Join(home, managementDir, busFile), busDDL)
	tests := []struct {
		name, path string
		want       bool
	}{
		{name: "a .teaparty dir", path: tr.home, want: true},
		{name: "a .teaparty/jobs dir", path: tr.jobs, want: true},
		{name: "a dir of job-* buses", path: bare, want: true},
		{name: "a TeaParty home holding management/", path: home, want: true},
		{name: "a job dir is not a store root", path: tr.job, want: false},
		{name: "an empty dir", path: t.TempDir(), want: false},
		{name: "a file", path: tr.jobBus, want: false},
		{name: "a missing path", path: filepath.Join(t.TempDir(), "nope"), want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := New().Detect(tc.path); got != tc.want {
				t.Errorf("Detect(%s) = %v, want %v", tc.path, got, tc.want)
			}
		})
	}
}

func TestWatchPathsNameEveryBusItsWALAndTheJobDirs(t *testing.T) {
	tr := newTree(t)
	newBus(t, tr.jobBus, busDDL)
	newBus(t, tr.management, busDDL)
	got := New().WatchPaths(tr.home)
	want := []string{tr.jobs, tr.job, tr.jobBus, tr.jobBus + "-wal", filepath.Dir(tr.management), tr.management, tr.management + "-wal"}
	sort.Strings(got)
	sort.Strings(want)
	if len(got) != len(want) {
		t.Fatalf("watch %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("watch %v, want %v", got, want)
		}
	}
}

// TeaParty's own figures: a beat every 30 s, stale at 120 s, killed at
// 300 s, the same process within 2 s.
func TestThresholdsAreTeaPartys(t *testing.T) {
	th := New().Thresholds()
	if th.Beat != 30*time.Second || th.Stale != 120*time.Second || th.KillAfter != 300*time.Second || th.StartTolerance != 2*time.Second {
		t.Errorf("thresholds %+v", th)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// A job at a CfA gate with its native lead: the lead is the native node, so
// the question it waits on is a node of its own under it, blocked, with no
// process expected: the gate is a human's to answer, never lost.
func TestJobGateUnderANativeLeadIsABlockedNodeUnderIt(t *testing.T) {
	tr := newTree(t)
	db := newBus(t, tr.jobBus, busDDL)
	insertConv(t, db, conv{id: jobID, typ: typeJob, created: 1746638100.25, awaiting: 1, agent: "webapp-lead"})
	insertMessage(t, db, "m1", jobID, "webapp-lead", "Approve the plan? (PLAN.md)", 1746638550)
	hbPath := copyFixture(t, "job-heartbeat.json", tr.job, protocol.HeartbeatFile)
	nodes, problems := read(t, tr.home)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if len(nodes) != 1 {
		t.Fatalf("nodes %v, want the gate alone", keys(nodes))
	}
	g := nodes[tr.jobBus+"#"+jobID]
	if g == nil {
		t.Fatalf("no gate node among %v", keys(nodes))
	}
	if g.Heartbeat.ParentHeartbeat != hbPath || g.Blocked == nil || g.Blocked.Question != "Approve the plan? (PLAN.md)" ||
		!g.Traits.NoProcessExpected || g.Traits.PIDPerTurn || g.Heartbeat.Status != "running" || field(g, "gate") == "" {
		t.Errorf("gate: parent %q, blocked %+v, traits %+v, status %q, fields %v", g.Heartbeat.ParentHeartbeat, g.Blocked, g.Traits, g.Heartbeat.Status, g.SourceFields())
	}
}

// A store whose path holds what a URI would parse ('?', '#', '%', a space)
// is read at that path.
func TestStoreUnderAPathWithURICharactersIsRead(t *testing.T) {
	home := filepath.Join(t.TempDir(), "web app #2?%41", homeDir)
	bus := filepath.Join(home, jobsDir, jobName, busFile)
	insertConv(t, newBus(t, bus, busDDL), conv{id: workerID, typ: typeDispatch, created: createdAt})
	nodes, problems := read(t, home)
	if len(problems) > 0 || nodes[bus+"#"+workerID] == nil {
		t.Fatalf("nodes %v, problems %v", keys(nodes), problems)
	}
}

// A worker's session dir is found with its stream in one stat when the
// worker has a stream, and by the directory itself when it has none; a
// removed dir, or a file where the dir should be, is no session dir.
func TestSessionAtIsTheDirAndItsStreamsMtime(t *testing.T) {
	base := t.TempDir()
	streamed := time.Unix(1746638590, 0)
	withStream := filepath.Join(base, "with-stream")
	if err := os.MkdirAll(withStream, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(withStream, streamFile)
	if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, streamed, streamed); err != nil {
		t.Fatal(err)
	}
	withoutStream := filepath.Join(base, "without-stream")
	if err := os.MkdirAll(withoutStream, 0o755); err != nil {
		t.Fatal(err)
	}
	aFile := filepath.Join(base, "a-file")
	if err := os.WriteFile(aFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir, wantDir string
		wantStreamed       time.Time
	}{
		{"a dir with a stream", withStream, withStream, streamed},
		{"a dir without a stream", withoutStream, withoutStream, time.Time{}},
		{"a removed dir", filepath.Join(base, "removed"), "", time.Time{}},
		{"a file where the dir should be", aFile, "", time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, got := sessionAt(tt.dir)
			if dir != tt.wantDir || !got.Equal(tt.wantStreamed) {
				t.Fatalf("sessionAt = %q, %v; want %q, %v", dir, got, tt.wantDir, tt.wantStreamed)
			}
		})
	}
}

// SPEC §10: a store is watched through the paths its source names, asked
// again after every read. A job dir read before TeaParty made its bus (it
// makes the dir, then opens the database) must be named, as must the
// management dir and an agent's dir before their buses: else the bus's
// creation lands in an unwatched dir and is never read.
func TestWatchPathsNameTheDirsWhereABusWillBeMade(t *testing.T) {
	tr := newTree(t)
	agent := filepath.Join(tr.home, managementDir, agentsDir, "webapp-lead")
	for _, dir := range []string{tr.job, agent} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got := New().WatchPaths(tr.home)
	for _, want := range []string{tr.jobs, tr.job, filepath.Dir(tr.management), filepath.Dir(agent), agent} {
		if !slices.Contains(got, want) {
			t.Errorf("watch %v: %s is missing", got, want)
		}
	}
}

// A worker without a worktree has its session dir in the first of the
// home's dirs (by name) whose sessions/ lists it as a directory: a file of
// its name is none, and a link to no directory gives way to the next.
func TestWorkerSessionDirIsTheFirstScopesDirectory(t *testing.T) {
	const sid = "c0ffee"
	tests := []struct {
		name  string
		setup func(t *testing.T, home string)
		want  string // relative to home, "" for none
	}{
		{"none", func(t *testing.T, home string) {}, ""},
		{"the one scope that has it", func(t *testing.T, home string) {
			mkdirs(t, filepath.Join(home, "a", sessionsDir), filepath.Join(home, "b", sessionsDir, sid))
		}, "b/sessions/" + sid},
		{"the first of two", func(t *testing.T, home string) {
			mkdirs(t, filepath.Join(home, "a", sessionsDir, sid), filepath.Join(home, "b", sessionsDir, sid))
		}, "a/sessions/" + sid},
		{"a file of its name is no session dir", func(t *testing.T, home string) {
			mkdirs(t, filepath.Join(home, "a", sessionsDir), filepath.Join(home, "b", sessionsDir, sid))
			if err := os.WriteFile(filepath.Join(home, "a", sessionsDir, sid), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "b/sessions/" + sid},
		{"a link to no directory gives way to the next", func(t *testing.T, home string) {
			mkdirs(t, filepath.Join(home, "a", sessionsDir), filepath.Join(home, "b", sessionsDir, sid))
			if err := os.Symlink(filepath.Join(home, "gone"), filepath.Join(home, "a", sessionsDir, sid)); err != nil {
				t.Fatal(err)
			}
		}, "b/sessions/" + sid},
		{"a link to a directory is one", func(t *testing.T, home string) {
			mkdirs(t, filepath.Join(home, "a", sessionsDir), filepath.Join(home, "elsewhere"), filepath.Join(home, "b", sessionsDir, sid))
			if err := os.Symlink(filepath.Join(home, "elsewhere"), filepath.Join(home, "a", sessionsDir, sid)); err != nil {
				t.Fatal(err)
			}
		}, "a/sessions/" + sid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTree(t)
			mkdirs(t, tr.home)
			tt.setup(t, tr.home)
			l, ok := locate(tr.home)
			if !ok {
				t.Fatal("no layout")
			}
			dir, _ := sessionDir(l.homeState(nil), &row{id: typeDispatch + ":" + sid})
			want := ""
			if tt.want != "" {
				want = filepath.Join(tr.home, tt.want)
			}
			if dir != want {
				t.Errorf("session dir %q, want %q", dir, want)
			}
		})
	}
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}
