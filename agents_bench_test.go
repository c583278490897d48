package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/claudecode"
	"github.com/dispatchtop/dispatchtop/sources/codex"
)

// The agents' stores of BenchmarkAgentsOnceJSON10k: a Claude Code home of
// 200 sessions (a few of them live processes), 50 teams of 3 members and
// 500 background jobs, and a Codex home of 1,000 threads.
const (
	benchClaudeSessions = 200
	benchClaudeLive     = 5
	benchClaudeTeams    = 50
	benchClaudeMembers  = 3
	benchClaudeJobs     = 500
	benchCodexThreads   = 1000
	// benchTranscriptLines is each session's transcript: there, as in a
	// used home, and never read by `--once`.
	benchTranscriptLines = 200
)

// BenchmarkAgentsOnceJSON10k is what the agents' stores (Claude Code's
// and Codex CLI's) add to `--once --json` over the 10,000-node tree of
// BenchmarkOnceJSON10k (SPEC §8 budget: 30 ms), measured as
// BenchmarkSourcesOnceJSON10k measures TeaParty's and middle's: "added"
// runs the tree alone and with the stores in each iteration, alternating,
// and reports the difference (added-ms/op, and the median of each
// iteration's, added-median-ms) and the CPU time it costs
// (added-cpu-ms/op); "stores" reads the two homes alone.
func BenchmarkAgentsOnceJSON10k(b *testing.B) {
	dir := b.TempDir()
	tree := filepath.Join(dir, "tree")
	if err := treegen.Generate(tree, 1000, 10, 3, time.Now()); err != nil {
		b.Fatal(err)
	}
	claudeHome := filepath.Join(dir, "home", ".claude")
	writeBenchClaude(b, claudeHome)
	codexHome := filepath.Join(dir, "home", ".codex")
	writeBenchCodex(b, codexHome)

	native := scanner.Options{Roots: []string{tree}, Thresholds: model.DefaultThresholds(), Probe: liveness.SystemProbe{}, Now: time.Now}
	withAgents := native
	withAgents.Roots = []string{tree, string(claudecode.Kind) + ":" + claudeHome, string(codex.Kind) + ":" + codexHome}
	withAgents.Sources = []sources.Source{claudecode.Source{}, codex.New()}
	storesOnly := withAgents
	storesOnly.Roots = withAgents.Roots[1:]
	storeNodes := benchClaudeSessions + benchClaudeTeams*benchClaudeMembers + benchClaudeJobs + benchCodexThreads

	benchStoresAdded(b, "agents", native, withAgents, storesOnly, 10000, storeNodes)
}

// BenchmarkAgentsNativeTwinOnceJSON10k is BenchmarkAgentsOnceJSON10k with
// the two homes' 1,850 nodes replaced by as many native ones (a second
// root of 185 sessions of 10): what any 1,850 nodes add to `--once --json`
// beside the 10,000-node tree, walked, built, classified and written,
// against which the agents' readers' own cost is told apart (SPEC §8, the
// agents' stores). Not in `make bench`: it measures the budget's floor,
// not the budget.
func BenchmarkAgentsNativeTwinOnceJSON10k(b *testing.B) {
	dir := b.TempDir()
	tree := filepath.Join(dir, "tree")
	now := time.Now()
	if err := treegen.Generate(tree, 1000, 10, 3, now); err != nil {
		b.Fatal(err)
	}
	const twinSessions, twinPerSession = 185, 10
	twin := filepath.Join(dir, "twin")
	if err := treegen.Generate(twin, twinSessions, twinPerSession, 3, now); err != nil {
		b.Fatal(err)
	}
	native := scanner.Options{Roots: []string{tree}, Thresholds: model.DefaultThresholds(), Probe: liveness.SystemProbe{}, Now: time.Now}
	withTwin := native
	withTwin.Roots = []string{tree, twin}
	twinOnly := native
	twinOnly.Roots = []string{twin}
	benchStoresAdded(b, "twin", native, withTwin, twinOnly, 10000, twinSessions*twinPerSession)
}

