package main

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/sources/teaparty/teapartytest"
)

// teaPartyHome is a project's TeaParty home as the e2e test builds it.
type teaPartyHome struct {
	t    *testing.T
	home string
}

// bus creates a bus at rel under the home, as TeaParty creates it.
func (h teaPartyHome) bus(rel string) (path string, db *sql.DB) {
	h.t.Helper()
	path = filepath.Join(h.home, filepath.FromSlash(rel))
	db, err := teapartytest.Open(path, teapartytest.DDL)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { db.Close() })
	return path, db
}

func insertRows(t *testing.T, db *sql.DB, rows ...teapartytest.Conversation) {
	t.Helper()
	if err := teapartytest.Insert(db, rows...); err != nil {
		t.Fatal(err)
	}
}

func insertMessage(t *testing.T, db *sql.DB, id, conversation, sender, content string, ts time.Time) {
	t.Helper()
	if err := teapartytest.InsertMessage(db, id, conversation, sender, content, epoch(ts)); err != nil {
		t.Fatal(err)
	}
}

// docs/sources.md, TeaParty: every row of the mapping, and the keys and
// edges, as `--once --json` shows them — the README's command (the jobs
// dir native, the home TeaParty's) over a home with three jobs (one whose
// lead beats through its .heartbeat, two read from their rows), the
// management bus, an agent's chat bus, and a second home paused by
// "Pause All".
func TestOnceJSONShowsEveryTeaPartyMappingRow(t *testing.T) {
	now := time.Now()
	old := now.Add(-10 * time.Minute) // past TeaParty's stale (120 s), short of kill-after's reach for no pid
	livePID, liveStarted := testproc.Live(t)
	leadPID, leadStarted := testproc.Live(t)
	stampPID, stampStarted := testproc.Live(t)
	gone := testproc.Gone(t)

	h := teaPartyHome{t: t, home: filepath.Join(t.TempDir(), "webapp", ".teaparty")}
	jobA := filepath.Join(h.home, "jobs", "job-20260507-101500--native-lead")
	leadHB := filepath.Join(jobA, ".heartbeat")
	writeAged(t, leadHB, fmt.Sprintf(`{"pid": %d, "parent_heartbeat": "", "role": "job-lead", "started": %f, "status": "running"}`, leadPID, leadStarted), 0)
	busA, dbA := h.bus("jobs/job-20260507-101500--native-lead/messages.db")
	const jobAID = "job:webapp:20260507-101500"
	// worker returns a dispatch row under job A with its session dir (and
	// worktree) under the job dir, its stream written age ago; metadata, if
	// not "", is its metadata.json phase.
	worker := func(sid, state string, pid int, started float64, streamAge time.Duration, phase string) teapartytest.Conversation {
		dir := filepath.Join(jobA, "tasks", sid)
		writeAged(t, filepath.Join(dir, "worktree", ".keep"), "", 0)
		writeAged(t, filepath.Join(dir, "stream.jsonl"), "{}\n", streamAge)
		if phase != "" {
			writeAged(t, filepath.Join(dir, "metadata.json"), fmt.Sprintf(`{"phase": %q}`, phase), streamAge)
		}
		return teapartytest.Conversation{ID: "dispatch:" + sid, Type: "dispatch", State: state, CreatedAt: epoch(old),
			Agent: "coding-agent", Parent: jobAID, RequestID: "ctx-" + sid, Slug: "webapp",
			Worktree: filepath.Join(dir, "worktree"), PID: pid, PIDStarted: started}
	}
	insertRows(t, dbA,
		teapartytest.Conversation{ID: jobAID, Type: "job", CreatedAt: epoch(old), AwaitingInput: 1, Agent: "webapp-lead", Slug: "webapp"},
		worker("starting", "active", 0, 0, 0, ""),
		worker("pending", "pending", 0, 0, 0, ""),
		worker("running", "active", livePID, liveStarted, 0, ""),
		teapartytest.Conversation{ID: "dispatch:nested", Type: "dispatch", CreatedAt: epoch(now), Agent: "researcher",
			Parent: "dispatch:running", Slug: "webapp"},
		worker("paused", "paused", gone, 1746638161, 10*time.Minute, ""),
		worker("complete", "active", 0, 0, 10*time.Minute, "complete"),
		worker("awaiting", "active", gone, 1746638161, 10*time.Minute, "awaiting"),
		worker("closed", "closed", gone, 1746638161, 10*time.Minute, ""),
		worker("withdrawn", "withdrawn", 0, 0, 10*time.Minute, ""),
		worker("unknown", "archived", livePID, liveStarted, 0, ""),
		worker("stamped", "active", 0, 0, 0, ""),
		worker("turn-fresh", "active", gone, 1746638161, 15*time.Second, ""),
		worker("turn-stale", "active", gone, 1746638161, 10*time.Minute, ""),
		teapartytest.Conversation{ID: "proxy:20260507-101500:esc-01", Type: "proxy", CreatedAt: epoch(old), Agent: "proxy",
			Parent: jobAID, RequestID: "esc-01"},
		teapartytest.Conversation{ID: "dispatch:orphan", Type: "dispatch", CreatedAt: epoch(now), Agent: "coding-agent",
			Parent: "dispatch:never-written", Slug: "webapp"},
	)
	insertMessage(t, dbA, "m1", jobAID, "webapp-lead", "Approve the plan? (PLAN.md)", now.Add(-time.Minute))
	insertMessage(t, dbA, "m2", jobAID, "human", "looking", now.Add(-30*time.Second))

	// Job B has no .heartbeat: its row is its node; closed, as is its worker.
	jobB := filepath.Join(h.home, "jobs", "job-20260507-110000--closed")
	busB, dbB := h.bus("jobs/job-20260507-110000--closed/messages.db")
	insertRows(t, dbB,
		teapartytest.Conversation{ID: "job:webapp:20260507-110000", Type: "job", State: "closed", CreatedAt: epoch(old), Agent: "webapp-lead", Slug: "webapp"},
		teapartytest.Conversation{ID: "dispatch:b1", Type: "dispatch", State: "closed", CreatedAt: epoch(old), Agent: "coding-agent",
			Parent: "job:webapp:20260507-110000", Slug: "webapp"},
		// Closing a row leaves its descendants active.
		teapartytest.Conversation{ID: "dispatch:b2", Type: "dispatch", CreatedAt: epoch(now), Agent: "researcher",
			Parent: "dispatch:b1", Slug: "webapp"})

	// Job C has no .heartbeat and waits at a gate: its row is blocked.
	jobC := filepath.Join(h.home, "jobs", "job-20260507-120000--gate")
	_, dbC := h.bus("jobs/job-20260507-120000--gate/messages.db")
	const jobCID = "job:webapp:20260507-120000"
	insertRows(t, dbC, teapartytest.Conversation{ID: jobCID, Type: "job", CreatedAt: epoch(old), AwaitingInput: 1, Agent: "webapp-lead", Slug: "webapp"})
	insertMessage(t, dbC, "c1", jobCID, "webapp-lead", "Ship it?", now.Add(-2*time.Minute))

	// The launcher stamps a worker's pid in the management bus.
	mgmt, dbM := h.bus("management/messages.db")
	insertRows(t, dbM, teapartytest.Conversation{ID: "dispatch:stamped", Type: "dispatch", CreatedAt: epoch(old), PID: stampPID, PIDStarted: stampStarted})

	// The office manager's chat bus: a conversation between its turns.
	omBus, dbOM := h.bus("management/agents/office-manager/office-manager-messages.db")
	insertRows(t, dbOM, teapartytest.Conversation{ID: "om", Type: "office_manager", CreatedAt: epoch(old), Agent: "office-manager"})
	insertMessage(t, dbOM, "o1", "om", "human", "What is left?", old)
	insertMessage(t, dbOM, "o2", "om", "office-manager", "Two workers.", now.Add(-3*time.Minute))

	// A second project, paused by "Pause All": its rows stay active.
	paused := teaPartyHome{t: t, home: filepath.Join(t.TempDir(), "shop", ".teaparty")}
	writeAged(t, filepath.Join(paused.home, "paused"), "", 0)
	jobP := filepath.Join(paused.home, "jobs", "job-20260507-130000--paused")
	busP, dbP := paused.bus("jobs/job-20260507-130000--paused/messages.db")
	insertRows(t, dbP,
		teapartytest.Conversation{ID: "job:shop:20260507-130000", Type: "job", CreatedAt: epoch(now), Agent: "shop-lead", Slug: "shop"},
		teapartytest.Conversation{ID: "dispatch:p1", Type: "dispatch", CreatedAt: epoch(now.Add(-15 * time.Second)), Agent: "coding-agent",
			Parent: "job:shop:20260507-130000", Slug: "shop", PID: gone, PIDStarted: 1746638161})

	doc := onceDoc(t, "native:"+filepath.Join(h.home, "jobs"), "teaparty:"+h.home, "teaparty:"+paused.home)
	if len(doc.Problems) > 0 {
		t.Errorf("problems: %v", doc.Problems)
	}
	workerFields := []string{"conversation", "type", "state", "bus", "parent", "request", "project"}
	with := func(names ...string) []string { return append(slices.Clone(workerFields), names...) }
	inA := func(id string) string { return busA + "#" + id }
	rows := []mappingRow{
		{row: "a job with its .heartbeat: the native lead, the row no node of its own", key: leadHB,
			state: "running", action: "none", status: "running", pid: leadPID},
		{row: "awaiting_input = 1 on a job whose lead beats: a gate node under the lead", key: inA(jobAID),
			state: "running", flags: []string{"quiet", "blocked"}, action: "answer", reason: []string{"waiting for a human: Approve the plan? (PLAN.md)"},
			status: "running", pid: -1, parent: leadHB, blocked: "Approve the plan? (PLAN.md)",
			fields: []string{"conversation", "type", "state", "bus", "project", "awaiting_input", "gate"},
			values: map[string]string{"conversation": jobAID, "type": "job", "state": "active", "bus": busA, "awaiting_input": "1"}},
		{row: "active, pid 0: starting", key: inA("dispatch:starting"),
			state: "running", flags: []string{"starting"}, action: "none", status: "starting", pid: -1, parent: leadHB,
			fields: workerFields, values: map[string]string{"conversation": "dispatch:starting", "type": "dispatch", "state": "active",
				"bus": busA, "parent": jobAID, "request": "ctx-starting", "project": "webapp"}},
		{row: "pending (never written, read as active), pid 0: starting", key: inA("dispatch:pending"),
			state: "running", flags: []string{"starting"}, action: "none", status: "starting", pid: -1, parent: leadHB,
			fields: workerFields, values: map[string]string{"state": "pending"}},
		{row: "active, pid > 0: running by that pid and pid_started", key: inA("dispatch:running"),
			state: "running", action: "none", status: "running", pid: livePID, started: liveStarted, parent: leadHB, fields: workerFields},
		{row: "a worker's parent is its dispatcher's row, at any depth", key: inA("dispatch:nested"),
			state: "running", flags: []string{"starting"}, action: "none", status: "starting", pid: -1, parent: inA("dispatch:running"),
			fields: []string{"conversation", "type", "state", "bus", "parent", "project"}},
		{row: "paused: paused, no process expected (never dead for a gone pid)", key: inA("dispatch:paused"),
			state: "running", flags: []string{"paused", "quiet"}, action: "none", reason: []string{fmt.Sprintf("no process expected (pid %d gone)", gone)},
			status: "paused", pid: gone, parent: leadHB, fields: workerFields},
		{row: "a live worker whose phase is complete: completed, merged by itself", key: inA("dispatch:complete"),
			state: "finished", action: "none", reason: []string{"completed"}, status: "completed", pid: -1, parent: leadHB,
			fields: with("phase"), values: map[string]string{"phase": "complete", "state": "active"}},
		{row: "a live worker whose phase is awaiting: running, no process expected", key: inA("dispatch:awaiting"),
			state: "running", flags: []string{"quiet"}, action: "none", reason: []string{fmt.Sprintf("no process expected (pid %d gone)", gone)},
			status: "running", pid: gone, parent: leadHB, fields: with("phase"), values: map[string]string{"phase": "awaiting"}},
		{row: "closed: completed", key: inA("dispatch:closed"),
			state: "finished", action: "none", reason: []string{"completed"}, status: "completed", pid: gone, parent: leadHB, fields: workerFields},
		{row: "withdrawn: withdrawn", key: inA("dispatch:withdrawn"),
			state: "finished", action: "none", reason: []string{"withdrawn"}, status: "withdrawn", pid: -1, parent: leadHB, fields: workerFields},
		{row: "an unknown state: the state as written, flagged", key: inA("dispatch:unknown"),
			state: "running", flags: []string{"unknown_status"}, action: "none", reason: []string{`unknown status "archived"`},
			status: "archived", pid: livePID, parent: leadHB, fields: workerFields},
		{row: "a pid 0 row whose id has a pid in management/messages.db: running by that pid", key: inA("dispatch:stamped"),
			state: "running", action: "none", status: "running", pid: stampPID, started: stampStarted, parent: leadHB,
			fields: with("pid_recorded_in"), values: map[string]string{"pid_recorded_in": mgmt}},
		{row: "the management row that only stamps a pid is no node", key: mgmt + "#dispatch:stamped", absent: true},
		{row: "a turn's pid gone, the beat fresh: running until the beat is stale (--once records no owner)", key: inA("dispatch:turn-fresh"),
			state: "running", action: "none", reason: []string{fmt.Sprintf("pid %d gone between turns: dead once the last activity is stale", gone)},
			status: "running", pid: gone, parent: leadHB, fields: workerFields},
		{row: "a turn's pid gone, the beat stale: dead", key: inA("dispatch:turn-stale"),
			state: "dead", action: "wait", reason: []string{fmt.Sprintf("pid %d gone", gone), "its lead is running"},
			status: "running", pid: gone, parent: leadHB, fields: workerFields},
		{row: "type = proxy, live: blocked on the escalation, no process expected, under its dispatcher", key: inA("proxy:20260507-101500:esc-01"),
			state: "running", flags: []string{"starting", "quiet", "blocked"}, action: "answer", reason: []string{"waiting for a human: escalation esc-01 open"},
			status: "starting", pid: -1, parent: leadHB, blocked: "escalation esc-01 open",
			fields: []string{"conversation", "type", "state", "bus", "parent", "request"}},
		{row: "a parent absent from the bus: no node has its key, the child is a session of its own", key: inA("dispatch:orphan"),
			state: "running", flags: []string{"starting"}, action: "none", status: "starting", pid: -1,
			fields: []string{"conversation", "type", "state", "bus", "parent", "project"}, values: map[string]string{"parent": "dispatch:never-written"}},
		{row: "a job with no .heartbeat is its row, keyed by that path; closed: completed, merged by itself", key: filepath.Join(jobB, ".heartbeat"),
			state: "finished", action: "none", reason: []string{"completed; its source merges by itself"}, status: "completed", pid: -1, infra: jobB,
			fields: []string{"conversation", "type", "state", "bus", "project"}},
		{row: "every row merges itself: a completed worker under a finished job is not merged", key: busB + "#dispatch:b1",
			state: "finished", action: "none", reason: []string{"completed; its source merges by itself"}, status: "completed", pid: -1,
			parent: filepath.Join(jobB, ".heartbeat"), fields: []string{"conversation", "type", "state", "bus", "parent", "project"}},
		{row: "a live row under a closed one: orphaned", key: busB + "#dispatch:b2",
			state: "running", flags: []string{"starting", "orphaned"}, action: "none", status: "starting", pid: -1,
			parent: busB + "#dispatch:b1", fields: []string{"conversation", "type", "state", "bus", "parent", "project"}},
		{row: "awaiting_input = 1 on an active row: blocked on the last message not from a human", key: filepath.Join(jobC, ".heartbeat"),
			state: "running", flags: []string{"starting", "blocked"}, action: "answer", reason: []string{"waiting for a human: Ship it?"},
			status: "starting", pid: -1, infra: jobC, blocked: "Ship it?",
			fields: []string{"conversation", "type", "state", "bus", "project", "awaiting_input"}},
		{row: "a live chat conversation: running, no process expected, its newest message its activity", key: omBus + "#om",
			state: "running", flags: []string{"quiet"}, action: "none", reason: []string{"running, quiet: last activity 3m"}, status: "running", pid: -1,
			fields: []string{"conversation", "type", "state", "bus"}},
		{row: "a live row while <home>/paused exists: paused, field paused_by", key: filepath.Join(jobP, ".heartbeat"),
			state: "running", flags: []string{"paused"}, action: "none", status: "paused", pid: -1, infra: jobP,
			fields: []string{"conversation", "type", "state", "bus", "project", "paused_by"},
			values: map[string]string{"paused_by": filepath.Join(paused.home, "paused")}},
		{row: "a live worker of a paused project: paused, no process expected", key: busP + "#dispatch:p1",
			state: "running", flags: []string{"paused"}, action: "none", reason: []string{fmt.Sprintf("no process expected (pid %d gone)", gone)},
			status: "paused", pid: gone, parent: filepath.Join(jobP, ".heartbeat"),
			fields: []string{"conversation", "type", "state", "bus", "parent", "project", "paused_by"}},
	}
	for _, r := range rows {
		r.check(t, doc)
	}
}

