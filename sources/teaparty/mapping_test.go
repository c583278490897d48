package teaparty

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
)

const (
	jobID     = "job:webapp:20260507-101500"
	workerID  = "dispatch:3f9c2a7b1d04"
	nestedID  = "dispatch:a81e44c09b7f"
	createdAt = 1746638160.80
)

var now = time.Unix(1746638600, 0)

// read reads the tree's home and returns the nodes by key.
func read(t *testing.T, root string) (map[string]*model.Node, []model.Problem) {
	t.Helper()
	facts := New().Read(root, now)
	nodes := map[string]*model.Node{}
	for _, n := range facts.Nodes {
		if _, dup := nodes[n.HeartbeatPath]; dup {
			t.Errorf("two nodes keyed %s", n.HeartbeatPath)
		}
		nodes[n.HeartbeatPath] = n
	}
	return nodes, facts.Problems
}

func field(n *model.Node, name string) string {
	for _, f := range n.SourceFields() {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// TestMapping holds one case per row of the mapping (docs/sources.md,
// TeaParty): the rows a job's bus holds, the side files, and what the
// node of one row must say.
func TestMapping(t *testing.T) {
	type want struct {
		status       string
		pid          int
		started      float64
		parent       string // "job": the job's .heartbeat; "worker": the worker's row; "" a session
		question     string // non-empty: Blocked with this question
		noProcess    bool
		pidPerTurn   bool
		mergesItself bool
		beat         time.Time // zero: created_at
		field        [2]string // a source field that must hold a value
	}
	worker := func(state string, pid int, pidStarted float64) conv {
		return conv{id: workerID, typ: typeDispatch, state: state, created: createdAt, agent: "coding-lead",
			parent: jobID, request: "ctx-7a1", slug: "webapp", pid: pid, pidStarted: pidStarted}
	}
	job := conv{id: jobID, typ: typeJob, created: 1746638100.25, agent: "webapp-lead", slug: "webapp"}
	streamTime := time.Unix(1746638590, 0)
	tests := []struct {
		name   string
		rows   []conv
		stamps []conv // rows of the management bus
		setup  func(t *testing.T, tr tree)
		node   string // the id whose node is checked
		want   want
	}{
		{name: "created active with pid 0 is starting", rows: []conv{job, worker(stateActive, 0, 0)}, node: workerID,
			want: want{status: "starting", parent: "job", pidPerTurn: true, mergesItself: true}},
		{name: "active with a pid is running by that pid and its start", rows: []conv{job, worker(stateActive, 48213, 1746638161.02)}, node: workerID,
			want: want{status: "running", pid: 48213, started: 1746638161.02, parent: "job", pidPerTurn: true, mergesItself: true}},
		{name: "paused is paused and expects no process", rows: []conv{job, worker(statePaused, 48213, 1746638161.02)}, node: workerID,
			want: want{status: "paused", pid: 48213, started: 1746638161.02, parent: "job", noProcess: true, pidPerTurn: true, mergesItself: true}},
		{name: "closed is completed", rows: []conv{job, worker(stateClosed, 48102, 1746638171)}, node: workerID,
			want: want{status: "completed", pid: 48102, started: 1746638171, parent: "job", pidPerTurn: true, mergesItself: true}},
		{name: "withdrawn is withdrawn", rows: []conv{job, worker(stateWithdrawn, 0, 0)}, node: workerID,
			want: want{status: "withdrawn", parent: "job", pidPerTurn: true, mergesItself: true}},
		{name: "a pid recorded in the management bus is read where it is written",
			rows:   []conv{job, worker(stateActive, 0, 0)},
			stamps: []conv{{id: workerID, typ: typeDispatch, created: createdAt, pid: 777, pidStarted: 1746638500.5}},
			node:   workerID,
			want: want{status: "running", pid: 777, started: 1746638500.5, parent: "job", pidPerTurn: true, mergesItself: true,
				field: [2]string{"pid_recorded_in", "management"}}},
		{name: "the worker's stream mtime is its beat", rows: []conv{job}, node: workerID,
			setup: func(t *testing.T, tr tree) {
				dir := workerDir(t, tr.job, "3f9c2a7b1d04")
				w := worker(stateActive, 0, 0)
				w.worktree = filepath.Join(dir, "worktree")
				insertConv(t, newBus(t, tr.jobBus, nil), w)
				p := copyFixture(t, "stream.jsonl", dir, streamFile)
				copyFixture(t, "metadata-launching.json", dir, metadataFile)
				if err := os.Chtimes(p, streamTime, streamTime); err != nil {
					t.Fatal(err)
				}
			},
			want: want{status: "starting", parent: "job", pidPerTurn: true, mergesItself: true, beat: streamTime,
				field: [2]string{"phase", "launching"}}},
		{name: "a worker awaiting its children runs no process meanwhile", rows: []conv{job}, node: workerID,
			setup: func(t *testing.T, tr tree) {
				dir := workerDir(t, tr.job, "3f9c2a7b1d04")
				w := worker(stateActive, 0, 0)
				w.worktree = filepath.Join(dir, "worktree")
				insertConv(t, newBus(t, tr.jobBus, nil), w)
				copyFixture(t, "metadata-awaiting.json", dir, metadataFile)
			},
			want: want{status: "running", parent: "job", noProcess: true, pidPerTurn: true, mergesItself: true,
				field: [2]string{"phase", "awaiting"}}},
		{name: "a worker whose phase is complete is completed while its row waits to be closed", rows: []conv{job}, node: workerID,
			setup: func(t *testing.T, tr tree) {
				dir := workerDir(t, tr.job, "3f9c2a7b1d04")
				w := worker(stateActive, 0, 0)
				w.worktree = filepath.Join(dir, "worktree")
				insertConv(t, newBus(t, tr.jobBus, nil), w)
				copyFixture(t, "metadata-complete.json", dir, metadataFile)
			},
			want: want{status: "completed", parent: "job", pidPerTurn: true, mergesItself: true, field: [2]string{"phase", "complete"}}},
		{name: "a live row of a project paused by Pause All is paused", rows: []conv{job, worker(stateActive, 48213, 1746638161.02)}, node: workerID,
			setup: func(t *testing.T, tr tree) {
				if err := os.WriteFile(filepath.Join(tr.home, pausedFile), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want: want{status: "paused", pid: 48213, started: 1746638161.02, parent: "job", noProcess: true, pidPerTurn: true, mergesItself: true,
				field: [2]string{"paused_by", "project"}}},
		{name: "a nested worker's parent is its dispatcher's row",
			rows: []conv{job, worker(stateActive, 0, 0),
				{id: nestedID, typ: typeDispatch, created: createdAt + 240, agent: "coding-agent", parent: workerID, slug: "webapp"}},
			node: nestedID,
			want: want{status: "starting", parent: "worker", pidPerTurn: true, mergesItself: true, beat: epochSeconds(createdAt + 240)}},
		{name: "awaiting input is blocked with the last message not from a human",
			rows: []conv{{id: jobID, typ: typeJob, created: 1746638100.25, awaiting: 1, agent: "webapp-lead", slug: "webapp"}},
			setup: func(t *testing.T, tr tree) {
				db := newBus(t, tr.jobBus, nil)
				insertMessage(t, db, "m1", jobID, "webapp-lead", "Approve the plan? (PLAN.md)", 1746638550)
				insertMessage(t, db, "m2", jobID, "human", "looking", 1746638560)
			},
			node: jobID,
			want: want{status: "starting", question: "Approve the plan? (PLAN.md)", pidPerTurn: true, mergesItself: true,
				beat: time.Unix(1746638550, 0), field: [2]string{"awaiting_input", "1"}}},
		{name: "an open escalation is blocked under its parent and runs no process",
			rows: []conv{job, {id: "proxy:20260507-101500:esc-01", typ: typeProxy, created: 1746638500, agent: "proxy", parent: jobID, request: "esc-01"}},
			node: "proxy:20260507-101500:esc-01",
			want: want{status: "starting", parent: "job", question: "escalation esc-01 open", noProcess: true, mergesItself: true,
				beat: time.Unix(1746638500, 0)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			db := newBus(t, tr.jobBus, busDDL)
			insertConv(t, db, tc.rows...)
			mgmt := newBus(t, tr.management, busDDL)
			insertConv(t, mgmt, tc.stamps...)
			if tc.setup != nil {
				tc.setup(t, tr)
			}
			nodes, problems := read(t, tr.home)
			if len(problems) > 0 {
				t.Fatalf("problems: %v", problems)
			}
			k := tr.jobBus + "#" + tc.node
			if tc.node == jobID {
				k = filepath.Join(tr.job, protocol.HeartbeatFile)
			}
			n := nodes[k]
			if n == nil {
				t.Fatalf("no node %s among %d", k, len(nodes))
			}
			hb := n.Heartbeat
			if n.Source != string(sources.TeaParty) || !n.HasHeartbeat || hb == nil || !hb.HasParentField {
				t.Fatalf("node %s: source %q, record %v, heartbeat %v", k, n.Source, n.HasHeartbeat, hb)
			}
			if hb.Status != tc.want.status || hb.PID != tc.want.pid || hb.Started != tc.want.started {
				t.Errorf("status, pid, started = %q, %d, %v; want %q, %d, %v", hb.Status, hb.PID, hb.Started, tc.want.status, tc.want.pid, tc.want.started)
			}
			wantParent := map[string]string{"": "", "job": filepath.Join(tr.job, protocol.HeartbeatFile), "worker": tr.jobBus + "#" + workerID}[tc.want.parent]
			if hb.ParentHeartbeat != wantParent {
				t.Errorf("parent = %q, want %q", hb.ParentHeartbeat, wantParent)
			}
			switch {
			case tc.want.question == "" && n.Blocked != nil:
				t.Errorf("blocked %+v, want none", n.Blocked)
			case tc.want.question != "" && (n.Blocked == nil || n.Blocked.Question != tc.want.question):
				t.Errorf("blocked %+v, want the question %q", n.Blocked, tc.want.question)
			}
			wantTraits := model.Traits{PIDPerTurn: tc.want.pidPerTurn, NoProcessExpected: tc.want.noProcess, MergesItself: tc.want.mergesItself, SignOfLife: model.SignActivity}
			if n.Traits != wantTraits {
				t.Errorf("traits = %+v, want %+v", n.Traits, wantTraits)
			}
			wantBeat := tc.want.beat
			if wantBeat.IsZero() {
				wantBeat = epochSeconds(createdAt)
			}
			if !n.BeatMtime.Equal(wantBeat) {
				t.Errorf("beat = %v, want %v", n.BeatMtime, wantBeat)
			}
			if f := tc.want.field; f[0] != "" {
				got := field(n, f[0])
				if f[0] == "pid_recorded_in" && got == tr.management {
					got = "management"
				}
				if f[0] == "paused_by" && got == filepath.Join(tr.home, pausedFile) {
					got = "project"
				}
				if got != f[1] {
					t.Errorf("field %s = %q, want %q", f[0], got, f[1])
				}
			}
			if want := "jobs/" + jobName + "/" + tc.node; n.ID != want {
				t.Errorf("id = %q, want %q", n.ID, want)
			}
		})
	}
}
