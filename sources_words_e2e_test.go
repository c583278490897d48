package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/sources/teaparty/teapartytest"
)

// SPEC §3, §10 (SignOfLife), docs/sources.md: what `--once` says of each
// system's records, over their real stores and real processes. A pid that
// a live process holds with another create time belongs to another process
// (`ps` shows one), never "gone", a TeaParty worker's between turns too.
// "beating" is said of a beat alone: a TeaParty job's lead beats through
// its `.heartbeat`; its workers' rows have their stream's activity,
// chatroom's records their start, opencode-teams' records their last
// update, and each is named so.
func TestOnceSaysEachRecordsOwnSignOfLife(t *testing.T) {
	now := time.Now()
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	// A live process whose record names an older process's create time,
	// plausible for this boot: between the boot and its process. Its pid
	// is reused.
	reusedPID, reusedCreated := testproc.Live(t)
	first := testproc.Earlier(t, reusedCreated, 3*time.Second)
	leadPID, leadStarted := testproc.Live(t)
	workerPID, workerStarted := testproc.Live(t)
	daemonPID, _ := testproc.Live(t)
	agentPID, agentCreated := testproc.Live(t)

	// TeaParty: a job whose lead beats, and three of its workers' rows.
	h := teaPartyHome{t: t, home: filepath.Join(t.TempDir(), "webapp", ".teaparty")}
	job := filepath.Join(h.home, "jobs", "job-1--words")
	lead := filepath.Join(job, ".heartbeat")
	writeAged(t, lead, fmt.Sprintf(`{"pid": %d, "parent_heartbeat": "", "role": "lead", "started": %f, "status": "running"}`, leadPID, leadStarted), 0)
	bus, db := h.bus("jobs/job-1--words/messages.db")
	const jobID = "job:webapp:1"
	worker := func(sid string, pid int, started float64, streamAge time.Duration) teapartytest.Conversation {
		dir := filepath.Join(job, "tasks", sid)
		writeAged(t, filepath.Join(dir, "worktree", ".keep"), "", 0)
		writeAged(t, filepath.Join(dir, "stream.jsonl"), "{}\n", streamAge)
		return teapartytest.Conversation{ID: "dispatch:" + sid, Type: "dispatch", State: "active", CreatedAt: epoch(ago(time.Hour)),
			Agent: "coding-agent", Parent: jobID, Slug: "webapp", Worktree: filepath.Join(dir, "worktree"), PID: pid, PIDStarted: started}
	}
	insertRows(t, db,
		teapartytest.Conversation{ID: jobID, Type: "job", State: "active", CreatedAt: epoch(ago(time.Hour)), Agent: "webapp-lead", Slug: "webapp"},
		worker("running", workerPID, workerStarted, 10*time.Second),
		worker("reused-fresh", reusedPID, first, 40*time.Second),
		worker("reused-stale", reusedPID, first, 10*time.Minute),
	)

	// chatroom: a daemon with its pid file and one agent.
	cr := &chatroomStore{t: t, dir: filepath.Join(t.TempDir(), "home", ".chatroom"), machines: map[string]map[string]string{}}
	const machine, room = "11111111-1111-4111-8111-111111111111", "jd7a3k9m2x4q8r1t5v6w0y2z3b4c5d6e"
	cr.machine("https://live.example", machine, daemonPID, 0)
	cr.writeMachines()
	state := cr.state(machine, ago(time.Minute), map[string]any{room + "/planner": chatroomEntry{agentPID, "claude", startedAt(agentCreated, 0)}})

	// opencode-teams: a team, an agent that updated its record just now,
	// one that has not for ten minutes.
	oc := opencodeStore{t: t, dir: filepath.Join(t.TempDir(), "acme-api", ".opencode", "opencode-teams")}
	team := oc.team("alpha", "leader")
	fresh := oc.agent("a0000000-0000-4000-8000-000000000003", "alpha", "active", ago(5*time.Second), nil)
	silent := oc.agent("a0000000-0000-4000-8000-000000000004", "alpha", "active", ago(10*time.Minute), nil)

	doc := onceDoc(t, h.home, "chatroom:"+cr.dir, "opencode-teams:"+oc.dir)
	in := func(id string) string { return bus + "#" + id }
	reused := fmt.Sprintf("pid %d now belongs to another process", reusedPID)
	rows := []struct {
		row, key  string
		state     string
		want      []string
		beats     bool   // the record beats: "beating" may be said
		forbidden string // never in its reason
	}{
		{"a TeaParty job's lead beats through its .heartbeat", lead, "running", []string{"beating; last beat"}, true, ""},
		{"a TeaParty worker's stream is its activity", in("dispatch:running"), "running", []string{"running; last activity 1"}, false, ""},
		{"a TeaParty worker whose pid a live process holds: between turns, another process's", in("dispatch:reused-fresh"), "running",
			[]string{reused + " between turns", "last activity 40s ago"}, false, fmt.Sprintf("pid %d gone", reusedPID)},
		{"a TeaParty worker whose pid a live process holds, its stream stale: dead, another process's", in("dispatch:reused-stale"), "dead",
			[]string{reused + "; last activity 10m"}, false, fmt.Sprintf("pid %d gone", reusedPID)},
		{"a chatroom daemon's pid file is its start", state, "running", []string{"running; started "}, false, ""},
		{"a chatroom agent's startedAt is its start", state + "#" + room + "/planner", "running", []string{"running; started "}, false, ""},
		{"an opencode-teams team config's mtime is its last update", team, "running", []string{"running; last update "}, false, ""},
		{"an opencode-teams agent's heartbeatTs is its last update", fresh, "running", []string{"running; last update 5s ago"}, false, ""},
		{"an opencode-teams agent silent ten minutes: quiet, its age says nothing", silent, "running",
			[]string{"running, quiet: last update 10m", "its age says nothing"}, false, ""},
	}
	for _, r := range rows {
		n := doc.byKey[r.key]
		if n == nil {
			t.Errorf("%s: no node %s", r.row, r.key)
			continue
		}
		if n.State != r.state {
			t.Errorf("%s: state %s, want %s (%s)", r.row, n.State, r.state, n.Reason)
		}
		for _, part := range r.want {
			if !strings.Contains(n.Reason, part) {
				t.Errorf("%s: reason %q lacks %q", r.row, n.Reason, part)
			}
		}
		if r.forbidden != "" && strings.Contains(n.Reason, r.forbidden) {
			t.Errorf("%s: reason %q says %q", r.row, n.Reason, r.forbidden)
		}
		if !r.beats {
			for _, w := range []string{"beating", "last beat", "no beat for"} {
				if strings.Contains(n.Reason, w) {
					t.Errorf("%s: reason %q says %q of a record that has no beat", r.row, n.Reason, w)
				}
			}
		}
	}
}