// writeBenchClaude writes a Claude Code home as Claude Code writes it:
// benchClaudeSessions session files, the first benchClaudeLive of live
// processes (their real procStart), the rest of pids that are gone (a
// hard kill leaves the file); each session's transcript under projects/;
// benchClaudeTeams teams, each led by a session, of in-process members,
// every fifth with a plan approval waiting in its lead's inbox; and
// benchClaudeJobs jobs spread over the sessions.
func writeBenchClaude(b *testing.B, home string) {
	b.Helper()
	now := time.Now()
	write := func(rel string, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		p := filepath.Join(home, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// Gone pids: of processes that ran and were reaped, as a crashed
	// session's are.
	gone := benchGonePIDs(b, benchClaudeSessions-benchClaudeLive)
	statuses := []string{"busy", "idle", "waiting", "idle"}
	sessionIDs := make([]string, benchClaudeSessions)
	for i := range benchClaudeSessions {
		var pid int
		var procStart string
		if i < benchClaudeLive {
			p := exec.Command("sleep", "600")
			if err := p.Start(); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { p.Process.Kill(); p.Wait() })
			pid, procStart = p.Process.Pid, benchProcStart(b, p.Process.Pid)
		} else {
			pid, procStart = gone[i-benchClaudeLive], benchProcStart(b, os.Getpid())
		}
		sid := fmt.Sprintf("%08x-7c1e-4b8a-9f00-%012d", i, i)
		sessionIDs[i] = sid
		status := statuses[i%len(statuses)]
		rec := map[string]any{"pid": pid, "sessionId": sid, "cwd": fmt.Sprintf("/home/u/project-%d", i%20), "procStart": procStart,
			"startedAt": now.Add(-time.Hour).UnixMilli(), "kind": "interactive", "entrypoint": "cli", "version": "2.1.278",
			"status": status, "updatedAt": now.UnixMilli(), "statusUpdatedAt": now.UnixMilli(), "name": fmt.Sprintf("session %d", i)}
		if status == "waiting" {
			rec["waitingFor"] = "approve Bash"
		}
		write("sessions/"+strconv.Itoa(pid)+".json", rec)
		var transcript strings.Builder
		for l := range benchTranscriptLines {
			fmt.Fprintf(&transcript, `{"type":"assistant","sessionId":%q,"uuid":"u-%d","message":{"role":"assistant","content":[{"type":"text","text":"step %d of the work"}]}}`+"\n", sid, l, l)
		}
		slug := fmt.Sprintf("-home-u-project-%d", i%20)
		p := filepath.Join(home, "projects", slug, sid+".jsonl")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(transcript.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for t := range benchClaudeTeams {
		team := fmt.Sprintf("team-%02d", t)
		lead := sessionIDs[t*benchClaudeSessions/benchClaudeTeams]
		members := []map[string]any{{"agentId": "team-lead@" + team, "name": "team-lead", "agentType": "team-lead", "joinedAt": now.UnixMilli()}}
		for m := range benchClaudeMembers {
			members = append(members, map[string]any{"agentId": fmt.Sprintf("m%d@%s", m, team), "name": fmt.Sprintf("member-%d", m),
				"agentType": "general-purpose", "model": "claude-opus-4", "joinedAt": now.UnixMilli(), "tmuxPaneId": "in-process",
				"backendType": "in-process", "isActive": m != benchClaudeMembers-1, "cwd": "/home/u/project"})
		}
		write("teams/"+team+"/config.json", map[string]any{"name": team, "leadSessionId": lead, "members": members})
		inbox := []map[string]any{{"from": "member-0", "text": "a plain message", "timestamp": now.UTC().Format(time.RFC3339)}}
		if t%5 == 0 {
			req, _ := json.Marshal(map[string]any{"type": "plan_approval_request", "requestId": "plan-" + team, "from": "member-0"})
			inbox = append(inbox, map[string]any{"from": "member-0", "text": string(req), "timestamp": now.UTC().Format(time.RFC3339)})
		}
		write("teams/"+team+"/inboxes/team-lead.json", inbox)
	}
	states := []string{"working", "done", "blocked", "stopped", "done"}
	for j := range benchClaudeJobs {
		state := states[j%len(states)]
		rec := map[string]any{"state": state, "sessionId": sessionIDs[j%benchClaudeSessions], "name": fmt.Sprintf("job %d", j),
			"intent": "run the suite", "cwd": "/home/u/project", "createdAt": now.Add(-time.Minute).UTC().Format(time.RFC3339Nano),
			"updatedAt": now.UTC().Format(time.RFC3339Nano), "cliVersion": "2.1.278"}
		if state == "blocked" {
			rec["detail"] = "needs approval to push"
		}
		write(fmt.Sprintf("jobs/job%04d/state.json", j), rec)
	}
}

// benchGonePIDs are n pids of processes that exited and were reaped.
func benchGonePIDs(b *testing.B, n int) []int {
	b.Helper()
	pids := make([]int, 0, n)
	for len(pids) < n {
		p := exec.Command("true")
		if err := p.Run(); err != nil {
			b.Fatal(err)
		}
		if syscall.Kill(p.Process.Pid, 0) == syscall.ESRCH {
			pids = append(pids, p.Process.Pid)
		}
	}
	return pids
}

// benchProcStart is pid's procStart as Claude Code writes it: on Linux
// the start ticks of /proc/<pid>/stat (field 22), elsewhere `ps`'s lstart.
func benchProcStart(b *testing.B, pid int) string {
	b.Helper()
	if runtime.GOOS == "linux" {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			b.Fatal(err)
		}
		rest := string(data[strings.LastIndexByte(string(data), ')')+2:])
		return strings.Fields(rest)[22-3]
	}
	out, err := exec.Command("ps", "-o", "lstart=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		b.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// writeBenchCodex writes a Codex home of benchCodexThreads threads, each
// with its rollout, every other one a child spawned by the first, a third
// archived; a `codex` (a copy of sleep so named, CODEX_HOME its home)
// owns the home and holds ten rollouts open, as Codex holds its live
// threads'.
func writeBenchCodex(b *testing.B, home string) {
	b.Helper()
	db := storefixtures.NewDB(b, filepath.Join(home, "state_5.sqlite"), storefixtures.CodexStateDDL)
	now := time.Now().Unix()
	rollouts := filepath.Join(home, "sessions", "2026", "05", "07")
	if err := os.MkdirAll(rollouts, 0o755); err != nil {
		b.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	var held []string
	for i := range benchCodexThreads {
		id := fmt.Sprintf("t-%04d", i)
		rollout := filepath.Join(rollouts, "rollout-2026-05-07T10-00-00-"+id+".jsonl")
		if err := os.WriteFile(rollout, []byte(`{"type":"session_meta"}`+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		if i%100 == 1 {
			held = append(held, rollout)
		}
		if _, err := tx.Exec(`INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title,
			sandbox_policy, approval_mode, archived) VALUES (?, ?, ?, ?, 'cli', 'openai', '/w', 't', 'read-only', 'on-request', ?)`,
			id, rollout, now-60, now, btoi(i%3 == 2)); err != nil {
			b.Fatal(err)
		}
		if i%2 == 1 {
			if _, err := tx.Exec(`INSERT INTO thread_spawn_edges (parent_thread_id, child_thread_id, status) VALUES ('t-0000', ?, 'open')`, id); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	benchCodexOwner(b, home, held)
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}

// benchCodexOwner starts a process named codex whose CODEX_HOME is home,
// holding the files held open (its stdin and extra files).
func benchCodexOwner(b *testing.B, home string, held []string) {
	b.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		b.Skip("no sleep")
	}
	bin := filepath.Join(b.TempDir(), "codex")
	data, err := os.ReadFile(sleep)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "600")
	cmd.Env = []string{"CODEX_HOME=" + home}
	for _, p := range held {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
}
