package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// clock12 is the worked example's "now" (SPEC appendix): 12:00:00.
var clock12 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return clock12 }

// spec is one node of a hand-made forest.
type spec struct {
	id, role, team string
	state          model.State
	flags          []model.Flag
	action         model.Action
	reason         string
	pid            int
	beat           time.Duration // age of the heartbeat's mtime
	cfa            string
	retries        int
	blocked        string
}

// buildSnapshot turns specs (parents before children, ids '/'-separated)
// into a classified forest as the scanner would hand it over.
func buildSnapshot(root string, now time.Time, specs []spec) *model.Snapshot {
	snap := &model.Snapshot{
		GeneratedAt: now, Roots: []string{root}, Thresholds: model.DefaultThresholds(),
		ByID: map[string]*model.Node{}, Watch: model.WatchInfo{Mode: "fsnotify"},
	}
	for _, s := range specs {
		n := &model.Node{
			ID: s.id, Root: root, InfraDir: root + "/" + s.id, HeartbeatPath: root + "/" + s.id + "/.heartbeat",
			State: s.state, Flags: s.flags, Action: s.action, Reason: s.reason,
		}
		if n.Action == "" {
			n.Action = model.ActionNone
		}
		if s.state != model.StateMissing {
			n.HasHeartbeat = true
			status := "running"
			if s.state == model.StateFinished {
				status = "completed"
			}
			n.Heartbeat = &model.Heartbeat{PID: s.pid, Role: s.role, HeartbeatOptional: model.OptionalOf(model.HeartbeatOptional{Team: s.team}), Status: status, Started: float64(now.Add(-time.Hour).Unix())}
			raw, _ := json.Marshal(map[string]any{"pid": s.pid, "role": s.role, "status": status, "parent_heartbeat": ""})
			n.EditRare(func(r *model.Rare) { r.HeartbeatRaw = raw })
			n.BeatMtime = now.Add(-s.beat)
			n.Process = model.ProcessAlive
		}
		if s.team != "" {
			n.Entry = &model.ChildEntry{Heartbeat: n.HeartbeatPath, Team: s.team, Status: "active"}
		}
		if s.cfa != "" {
			n.Cfa = &model.CfaState{State: s.cfa, CfaDetail: &model.CfaDetail{History: []json.RawMessage{json.RawMessage(`{"state":"PLAN"}`), json.RawMessage(`{"state":"` + s.cfa + `"}`)}}}
		}
		n.Retries.Total = s.retries
		if s.blocked != "" {
			n.Blocked = &model.Blocked{Path: n.InfraDir + "/blocked.json", Question: s.blocked, Since: now.Add(-s.beat)}
		}
		snap.ByID[s.id] = n
		if i := strings.LastIndexByte(s.id, '/'); i >= 0 {
			// Parent: the longest registered prefix.
			for p := s.id[:i]; p != ""; {
				if parent, ok := snap.ByID[p]; ok {
					n.Parent, n.ParentID = parent, parent.ID
					parent.Children = append(parent.Children, n)
					break
				}
				j := strings.LastIndexByte(p, '/')
				if j < 0 {
					break
				}
				p = p[:j]
			}
		}
		if n.Parent == nil {
			snap.Sessions = append(snap.Sessions, n)
		}
	}
	for _, n := range snap.ByID {
		sort.Slice(n.Children, func(i, j int) bool { return n.Children[i].ID < n.Children[j].ID })
	}
	sort.Slice(snap.Sessions, func(i, j int) bool { return snap.Sessions[i].ID < snap.Sessions[j].ID })
	return snap
}

