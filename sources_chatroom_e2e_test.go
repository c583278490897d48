package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/model"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chatroomStore is a ~/.chatroom as the CLI and its daemons write it.
type chatroomStore struct {
	t        *testing.T
	dir      string
	machines map[string]map[string]string // machine.json's machines: URL → machineId, hostname
}

// machine registers machineId for url in machine.json (written by
// writeMachines) and writes the daemon's pid file when pid is not 0, age
// ago.
func (s *chatroomStore) machine(url, id string, pid int, age time.Duration) {
	s.t.Helper()
	s.machines[url] = map[string]string{"machineId": id, "hostname": "devbox"}
	if pid != 0 {
		writeAged(s.t, filepath.Join(s.dir, chatroomPIDFile(url)), strconv.Itoa(pid), age)
	}
}

// chatroomPIDFile is daemon-<sha256(url)[:8]>.pid (pid.ts), written
// decimal, no newline.
func chatroomPIDFile(url string) string {
	sum := sha256.Sum256([]byte(url))
	return "daemon-" + hex.EncodeToString(sum[:])[:8] + ".pid"
}

func (s *chatroomStore) writeMachines() {
	s.t.Helper()
	b, err := json.Marshal(map[string]any{"version": "1", "machines": s.machines})
	if err != nil {
		s.t.Fatal(err)
	}
	writeAged(s.t, filepath.Join(s.dir, "machine.json"), string(b), 0)
}

// chatroomEntry is a DaemonAgentEntry.
type chatroomEntry struct {
	PID       int    `json:"pid"`
	Harness   string `json:"harness"`
	StartedAt string `json:"startedAt"`
}

