// Command benchsources measures what following another system's store
// costs the dashboard (SPEC §8): the real binary in a real terminal (a
// detached tmux session), on a TeaParty home of jobs × workers (each job a
// lead beating through its `.heartbeat` and a bus of its dispatched
// workers), while writers put messages into random job buses at each rate
// asked, one connection per bus as TeaParty opens it (WAL, synchronous at
// SQLite's default); or (-source middle) on middle's database of
// workflows, a writer updating random rows' heartbeats. It prints, per rate, the dashboard's CPU (utime +
// stime from /proc, % of one core) over the window; then, with the last
// rate's writers still writing, how long a change takes to reach the
// screen: a worker's row withdrawn, until the header counts it finished.
// Linux only.
//
//	go run ./internal/benchsources -bin bin/dispatchtop -jobs 100 -workers 10 -rates 0,20,100 -seconds 20
//	go run ./internal/benchsources -bin bin/dispatchtop -source middle -workflows 1000 -rates 0,50 -seconds 20
//	go run ./internal/benchsources -bin bin/dispatchtop -source opencode-teams -workflows 1000 -rates 0,50 -seconds 20
//
// -cpuprofile FILE has the dashboard write its CPU profile there (through
// $DISPATCHTOP_CPUPROFILE), over the whole run: where the cost lies.
//
// Every pid the home names is this process's, alive for the whole run. The
// home is removed afterwards.
package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/benchrun"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources/middle/middletest"
	"github.com/dispatchtop/dispatchtop/sources/teaparty/teapartytest"
)

func main() {
	bin := flag.String("bin", "bin/dispatchtop", "the dispatchtop binary to measure")
	source := flag.String("source", "teaparty", "the store followed: teaparty, middle, opencode-teams or claude (rates: transcript lines a second)")
	workflows := flag.Int("workflows", 1000, "middle's workflows, or opencode-teams' agent files")
	jobs := flag.Int("jobs", 100, "TeaParty jobs in the home")
	workers := flag.Int("workers", 10, "dispatched workers per job")
	rates := flag.String("rates", "0,20,100", "messages a second written into random job buses, one window each")
	seconds := flag.Int("seconds", 20, "the length of each window")
	probes := flag.Int("probes", 20, "changes whose way to the screen is timed")
	profile := flag.String("cpuprofile", "", "write the dashboard's CPU profile, over the whole run, to this file")
	flag.Parse()
	if err := run(*bin, *source, *jobs, *workers, *workflows, *rates, *seconds, *probes, *profile); err != nil {
		fmt.Fprintln(os.Stderr, "benchsources:", err)
		os.Exit(1)
	}
}

// fixture is a store being written: its root, and how its writers write.
type fixture struct {
	root string
	// write writes rate changes a second until stop is closed; window
	// makes what it writes unique across windows.
	write func(rate, window int, stop <-chan struct{}) error
	// change makes the i-th node finished (i from 0), for the header's
	// count of finished nodes to say so.
	change func(i int) error
	close  func()
}