// exampleSpecs is the worked example of the SPEC appendix.
func exampleSpecs() []spec {
	return []spec{
		{id: "A", role: "lead", state: model.StateRunning, action: model.ActionCompact, reason: "registry holds a child that never started", pid: 4101, beat: 10 * time.Second, cfa: "EXECUTE"},
		{id: "A/code/2", role: "coder", team: "code", state: model.StateDead, action: model.ActionWait, reason: "pid 4103 gone, last beat 3m ago; lead alive", pid: 4103, beat: 3 * time.Minute, cfa: "EXECUTE"},
		{id: "A/docs/4", team: "docs", state: model.StateMissing, action: model.ActionWait, reason: "registered but no heartbeat"},
		{id: "A/plan/1", role: "planner", team: "plan", state: model.StateFinished, reason: "status completed", pid: 4102, beat: 20 * time.Minute, cfa: "DONE"},
		{id: "A/test/3", role: "tester", team: "test", state: model.StateRunning, flags: []model.Flag{model.FlagStalled, model.FlagKillCandidate}, action: model.ActionKill, reason: "alive but not beating for 6m", pid: 4104, beat: 6 * time.Minute},
		{id: "B", role: "lead", state: model.StateDead, action: model.ActionResume, reason: "pid 4201 gone, last beat 1m30s ago", pid: 4201, beat: 90 * time.Second, cfa: "EXECUTE"},
		{id: "B/ask/3", role: "asker", team: "ask", state: model.StateRunning, flags: []model.Flag{model.FlagStalled, model.FlagBlocked}, action: model.ActionAnswer, reason: "waiting for a human", pid: 4204, beat: 20 * time.Minute, blocked: "Ship it?"},
		{id: "B/code/1", role: "coder", team: "code", state: model.StateRunning, flags: []model.Flag{model.FlagOrphaned}, reason: "its lead B is dead", pid: 4202, beat: 15 * time.Second},
		{id: "B/test/2", role: "tester", team: "test", state: model.StateDead, action: model.ActionWait, reason: "pid 4203 gone (exit-grace); resume goes on B", pid: 4203, beat: 20 * time.Second, retries: 1},
		{id: "C", state: model.StateRunning, flags: []model.Flag{model.FlagLegacy}, reason: "legacy .running, pid alive", pid: 4301, beat: 5 * time.Second},
	}
}

func exampleSnapshot() *model.Snapshot {
	return buildSnapshot("/srv/fleet/.sessions", clock12, exampleSpecs())
}

// bigSnapshot is n nodes: sessions of a lead, 3 teams of 3 workers.
func bigSnapshot(n int) *model.Snapshot {
	specs := make([]spec, 0, n)
	states := []model.State{model.StateRunning, model.StateRunning, model.StateDead, model.StateFinished, model.StateMissing}
	for s := 0; len(specs) < n; s++ {
		lead := fmt.Sprintf("2026%04d", s)
		specs = append(specs, spec{id: lead, role: "lead", state: model.StateRunning, pid: 1000 + s, beat: 3 * time.Second})
		for t := 0; t < 3 && len(specs) < n; t++ {
			team := fmt.Sprintf("%s/team%d/%02d", lead, t, t)
			specs = append(specs, spec{id: team, role: "team-lead", team: fmt.Sprintf("team%d", t), state: model.StateRunning, pid: 2000 + t, beat: 5 * time.Second})
			for w := 0; w < 2 && len(specs) < n; w++ {
				st := states[(s+t+w)%len(states)]
				specs = append(specs, spec{id: fmt.Sprintf("%s/w/%02d", team, w), role: "worker", team: "w", state: st, pid: 3000 + w, beat: time.Duration(w+1) * 40 * time.Second, reason: "synthetic"})
			}
		}
	}
	return buildSnapshot("/srv/big", clock12, specs)
}

// fakeFeed is a Feed tests push updates into.
type fakeFeed struct {
	ch        chan model.Update
	mu        sync.Mutex
	refreshed int
}

func newFakeFeed() *fakeFeed { return &fakeFeed{ch: make(chan model.Update, 16)} }

func (f *fakeFeed) Updates() <-chan model.Update { return f.ch }

func (f *fakeFeed) Refresh() {
	f.mu.Lock()
	f.refreshed++
	f.mu.Unlock()
}

// fakeRunner records requests and answers from a table.
type fakeRunner struct {
	mu      sync.Mutex
	reqs    []ActionRequest
	refuse  string // a non-empty message refuses every request
	failErr error
	plan    []string // the plan every answer carries, when set
}