// state writes machines/state/<id>.json as saveDaemonState does (a temp
// file renamed over it) and returns its path.
func (s *chatroomStore) state(id string, updated time.Time, agents map[string]any) string {
	s.t.Helper()
	b, err := json.MarshalIndent(map[string]any{"version": "1", "machineId": id, "updatedAt": isoMillis(updated), "agents": agents}, "", "  ")
	if err != nil {
		s.t.Fatal(err)
	}
	p := filepath.Join(s.dir, "machines", "state", id+".json")
	writeAged(s.t, p+".tmp", string(b), 0)
	if err := os.Rename(p+".tmp", p); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// startedAt is a process's create time as the daemon stamps startedAt,
// late by lag.
func startedAt(created float64, lag time.Duration) string {
	return isoMillis(time.Unix(0, int64(created*1e9)).Add(lag))
}

// docs/sources.md, chatroom: every row of the mapping as `--once --json`
// shows it, over a store of several machines (machine.json, their pid
// files, their state files) whose agents are real processes.
func TestOnceJSONShowsEveryChatroomMappingRow(t *testing.T) {
	now := time.Now()
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	// The agent stamped late: its startedAt is 100 s after its process
	// was created (opencode-sdk's worst is ~110 s), beyond the start
	// tolerance, within StartSlack. Its beat must be past the exit grace
	// for its pid to be asked at all, so the process is one that is
	// older than the test: init's.
	const latePID = 1
	lateCreated := testproc.Started(t, latePID)
	if boot := testproc.Boot(t); lateCreated < model.EpochSeconds(boot) {
		// Only a simulated boot (liveness.simulatedBoot) comes after init.
		t.Skipf("init started before the boot (%v): no host is like this one", boot)
	}
	// Stamped late by up to 100 s, the stamp past the exit grace: on a
	// host booted a minute ago, less.
	lateLag := min(100*time.Second, time.Since(time.Unix(0, int64(lateCreated*1e9)))-10*time.Second).Truncate(time.Second)
	if lateLag <= 2*model.DefaultThresholds().StartTolerance {
		t.Fatalf("init started %s ago: too soon for a late stamp", time.Since(time.Unix(0, int64(lateCreated*1e9))))
	}
	daemonPID, _ := testproc.Live(t)
	agentPID, agentCreated := testproc.Live(t)
	reusedPID, reusedCreated := testproc.Live(t)
	twinPID, twinCreated := testproc.Live(t)
	orphanPID, orphanCreated := testproc.Live(t)
	gone := testproc.Gone(t)

	s := &chatroomStore{t: t, dir: filepath.Join(t.TempDir(), "home", ".chatroom"), machines: map[string]map[string]string{}}
	const (
		live     = "11111111-1111-4111-8111-111111111111"
		crashed  = "22222222-2222-4222-8222-222222222222"
		recent   = "33333333-3333-4333-8333-333333333333"
		stopped  = "44444444-4444-4444-8444-444444444444"
		alone    = "55555555-5555-4555-8555-555555555555"
		empty    = "66666666-6666-4666-8666-666666666666"
		future   = "77777777-7777-4777-8777-777777777777"
		garbled  = "88888888-8888-4888-8888-888888888888"
		goneDmn  = "99999999-9999-4999-8999-999999999999"
		chatroom = "jd7a3k9m2x4q8r1t5v6w0y2z3b4c5d6e"
	)
	s.machine("https://live.example", live, daemonPID, 0)
	s.machine("https://crashed.example", crashed, 0, 0)
	s.machine("https://recent.example", recent, 0, 0)
	s.machine("https://stopped.example", stopped, 0, 0)
	s.machine("https://alone.example", alone, daemonPID, 0)
	s.machine("https://empty.example", empty, daemonPID, 0)
	s.machine("https://future.example", future, daemonPID, 0)
	s.machine("https://garbled.example", garbled, daemonPID, 0)
	s.machine("https://gone.example", goneDmn, gone, time.Minute)
	s.writeMachines()

	// Its age is its start, 100 s after pid 1's, so on a machine booted
	// minutes ago it is younger than chatroom's beat (5 min) and not yet
	// quiet; near that edge the test waits until it is clearly past it.
	// Past chatroom's stale (30 min) the reason adds that the age says
	// nothing and what the pid said.
	lateStart := time.Unix(0, int64(lateCreated*1e9)).Add(lateLag)
	if age := time.Since(lateStart); age > 5*time.Minute-30*time.Second && age < 5*time.Minute+30*time.Second {
		time.Sleep(5*time.Minute + 30*time.Second - age)
	}
	lateFlags, lateReason := []string(nil), []string{"started "}
	if time.Since(lateStart) > 5*time.Minute {
		lateFlags, lateReason = []string{"quiet"}, []string{"running, quiet: started "}
	}
	if time.Since(lateStart) > 30*time.Minute+time.Minute {
		lateReason = append(lateReason, "its age says nothing (pid 1 alive)")
	}
	// The reused entry's start lies between the boot and its pid's
	// process: a record of this boot whose pid another process took, on a
	// machine booted a minute ago as on one up for weeks.
	reusedLag := time.Duration((reusedCreated - testproc.Earlier(t, reusedCreated, 5*time.Second)) * 1e9)
	liveState := s.state(live, ago(time.Minute), map[string]any{
		chatroom + "/planner": chatroomEntry{agentPID, "claude", startedAt(agentCreated, 0)},
		chatroom + "/late":    chatroomEntry{latePID, "opencode-sdk", startedAt(lateCreated, lateLag)},
		chatroom + "/builder": chatroomEntry{gone, "opencode", isoMillis(ago(time.Minute))},
		chatroom + "/reused":  chatroomEntry{reusedPID, "claude-sdk", startedAt(reusedCreated, -reusedLag)},
		chatroom + "/twin-a":  chatroomEntry{twinPID, "claude", startedAt(twinCreated, 0)},
		chatroom + "/twin-b":  chatroomEntry{twinPID, "claude", startedAt(twinCreated, 0)},
		"no-role-in-this-key": chatroomEntry{reusedPID, "claude", startedAt(agentCreated, 0)},
		chatroom + "/bad-pid": chatroomEntry{-1, "claude", startedAt(agentCreated, 0)},
	})
	crashedState := s.state(crashed, ago(40*time.Minute), map[string]any{
		chatroom + "/solo": chatroomEntry{orphanPID, "claude", startedAt(orphanCreated, 0)}})
	recentState := s.state(recent, ago(time.Minute), map[string]any{
		chatroom + "/solo": chatroomEntry{orphanPID, "claude", startedAt(orphanCreated, 0)}})
	stoppedState := s.state(stopped, ago(time.Hour), map[string]any{})
	aloneState := filepath.Join(s.dir, "machines", "state", alone+".json") // never written
	emptyState := s.state(empty, ago(time.Minute), map[string]any{})
	futureState := filepath.Join(s.dir, "machines", "state", future+".json")
	writeAged(t, futureState, `{"version": "2", "machineId": "`+future+`", "agents": {}}`, 0)
	garbledState := filepath.Join(s.dir, "machines", "state", garbled+".json")
	writeAged(t, garbledState, `{"version": "1", "agents": {`, 0)
	goneState := s.state(goneDmn, ago(time.Minute), map[string]any{
		chatroom + "/solo": chatroomEntry{orphanPID, "claude", startedAt(orphanCreated, 0)}})

	doc := onceDoc(t, "chatroom:"+s.dir)

	problems := map[string]string{}
	for _, p := range doc.Problems {
		problems[p.Path] = p.Error
	}
	for path, part := range map[string]string{
		liveState + "#" + chatroom + "/twin-a":  fmt.Sprintf("pid %d is also recorded", twinPID),
		liveState + "#" + chatroom + "/twin-b":  fmt.Sprintf("pid %d is also recorded", twinPID),
		liveState + "#no-role-in-this-key":      "skipped, as the daemon skips it",
		liveState + "#" + chatroom + "/bad-pid": "pid -1 is not a process id",
		futureState:                             `version "2"`,
		garbledState:                            garbledState,
	} {
		if msg, ok := problems[path]; !ok || !strings.Contains(msg, part) {
			t.Errorf("problem of %s = %q, want one saying %q", path, msg, part)
		}
		delete(problems, path)
	}
	if len(problems) > 0 {
		t.Errorf("other problems: %v", problems)
	}

	daemonFields := []string{"machine", "hostname", "backend", "pid file", "state updated", "agents"}
	agentFields := []string{"chatroom", "role", "harness", "pid is", "started at", "machine"}
	agent := func(state, role string) string { return state + "#" + chatroom + "/" + role }
	rows := []mappingRow{
		{row: "pid file present: the daemon runs while its pid lives", key: liveState,
			state: "running", action: "none", status: "running", pid: daemonPID, fields: daemonFields,
			values: map[string]string{"machine": live, "backend": "https://live.example", "agents": "6"}},
		{row: "an entry whose pid lives as the same process: running", key: agent(liveState, "planner"),
			state: "running", action: "none", status: "running", pid: agentPID, parent: liveState, fields: agentFields,
			values: map[string]string{"chatroom": chatroom, "role": "planner", "harness": "claude", "pid is": "the agent's CLI process", "machine": live}},
		{row: "an entry stamped after its process was created, within StartSlack: the same process", key: agent(liveState, "late"),
			state: "running", flags: lateFlags, action: "none", reason: lateReason,
			status: "running", pid: latePID, parent: liveState, fields: agentFields,
			values: map[string]string{"pid is": "the agent's own `opencode serve`"}},
		{row: "an entry whose pid is gone: dead", key: agent(liveState, "builder"),
			state: "dead", action: "wait", reason: []string{fmt.Sprintf("pid %d gone", gone)}, status: "running", pid: gone,
			parent: liveState, fields: agentFields},
		{row: "an entry whose pid is another process now: dead", key: agent(liveState, "reused"),
			state: "dead", action: "wait", reason: []string{fmt.Sprintf("pid %d now belongs to another process", reusedPID)}, status: "running", pid: reusedPID,
			parent: liveState, fields: agentFields, values: map[string]string{"pid is": "a keeper process: the session runs inside the daemon"}},
		{row: "two entries with one pid: both conflict", key: agent(liveState, "twin-a"),
			state: "running", flags: []string{"conflict"}, action: "none", status: "running", pid: twinPID, parent: liveState, fields: agentFields},
		{row: "two entries with one pid: both conflict (the other)", key: agent(liveState, "twin-b"),
			state: "running", flags: []string{"conflict"}, action: "none", status: "running", pid: twinPID, parent: liveState, fields: agentFields},
		{row: "a key without a role: no node", key: liveState + "#no-role-in-this-key", absent: true},
		{row: "an entry that fails the schema: no node", key: agent(liveState, "bad-pid"), absent: true},
		{row: "no pid file, entries remain (the daemon crashed): dead", key: crashedState,
			state: "dead", action: "surface", reason: []string{"cannot be resumed here", "pid file " + chatroomPIDFile("https://crashed.example") + " gone: chatroom reads its daemon as not running"},
			status: "running", pid: -1, fields: daemonFields,
			values: map[string]string{"pid file": "none", "state updated": isoMillis(ago(40 * time.Minute))}},
		{row: "an entry whose daemon is dead: orphaned", key: agent(crashedState, "solo"),
			state: "running", flags: []string{"orphaned"}, action: "none", status: "running", pid: orphanPID, parent: crashedState, fields: agentFields},
		{row: "no pid file, entries remain, the last state write fresh: dead all the same, the pid file decides", key: recentState,
			state: "dead", action: "surface", reason: []string{"pid file " + chatroomPIDFile("https://recent.example") + " gone"},
			status: "running", pid: -1, fields: daemonFields, values: map[string]string{"pid file": "none"}},
		{row: "an entry whose daemon crashed a minute ago: orphaned", key: agent(recentState, "solo"),
			state: "running", flags: []string{"orphaned"}, action: "none", status: "running", pid: orphanPID, parent: recentState, fields: agentFields},
		{row: "no pid file and no entries: no node", key: stoppedState, absent: true},
		{row: "pid file, no state file: the daemon alone", key: aloneState,
			state: "running", action: "none", status: "running", pid: daemonPID,
			fields: []string{"machine", "hostname", "backend", "pid file", "agents"}, values: map[string]string{"agents": "0"}},
		{row: "pid file, empty agents: the daemon alone", key: emptyState,
			state: "running", action: "none", status: "running", pid: daemonPID, fields: daemonFields, values: map[string]string{"agents": "0"}},
		{row: "a state file of an unknown version: the daemon node only", key: futureState,
			state: "running", action: "none", status: "running", pid: daemonPID, fields: []string{"machine", "hostname", "backend", "pid file", "agents"}},
		{row: "a state file that cannot be read: the daemon node only", key: garbledState,
			state: "running", action: "none", status: "running", pid: daemonPID, fields: []string{"machine", "hostname", "backend", "pid file", "agents"}},
		{row: "a pid file whose pid is gone: the daemon is dead", key: goneState,
			state: "dead", action: "surface", reason: []string{"cannot be resumed here", fmt.Sprintf("pid %d gone", gone)}, status: "running", pid: gone, fields: daemonFields},
		{row: "an entry under a dead daemon: orphaned", key: agent(goneState, "solo"),
			state: "running", flags: []string{"orphaned"}, action: "none", status: "running", pid: orphanPID, parent: goneState, fields: agentFields},
	}
	for _, r := range rows {
		r.check(t, doc)
	}

	// A ROOT naming the state files' dir, without a KIND, is detected as
	// the store that holds it: the same nodes, the daemon still judged by
	// the pid files beside it.
	fromState := onceDoc(t, filepath.Join(s.dir, "machines", "state"))
	for _, key := range []string{liveState, crashedState, agent(crashedState, "solo")} {
		want, got := doc.byKey[key], fromState.byKey[key]
		if got == nil || want == nil || got.State != want.State || got.Source != "chatroom" {
			t.Errorf("ROOT machines/state: node %s is %+v, want it as the store's root shows it (%+v)", key, got, want)
		}
	}

	// The entry is deleted (the agent stopped): its node disappears, never
	// finished.
	s.state(live, now, map[string]any{chatroom + "/planner": chatroomEntry{agentPID, "claude", startedAt(agentCreated, 0)}})
	after := onceDoc(t, "chatroom:"+s.dir)
	mappingRow{row: "the entry is deleted: the node disappears", key: agent(liveState, "builder"), absent: true}.check(t, after)
	if after.byKey[agent(liveState, "planner")] == nil {
		t.Errorf("the entry left in place lost its node")
	}
}
