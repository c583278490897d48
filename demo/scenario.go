package demo

import (
	"path/filepath"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// Thresholds are the demo's compressed time: every state and flag shows
// within a minute.
func Thresholds() model.Thresholds {
	return model.Thresholds{
		Beat:           time.Second,
		Stale:          4 * time.Second,
		KillAfter:      10 * time.Second,
		ExitGrace:      time.Second,
		StartTolerance: 2 * time.Second,
	}
}

// dispatch is one node of the scenario.
type dispatch struct {
	id     string // infra dir relative to the fleet dir
	parent string // the parent's id; "" for a session lead
	role   string
	team   string
	taskID string
	behave string
	after  time.Duration // when the behaviour's event happens
	// wrap holds extra wrap flags: the hang of a frozen agent, a slow beat,
	// a late launch, a shorter parent grace.
	wrap []string
	// legacy runs the agent without wrap: a `.running` sentinel only.
	legacy bool
	// registerOnly writes the parent's registry line and starts nothing: an
	// optimistic registration that never started.
	registerOnly bool
}

func (d dispatch) infra(dir string) string { return filepath.Join(dir, filepath.FromSlash(d.id)) }

func (d dispatch) heartbeat(dir string) string {
	return filepath.Join(d.infra(dir), protocol.HeartbeatFile)
}

// scenario is the demo fleet. Times count from the start; with beat 1 s,
// stale 4 s, kill-after 10 s and exit-grace 1 s:
//
//   - session 090000 stays healthy: its coding sub-lead beats (with a
//     unit-tests worker of its own below it), planning completes (CfA DONE)
//     at 6 s, testing hangs at 3 s (quiet, stalled at 7 s, kill candidate
//     once its beat is older than kill-after, at 13 s), review asks a human at 2 s and hangs at
//     5 s (stalled but blocked: answer, never kill), design pauses at 3 s,
//     deploy stays starting for 20 s, lint beats every 2.5 s (quiet between
//     beats), and docs was registered but never started (missing; the lead
//     is offered compact once its registry is older than stale).
//   - session 091500's lead crashes at 8 s (dead, resume): its coding worker
//     runs on orphaned and withdraws 30 s after its lead died; its testing
//     worker crashes at 10 s (dead, wait: the resume goes on the lead).
//   - session 093000 completes at 5 s (finished, merge); 094500 withdraws
//     at 7 s (finished, withdrawn).
//   - session 080000 is an old writer: `.running` only (legacy).
//   - job 101 runs in the .teaparty layout: task 1 completes at 4 s, task 2
//     works, task 3 crashes at 6 s (dead, wait: its lead is alive).
//   - job 102 crashes at 9 s (dead, resume).
//   - job 103 is a TeaParty job whose workers live in its bus (see
//     busJob): its lead beats through wrap like job 101's.
//
// A crash is a hang followed by the agent's death half a second later: the
// wrapper neither beats nor finalizes, so the heartbeat stays `running`
// with a gone pid, which is how a dead dispatch looks on disk.
func scenario() []dispatch {
	s1 := protocol.SessionsRoot + "/20261122-090000"
	s2 := protocol.SessionsRoot + "/20261122-091500"
	j1 := protocol.JobsRoot + "/job-101--refactor-parser"
	hang := func(d time.Duration) []string { return []string{"--freeze-after", d.String()} }
	crashAt := func(d time.Duration) []string { return hang(d - 500*time.Millisecond) }
	return []dispatch{
		{id: s1, role: "lead", behave: BehaveWork},
		{id: s1 + "/coding/20261122-090105", parent: s1, role: "coding", team: "coding", taskID: "t-101", behave: BehaveWork},
		{id: s1 + "/coding/20261122-090105/unit-tests/20261122-090210", parent: s1 + "/coding/20261122-090105", role: "unit-tests", team: "unit-tests", behave: BehaveWork},
		{id: s1 + "/planning/20261122-090050", parent: s1, role: "planning", team: "planning", behave: BehaveComplete, after: 6 * time.Second},
		{id: s1 + "/testing/20261122-090110", parent: s1, role: "testing", team: "testing", taskID: "t-102", behave: BehaveWork, wrap: hang(3 * time.Second)},
		{id: s1 + "/review/20261122-090120", parent: s1, role: "review", team: "review", behave: BehaveBlock, after: 2 * time.Second, wrap: hang(5 * time.Second)},
		{id: s1 + "/design/20261122-090125", parent: s1, role: "design", team: "design", behave: BehavePause, after: 3 * time.Second},
		{id: s1 + "/deploy/20261122-090130", parent: s1, role: "deploy", team: "deploy", behave: BehaveWork, wrap: []string{"--launch-delay", "20s"}},
		{id: s1 + "/lint/20261122-090135", parent: s1, role: "lint", team: "lint", behave: BehaveWork, wrap: []string{"--beat", "2500ms"}},
		{id: s1 + "/docs/20261122-090140", parent: s1, team: "docs", taskID: "t-103", registerOnly: true},

		{id: s2, role: "lead", behave: BehaveCrash, after: 8 * time.Second, wrap: crashAt(8 * time.Second)},
		{id: s2 + "/coding/20261122-091510", parent: s2, role: "coding", team: "coding", behave: BehaveWork, wrap: []string{"--parent-grace", "30s"}},
		{id: s2 + "/testing/20261122-091515", parent: s2, role: "testing", team: "testing", behave: BehaveCrash, after: 10 * time.Second, wrap: crashAt(10 * time.Second)},

		{id: protocol.SessionsRoot + "/20261122-093000", role: "lead", behave: BehaveComplete, after: 5 * time.Second},
		{id: protocol.SessionsRoot + "/20261122-094500", role: "lead", behave: BehaveWithdraw, after: 7 * time.Second},
		{id: protocol.SessionsRoot + "/20261122-080000", role: "lead", behave: BehaveLegacy, legacy: true},

		{id: j1, role: "job-lead", behave: BehaveWork},
		{id: j1 + "/tasks/task-1--split-lexer", parent: j1, role: "worker", team: "parser", taskID: "task-1", behave: BehaveComplete, after: 4 * time.Second},
		{id: j1 + "/tasks/task-2--port-tests", parent: j1, role: "worker", team: "parser", taskID: "task-2", behave: BehaveWork},
		{id: j1 + "/tasks/task-3--fix-flaky-test", parent: j1, role: "worker", team: "parser", taskID: "task-3", behave: BehaveCrash, after: 6 * time.Second, wrap: crashAt(6 * time.Second)},
		{id: protocol.JobsRoot + "/job-102--migrate-schema", role: "job-lead", behave: BehaveCrash, after: 9 * time.Second, wrap: crashAt(9 * time.Second)},
		{id: busJob().lead, role: "job-lead", behave: BehaveWork},
	}
}

// busWorker is a worker a job dispatched through TeaParty's bus: an agent
// with no heartbeat of its own, known by its dispatch row, which carries
// its pid and the process's create time.
type busWorker struct {
	sid    string // its session id: the row is `dispatch:<sid>`, its dir `<job>/tasks/<sid>`
	role   string
	behave string
	after  time.Duration
}

// busJobSpec is a TeaParty job as TeaParty writes it: the lead's native
// heartbeat in the job dir (the lead is a dispatch of the scenario), and
// in the same dir a `messages.db` holding the job's row and a dispatch
// row per worker.
type busJobSpec struct {
	lead    string // the lead's id in the scenario: the job dir
	row     string // the job's conversation id
	project string
	workers []busWorker
}

// busJob is job 103: two workers run, and the third completes at 5 s,
// when the job closes its row (TeaParty's CloseConversation), finished.
func busJob() busJobSpec {
	return busJobSpec{
		lead:    protocol.JobsRoot + "/job-103--upgrade-deps",
		row:     "job:demo:20261122-100000",
		project: "demo",
		workers: []busWorker{
			{sid: "20261122-100010", role: "coder", behave: BehaveWork},
			{sid: "20261122-100020", role: "tester", behave: BehaveWork},
			{sid: "20261122-100030", role: "changelog", behave: BehaveComplete, after: 5 * time.Second},
		},
	}
}

// dir is the worker's session dir under its job.
func (w busWorker) dir(fleetDir, job string) string {
	return filepath.Join(fleetDir, filepath.FromSlash(job), "tasks", w.sid)
}