// SPEC §10, docs/sources.md (TeaParty, keys and edges): a job read both
// ways is one TeaParty node. Its lead, read through its `.heartbeat` by the
// file protocol, carries the source's traits whichever reader found it:
// TeaParty squash-merges a session at DONE by itself (`teaparty/cfa/
// session.py`, step 12), so a completed job over CfA DONE, or a dead one
// whose CfA reached DONE, is never offered `merge`; and the lead's pid is a
// turn's `claude` (`teaparty/runners/claude.py`, `activate_heartbeat` with
// `proc.pid`), gone between turns. A TeaParty root inside a native root
// leaves its files to that root: its leads carry the traits all the same.
func TestTeaPartyJobLeadCarriesTheSourcesTraits(t *testing.T) {
	gone := testproc.Gone(t)
	leadPID, leadStarted := testproc.Live(t)
	project := filepath.Join(t.TempDir(), "webapp")
	h := teaPartyHome{t: t, home: filepath.Join(project, ".teaparty")}
	// job writes a job dir: its lead's heartbeat (beaten age ago), its CfA
	// state, and its bus with the job's row.
	job := func(name, heartbeat string, age time.Duration, cfa string) string {
		dir := filepath.Join(h.home, "jobs", name)
		writeAged(t, filepath.Join(dir, ".heartbeat"), heartbeat, age)
		writeAged(t, filepath.Join(dir, ".cfa-state.json"), fmt.Sprintf(`{"state": %q}`, cfa), age)
		_, db := h.bus("jobs/" + name + "/messages.db")
		insertRows(t, db, teapartytest.Conversation{ID: "job:webapp:" + name, Type: "job", State: "closed",
			CreatedAt: epoch(time.Now().Add(-time.Hour)), Agent: "webapp-lead", Slug: "webapp"})
		return filepath.Join(dir, ".heartbeat")
	}
	done := job("job-1--done", fmt.Sprintf(`{"pid": %d, "parent_heartbeat": "", "role": "lead", "started": %f, "status": "completed"}`,
		gone, 1746638161.0), time.Minute, "DONE")
	died := job("job-2--died", fmt.Sprintf(`{"pid": %d, "parent_heartbeat": "", "role": "lead", "started": %f, "status": "running"}`,
		gone, 1746638161.0), 10*time.Minute, "DONE")
	turn := job("job-3--turn", fmt.Sprintf(`{"pid": %d, "parent_heartbeat": "", "role": "lead", "started": %f, "status": "running"}`,
		gone, 1746638161.0), 40*time.Second, "EXECUTE")
	live := job("job-4--live", fmt.Sprintf(`{"pid": %d, "parent_heartbeat": "", "role": "lead", "started": %f, "status": "running"}`,
		leadPID, leadStarted), 0, "EXECUTE")
	rows := []mappingRow{
		{row: "a completed job over CfA DONE: TeaParty merged it", key: done,
			state: "finished", action: "none", reason: []string{"completed; its source merges by itself"}, status: "completed", pid: gone},
		{row: "a dead job whose CfA reached DONE: TeaParty merged it", key: died,
			state: "dead", action: "none", reason: []string{"CfA DONE; its source merges by itself"}, status: "running", pid: gone},
		{row: "a job whose turn's pid is gone, the beat fresh: between turns, not dead", key: turn,
			state: "running", flags: []string{"quiet"}, action: "none", reason: []string{fmt.Sprintf("pid %d gone between turns", gone)},
			status: "running", pid: gone},
		{row: "a job whose turn runs", key: live, state: "running", action: "none", status: "running", pid: leadPID},
	}
	before := storeBytes(t, h.home)
	t.Cleanup(func() { sameBytes(t, before, storeBytes(t, h.home)) })
	for _, roots := range [][]string{
		{filepath.Join(h.home, "jobs")},
		{"teaparty:" + h.home},
		{"native:" + filepath.Join(h.home, "jobs"), "teaparty:" + filepath.Join(h.home, "jobs")},
		{"native:" + project, h.home},
	} {
		t.Run(strings.Join(roots, " "), func(t *testing.T) {
			doc := onceDoc(t, roots...)
			if len(doc.Problems) > 0 {
				t.Errorf("problems: %v", doc.Problems)
			}
			for _, r := range rows {
				r.check(t, doc)
			}
		})
	}
}