func run(bin, source string, jobs, workers, workflows int, rateList string, seconds, probes int, profile string) error {
	var rates []int
	for _, f := range strings.Split(rateList, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || r < 0 {
			return fmt.Errorf("-rates %q: %q is not a rate", rateList, f)
		}
		rates = append(rates, r)
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		return errors.New("tmux not found: the dashboard is measured in a real terminal, and tmux provides it")
	}
	r, err := benchrun.Prepare(bin, "benchsources-", 0, 1, 1)
	if err != nil {
		return err
	}
	defer r.Remove()
	t0 := time.Now()
	var fx fixture
	switch source {
	case "teaparty":
		fx, err = teapartyHome(filepath.Join(r.Dir, "webapp", ".teaparty"), jobs, workers)
		fmt.Printf("TeaParty home: %d jobs × %d workers (%d nodes)", jobs, workers, jobs*(workers+1))
	case "middle":
		fx, err = middleHome(filepath.Join(r.Dir, ".middle"), workflows)
		fmt.Printf("middle: %d workflows", workflows)
	case "opencode-teams":
		fx, err = opencodeTeamsStore(filepath.Join(r.Dir, ".opencode", "opencode-teams"), workflows)
		fmt.Printf("opencode-teams: %d agent files", workflows)
	case "claude": // claude.go
		fx, err = claudeHome(filepath.Join(r.Dir, ".claude"), probes)
		fmt.Printf("Claude Code: one session, %d teammates, its transcript appended to", probes)
	default:
		return fmt.Errorf("-source %q: teaparty, middle, opencode-teams or claude", source)
	}
	defer fx.close()
	if err != nil {
		return err
	}
	fmt.Printf(", made in %s\n", time.Since(t0).Round(time.Millisecond))
	home := fx.root

	socket := fmt.Sprintf("benchsources-%d", os.Getpid())
	tmux := func(args ...string) ([]byte, error) {
		return exec.Command("tmux", append([]string{"-L", socket, "-f", os.DevNull}, args...)...).Output()
	}
	env := []string{"-e", "TERM=xterm-256color", "-e", "XDG_CONFIG_HOME=" + filepath.Join(r.Dir, "config")}
	if profile != "" {
		abs, err := filepath.Abs(profile)
		if err != nil {
			return err
		}
		env = append(env, "-e", "DISPATCHTOP_CPUPROFILE="+abs)
	}
	if _, err := tmux(append(append([]string{"new-session", "-d", "-x", "160", "-y", "50"}, env...), "--", r.Bin, home)...); err != nil {
		return fmt.Errorf("tmux new-session: %w", err)
	}
	defer tmux("kill-server")
	out, err := tmux("list-panes", "-F", "#{pane_pid}")
	if err != nil {
		return fmt.Errorf("tmux list-panes: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return fmt.Errorf("tmux pane pid %q: %w", out, err)
	}
	time.Sleep(3 * time.Second) // the cold scan, and its collections

	for k, rate := range rates {
		stop := make(chan struct{})
		done := make(chan error, 1)
		go func() { done <- fx.write(rate, rate, stop) }()
		before, err := cpuTicks(pid)
		if err != nil {
			return err
		}
		start := time.Now()
		time.Sleep(time.Duration(seconds) * time.Second)
		after, err := cpuTicks(pid)
		took := time.Since(start)
		if err != nil {
			close(stop)
			<-done
			screen, _ := tmux("capture-pane", "-p")
			return fmt.Errorf("the dashboard (pid %d): %w; its screen:\n%s", pid, err, screen)
		}
		// USER_HZ is 100 on every Linux the binary runs on.
		cpu := float64(after-before) / 100 / took.Seconds() * 100
		fmt.Printf("%4d writes/s: dashboard CPU %5.1f %% of a core over %s\n", rate, cpu, took.Round(time.Second))
		var lat []time.Duration
		if k == len(rates)-1 {
			lat, err = toScreen(fx.change, probes, func() string {
				screen, _ := tmux("capture-pane", "-p")
				return string(screen)
			})
		}
		close(stop)
		if werr := <-done; werr != nil {
			return werr
		}
		if err != nil {
			return err
		}
		if len(lat) > 0 {
			slices.Sort(lat)
			fmt.Printf("a change to the screen, %d changes at %d writes/s: median %s, p99 %s, max %s\n", len(lat), rate,
				lat[len(lat)/2].Round(time.Millisecond), lat[(len(lat)*99+99)/100-1].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
		}
	}
	screen, _ := tmux("capture-pane", "-p")
	lines := strings.Split(string(screen), "\n")
	for _, l := range lines[:min(2, len(lines))] {
		fmt.Println("  " + strings.TrimSpace(l))
	}
	if profile != "" {
		// q ends the dashboard, which writes its profile as it exits.
		tmux("send-keys", "q")
		for t0 := time.Now(); time.Since(t0) < 10*time.Second; time.Sleep(50 * time.Millisecond) {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
				break
			}
		}
		fmt.Println("the dashboard's CPU profile:", profile)
	}
	return nil
}

// teapartyHome writes a TeaParty home of jobs × workers (see makeHome);
// its writers put messages into random job buses, its changes withdraw a
// worker of job i.
func teapartyHome(home string, jobs, workers int) (fixture, error) {
	buses, err := makeHome(home, jobs, workers)
	fx := fixture{root: home, close: func() {
		for _, db := range buses {
			db.Close()
		}
	}}
	fx.write = func(rate, window int, stop <-chan struct{}) error { return write(buses, workers, rate, window, stop) }
	fx.change = func(i int) error {
		if i >= len(buses) {
			return fmt.Errorf("change %d: only %d jobs", i, len(buses))
		}
		return teapartytest.SetState(buses[i], fmt.Sprintf("dispatch:w%06d%02d", i, workers-1), "withdrawn")
	}
	return fx, err
}

// middleHome writes middle's database of n running workflows, opened as
// middle opens it (WAL, foreign keys); its writer stamps random
// workflows' heartbeats, its changes complete workflow i.
func middleHome(home string, n int) (fixture, error) {
	db, err := middletest.Open(filepath.Join(home, "db.sqlite3"), append(slices.Clone(middletest.Migrations), `PRAGMA foreign_keys = ON`))
	fx := fixture{root: home, close: func() {}}
	if err != nil {
		return fx, err
	}
	fx.close = func() { db.Close() }
	now := time.Now().UnixMilli()
	for i := range n {
		if _, err := db.Exec(`INSERT INTO workflows (id, kind, repo, adapter, state, created_at, updated_at, last_heartbeat)
			VALUES (?, 'implementation', 'acme/api', 'claude', 'running', ?, ?, ?)`, fmt.Sprintf("wf-%06d", i), now, now, now); err != nil {
			return fx, fmt.Errorf("middle workflow %d: %w", i, err)
		}
	}
	fx.write = func(rate, _ int, stop <-chan struct{}) error {
		return every(rate, stop, func(int) error {
			now := time.Now().UnixMilli()
			_, err := db.Exec(`UPDATE workflows SET last_heartbeat = ?, updated_at = ? WHERE id = ?`, now, now, fmt.Sprintf("wf-%06d", rand.IntN(n)))
			return err
		})
	}
	fx.change = func(i int) error {
		_, err := db.Exec(`UPDATE workflows SET state = 'completed', updated_at = ? WHERE id = ?`, time.Now().UnixMilli(), fmt.Sprintf("wf-%06d", i))
		return err
	}
	return fx, nil
}

// opencodeTeamsStore writes an opencode-teams store of n agent files, in
// teams of 100 (each a config naming its members), every agent active with
// no pane (judged by its record); its writer rewrites random agents' files
// with a new heartbeatTs, as updateHeartbeat does (writeAtomicJSON: a
// temp file renamed over), its changes terminate agent i.
func opencodeTeamsStore(store string, n int) (fixture, error) {
	fx := fixture{root: store, close: func() {}}
	agents := filepath.Join(store, "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		return fx, err
	}
	now := time.Now().UTC()
	agent := func(i int, status string, beat time.Time) error {
		id := fmt.Sprintf("a%06d", i)
		b, err := json.MarshalIndent(map[string]any{
			"id": id, "name": "agent-" + id, "teamName": fmt.Sprintf("team-%03d", i/100), "role": "worker",
			"model": "bench", "sessionId": "ses_" + id, "serverPort": 28799, "cwd": store, "color": "#45B7D1", "status": status,
			"isActive": status == "active", "createdAt": now.Format(time.RFC3339Nano), "heartbeatTs": beat.Format(time.RFC3339Nano),
			"updatedAt": beat.Format(time.RFC3339Nano), "consecutiveMisses": 0, "sessionRotationCount": 0,
		}, "", "  ")
		if err != nil {
			return err
		}
		tmp := filepath.Join(agents, "."+id+".json.tmp")
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, filepath.Join(agents, id+".json"))
	}
	for t := 0; t*100 < n; t++ {
		name := fmt.Sprintf("team-%03d", t)
		members := []map[string]any{{"agentId": "leader", "agentName": "Leader", "agentType": "leader", "joinedAt": now.Format(time.RFC3339Nano)}}
		for i := t * 100; i < min(n, (t+1)*100); i++ {
			members = append(members, map[string]any{"agentId": fmt.Sprintf("a%06d", i), "agentName": fmt.Sprintf("agent-a%06d", i),
				"agentType": "worker", "joinedAt": now.Format(time.RFC3339Nano)})
		}
		b, err := json.MarshalIndent(map[string]any{"name": name, "created": now.Format(time.RFC3339Nano), "leader": "leader",
			"members": members, "dispatchRules": []any{}, "dispatchLog": []any{}}, "", "  ")
		if err != nil {
			return fx, err
		}
		if err := os.MkdirAll(filepath.Join(store, "teams", name), 0o755); err != nil {
			return fx, err
		}
		if err := os.WriteFile(filepath.Join(store, "teams", name, "config.json"), b, 0o644); err != nil {
			return fx, err
		}
	}
	for i := range n {
		if err := agent(i, "active", now); err != nil {
			return fx, err
		}
	}
	fx.write = func(rate, _ int, stop <-chan struct{}) error {
		return every(rate, stop, func(int) error {
			// Past the probes' agents, which the changes terminate.
			return agent(100+rand.IntN(n-100), "active", time.Now().UTC())
		})
	}
	fx.change = func(i int) error { return agent(i, "terminated", time.Now().UTC()) }
	return fx, nil
}