func (r *fakeRunner) Run(_ context.Context, req ActionRequest) (ActionResult, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	if r.failErr != nil {
		return ActionResult{}, r.failErr
	}
	res := ActionResult{Action: req.Action, NodeID: req.NodeID}
	if r.refuse != "" {
		res.Refused, res.Message = true, r.refuse
		return res, nil
	}
	verb := "would"
	if !req.DryRun {
		verb = "did"
	}
	res.Message = fmt.Sprintf("%s %s %s", verb, req.Action, req.NodeID)
	res.Plan = []string{fmt.Sprintf("%s %s %s (tree=%v)", verb, req.Action, req.NodeID, req.Tree)}
	if r.plan != nil {
		res.Plan = r.plan
	}
	return res, nil
}

func (r *fakeRunner) requests() []ActionRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ActionRequest(nil), r.reqs...)
}

// demoSpecs is the fleet `dispatchtop demo` shows some fifteen seconds in,
// at a fixed clock, every node of demo.Layout (TestReadmeScreenshotIsTheDemo
// holds the two together); the README's screenshot is drawn from the live
// demo itself.
func demoSpecs() []spec {
	const s, r = time.Second, model.StateRunning
	beating := "beating; last beat 0s ago"
	return []spec{
		{id: "20261122-080000", state: r, flags: []model.Flag{model.FlagLegacy}, reason: "pid 4121 alive; .running written 12s ago", pid: 4121, beat: 12 * s},
		{id: "20261122-090000", role: "lead", state: r, action: model.ActionCompact, reason: "registry holds a child that never started", pid: 15962, cfa: "EXECUTE"},
		{id: "20261122-090000/coding/20261122-090105", role: "coding", team: "coding", state: r, reason: beating, pid: 16155, cfa: "EXECUTE"},
		{id: "20261122-090000/coding/20261122-090105/unit-tests/20261122-090210", role: "unit-tests", team: "unit-tests", state: r, reason: beating, pid: 16199, cfa: "EXECUTE"},
		{id: "20261122-090000/deploy/20261122-090130", role: "deploy", team: "deploy", state: r, flags: []model.Flag{model.FlagStarting}, reason: "starting; last beat 0s ago", pid: 16020, cfa: "INTENT"},
		{id: "20261122-090000/design/20261122-090125", role: "design", team: "design", state: r, flags: []model.Flag{model.FlagPaused}, reason: "paused; last beat 0s ago", pid: 16132, cfa: "EXECUTE"},
		{id: "20261122-090000/docs/20261122-090140", team: "docs", state: model.StateMissing, action: model.ActionWait, reason: "registered but never started (10s ago)"},
		{id: "20261122-090000/lint/20261122-090135", role: "lint", team: "lint", state: r, reason: beating, pid: 16140, cfa: "EXECUTE"},
		{id: "20261122-090000/planning/20261122-090050", role: "planning", team: "planning", state: model.StateFinished, reason: "completed", pid: 16147, beat: 6 * s, cfa: "DONE"},
		{id: "20261122-090000/review/20261122-090120", role: "review", team: "review", state: r, flags: []model.Flag{model.FlagStalled, model.FlagBlocked}, action: model.ActionAnswer, reason: "waiting for a human: Ship the parser?", pid: 16164, beat: 7 * s, cfa: "EXECUTE", blocked: "Ship the parser?"},
		{id: "20261122-090000/testing/20261122-090110", role: "testing", team: "testing", state: r, flags: []model.Flag{model.FlagStalled, model.FlagKillCandidate}, action: model.ActionKill, reason: "alive but not beating for 11s", pid: 16146, beat: 11 * s, cfa: "EXECUTE"},
		{id: "20261122-091500", role: "lead", state: model.StateDead, action: model.ActionResume, reason: "pid 15994 gone; last beat 5s ago; retries 0/3", pid: 15994, beat: 5 * s, cfa: "EXECUTE"},
		{id: "20261122-091500/coding/20261122-091510", role: "coding", team: "coding", state: r, flags: []model.Flag{model.FlagOrphaned}, reason: "lead dead since 11:59:55", pid: 16087, cfa: "EXECUTE"},
		{id: "20261122-091500/testing/20261122-091515", role: "testing", team: "testing", state: model.StateDead, action: model.ActionWait, reason: "pid 16093 gone; resume goes on the lead", pid: 16093, beat: 3 * s, cfa: "EXECUTE"},
		{id: "20261122-093000", role: "lead", state: model.StateFinished, action: model.ActionMerge, reason: "completed; ready to merge", pid: 15993, beat: 7 * s, cfa: "DONE"},
		{id: "20261122-094500", role: "lead", state: model.StateFinished, reason: "withdrawn", pid: 15976, beat: 5 * s, cfa: "WITHDRAWN"},
		{id: "job-101--refactor-parser", role: "job-lead", state: r, reason: beating, pid: 15963, cfa: "EXECUTE"},
		{id: "job-101--refactor-parser/tasks/task-1--split-lexer", role: "worker", team: "parser", state: model.StateFinished, reason: "completed", pid: 16105, beat: 8 * s, cfa: "DONE"},
		{id: "job-101--refactor-parser/tasks/task-2--port-tests", role: "worker", team: "parser", state: r, reason: beating, pid: 16107, cfa: "EXECUTE"},
		{id: "job-101--refactor-parser/tasks/task-3--fix-flaky-test", role: "worker", team: "parser", state: model.StateDead, action: model.ActionWait, reason: "pid 16119 gone; its lead owns recovery", pid: 16119, beat: 7 * s, cfa: "EXECUTE"},
		{id: "job-102--migrate-schema", role: "job-lead", state: model.StateDead, action: model.ActionResume, reason: "pid 15991 gone; last beat 4s ago", pid: 15991, beat: 4 * s, cfa: "EXECUTE"},
		{id: "job-103--upgrade-deps", role: "job-lead", state: r, reason: beating, pid: 15970, cfa: "EXECUTE"},
		{id: "job-103--upgrade-deps/dispatch:20261122-100010", role: "coder", team: "demo", state: r, reason: "running; last activity 0s ago", pid: 16230},
		{id: "job-103--upgrade-deps/dispatch:20261122-100020", role: "tester", team: "demo", state: r, reason: "running; last activity 1s ago", pid: 16236, beat: s},
		{id: "job-103--upgrade-deps/dispatch:20261122-100030", role: "changelog", team: "demo", state: model.StateFinished, reason: "completed", pid: 16241, beat: 7 * s},
		// The demo's Claude Code home: the lead's session busy, its
		// in-process teammates on its pid (quiet: a teammate writes
		// nothing as it works), its job done, the session hard-killed.
		{id: claudeLead, role: "interactive", state: r, reason: "running; last update 0s ago", pid: 16300},
		{id: claudeLead + "/job-b7e2c9a1", role: "job", state: model.StateFinished, reason: "completed", beat: 7 * s},
		{id: claudeLead + "/planner", role: "Plan", team: "demo-team", state: r, flags: []model.Flag{model.FlagQuiet, model.FlagBlocked}, action: model.ActionAnswer, reason: "waiting for a human: plan approval: plan-planner@demo-team; started 9s ago", pid: 16300, beat: 9 * s, blocked: "plan approval: plan-planner@demo-team"},
		{id: claudeLead + "/researcher", role: "general-purpose", team: "demo-team", state: r, flags: []model.Flag{model.FlagQuiet}, reason: "running, quiet: started 9s ago; its age says nothing (pid 16300 alive)", pid: 16300, beat: 9 * s},
		{id: claudeLead + "/reviewer", role: "code-reviewer", team: "demo-team", state: model.StateFinished, reason: "completed", beat: 3 * s},
		{id: ".claude/dead0c1a-2026-4c1e-9f00-000000111500", role: "interactive", state: model.StateDead, action: model.ActionResume, reason: "pid 16310 gone; last update 7s ago; retries 0/3", pid: 16310, beat: 7 * s},
	}
}

// claudeLead is the demo's Claude Code lead session, as the view of its
// root names it.
const claudeLead = ".claude/c0de1ead-2026-4c1e-9f00-000000110000"

func demoSnapshot() *model.Snapshot {
	snap := buildSnapshot("/tmp/dispatchtop-demo/.sessions", clock12, demoSpecs())
	snap.Roots = append(snap.Roots, "/tmp/dispatchtop-demo/.teaparty/jobs", "/tmp/dispatchtop-demo/.claude")
	return snap
}