// every calls f rate times a second until stop is closed.
func every(rate int, stop <-chan struct{}, f func(n int) error) error {
	if rate == 0 {
		<-stop
		return nil
	}
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-stop:
			return nil
		case <-tick.C:
		}
		if err := f(n); err != nil {
			return err
		}
	}
}

// makeHome writes a TeaParty home of jobs × workers: per job a lead's
// `.heartbeat` (the native protocol) and a bus holding the job's row and
// its workers' rows, each with a worktree. It returns each bus's writer,
// opened as TeaParty opens it.
func makeHome(home string, jobs, workers int) ([]*sql.DB, error) {
	pid := os.Getpid()
	started, err := protocol.ProcessStarted(pid)
	if err != nil {
		return nil, fmt.Errorf("this process's create time: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(home, "management"), 0o755); err != nil {
		return nil, err
	}
	mgmt, err := teapartytest.Open(filepath.Join(home, "management", "messages.db"), teapartytest.DDL)
	if err != nil {
		return nil, err
	}
	mgmt.Close()
	now := float64(time.Now().UnixNano()) / 1e9
	var buses []*sql.DB
	for j := range jobs {
		dir := filepath.Join(home, "jobs", fmt.Sprintf("job-20260507-%06d--bench", j))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return buses, err
		}
		hb, _ := json.Marshal(map[string]any{"pid": pid, "started": started, "status": "running", "role": "lead", "parent_heartbeat": ""})
		if err := os.WriteFile(filepath.Join(dir, protocol.HeartbeatFile), hb, 0o644); err != nil {
			return buses, err
		}
		bus := filepath.Join(dir, "messages.db")
		db, err := teapartytest.Open(bus, teapartytest.DDL)
		if err != nil {
			return buses, err
		}
		jobID := fmt.Sprintf("job:webapp:20260507-%06d", j)
		rows := []teapartytest.Conversation{{ID: jobID, Type: "job", CreatedAt: now, Agent: "webapp-lead"}}
		for w := range workers {
			sid := fmt.Sprintf("w%06d%02d", j, w)
			tree := filepath.Join(dir, "tasks", sid, "worktree")
			if err := os.MkdirAll(tree, 0o755); err != nil {
				return buses, err
			}
			rows = append(rows, teapartytest.Conversation{ID: "dispatch:" + sid, Type: "dispatch", CreatedAt: now, Agent: "coding-agent",
				Parent: jobID, Worktree: tree, PID: pid, PIDStarted: started})
		}
		if err := teapartytest.Insert(db, rows...); err != nil {
			db.Close()
			return buses, err
		}
		db.Close()
		// The writer, as TeaParty opens a bus: Python's sqlite3 (a 5 s busy
		// timeout) and `PRAGMA journal_mode=WAL`, synchronous its default.
		w, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: bus, RawQuery: "_pragma=busy_timeout(5000)"}).String())
		if err != nil {
			return buses, err
		}
		w.SetMaxOpenConns(1)
		buses = append(buses, w)
		if _, err := w.Exec(`PRAGMA journal_mode=WAL`); err != nil {
			return buses, fmt.Errorf("%s: %w", bus, err)
		}
	}
	return buses, nil
}

// write puts rate messages a second into random job buses, each from one
// of the job's workers, until stop is closed; window makes the messages'
// ids unique across windows.
func write(buses []*sql.DB, workers, rate, window int, stop <-chan struct{}) error {
	return every(rate, stop, func(n int) error {
		j := rand.IntN(len(buses))
		sid := fmt.Sprintf("w%06d%02d", j, rand.IntN(workers))
		return teapartytest.InsertMessage(buses[j], fmt.Sprintf("m%d-%d-%d", os.Getpid(), window, n), "dispatch:"+sid, "coding-agent",
			"working", float64(time.Now().UnixNano())/1e9)
	})
}

// toScreen makes n nodes finished, one at a time, and times each from its
// commit to the header counting one more finished (the screen read every
// 5 ms).
func toScreen(change func(i int) error, n int, screen func() string) ([]time.Duration, error) {
	var out []time.Duration
	for i := range n {
		want := fmt.Sprintf("✔ %d finished", i+1)
		if err := change(i); err != nil {
			return out, err
		}
		t0 := time.Now()
		for !strings.Contains(screen(), want) {
			if time.Since(t0) > 10*time.Second {
				return out, fmt.Errorf("change %d: the screen does not say %q after 10 s:\n%s", i, want, screen())
			}
			time.Sleep(5 * time.Millisecond)
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

// cpuTicks is the CPU time pid has used, user and system, in clock ticks.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command's closing parenthesis; utime and stime
	// are the 14th and 15th of the line.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return u + s, nil
}
