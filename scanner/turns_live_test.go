package scanner

import (
	"bufio"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/teaparty"
)

// turnJob is a TeaParty job whose worker runs a pid per turn: its bus row
// names the turn's pid, and its stream is its sign of life.
type turnJob struct {
	home, bus, stream string
	db                *sql.DB
}

const turnWorker = "dispatch:turns01"

func newTurnJob(t *testing.T) *turnJob {
	t.Helper()
	home := filepath.Join(t.TempDir(), "webapp", ".teaparty")
	job := filepath.Join(home, "jobs", "job-20260507-101500--turns")
	j := &turnJob{home: home, bus: filepath.Join(job, "messages.db"), stream: filepath.Join(job, "tasks", "turns01", "stream.jsonl")}
	if err := os.MkdirAll(filepath.Join(job, "tasks", "turns01", "worktree"), 0o755); err != nil {
		t.Fatal(err)
	}
	j.db = storefixtures.NewDB(t, j.bus, storefixtures.TeaPartyBusDDL)
	now := float64(time.Now().UnixNano()) / 1e9
	for _, q := range []string{
		fmt.Sprintf(`INSERT INTO conversations (id, type, state, created_at, agent_name) VALUES ('job:webapp:1', 'job', 'active', %f, 'webapp-lead')`, now),
		fmt.Sprintf(`INSERT INTO conversations (id, type, state, created_at, agent_name, parent_conversation_id, worktree_path)
			VALUES ('%s', 'dispatch', 'active', %f, 'coding-agent', 'job:webapp:1', '%s')`, turnWorker, now, filepath.Join(job, "tasks", "turns01", "worktree")),
	} {
		if _, err := j.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return j
}

// startTurn stamps the turn's pid and create time in the row, as
// TeaParty's launcher does, and writes the stream's first event.
func (j *turnJob) startTurn(t *testing.T, pid int) {
	t.Helper()
	started, err := protocol.ProcessStarted(pid)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.db.Exec(`UPDATE conversations SET pid = ?, pid_started = ? WHERE id = ?`, pid, started, turnWorker); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(j.stream, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "{\"type\": \"system\", \"pid\": %d}\n", pid); err != nil {
		t.Fatal(err)
	}
}

// owner starts a shell that runs the turns of script as its children and
// prints each turn's pid; next reads the next one.
func startOwner(t *testing.T, script string) (owner *exec.Cmd, next func() int) {
	t.Helper()
	owner = exec.Command("sh", "-c", script)
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = owner.Process.Kill(); _ = owner.Wait() })
	lines := bufio.NewReader(out)
	return owner, func() int {
		t.Helper()
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("the owner printed no turn pid: %v", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(line))
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
}

// turnMonitor follows every update of the live engine for the worker: the
// last node, and every moment it was dead.
type turnMonitor struct {
	mu   sync.Mutex
	last *model.Node
	dead []string
	at   time.Time // when the worker was first seen dead
}

func monitorWorker(t *testing.T, j *turnJob) *turnMonitor {
	t.Helper()
	w, err := NewWatcher(Options{Roots: []string{string(sources.TeaParty) + ":" + j.home}, Thresholds: model.DefaultThresholds(),
		Sources: []sources.Source{teaparty.New()}}, WatchOptions{FallbackPoll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	m := &turnMonitor{}
	key := j.bus + "#" + turnWorker
	observe := func(s *model.Snapshot, trans []model.Transition) {
		var n *model.Node
		for _, c := range s.Nodes() {
			if c.HeartbeatPath == key {
				n = c
			}
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if n == nil {
			return
		}
		for _, tr := range trans {
			if tr.ID == n.ID && tr.To == model.StateDead {
				m.dead = append(m.dead, "transition: "+tr.Reason)
			}
		}
		if n.State == model.StateDead {
			m.dead = append(m.dead, n.Reason)
			if m.at.IsZero() {
				m.at = time.Now()
			}
		}
		m.last = n
	}
	observe(w.Snapshot(), nil)
	runWatcher(t, w)
	go func() {
		for u := range w.Updates() {
			observe(u.Snapshot, u.Transitions)
		}
	}()
	return m
}

// until waits for the worker to satisfy cond; hang guards it.
func (m *turnMonitor) until(t *testing.T, what string, guard time.Duration, cond func(*model.Node) bool) {
	t.Helper()
	for hang := time.Now().Add(guard); ; time.Sleep(20 * time.Millisecond) {
		m.mu.Lock()
		n := m.last
		ok := n != nil && cond(n)
		m.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(hang) {
			if n == nil {
				t.Fatalf("%s: no worker node within %s", what, guard)
			}
			t.Fatalf("%s: not within %s; the worker is %s %v (%s), owner %+v", what, guard, n.State, n.Flags, n.Reason, n.RecordedOwner())
		}
	}
}

func (m *turnMonitor) deadReadings() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.dead...)
}

// SPEC §3 idle, §10 PIDPerTurn, with real processes and real time: a
// TeaParty worker's turn (the pid its row records) exits, its owner (the
// turn's parent) lives on, and 10 s later a new turn of the same owner
// runs. The live engine never reads the worker dead meanwhile: it is
// running and idle between the turns, running again with the new pid.
func TestLivePerTurnPidReplacedAfterTenSecondsIsNeverDead(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 10 s between two turns")
	}
	j := newTurnJob(t)
	owner, next := startOwner(t, "sleep 2 & echo $!; wait; sleep 10; sleep 300 & echo $!; wait")
	first := next()
	j.startTurn(t, first)
	m := monitorWorker(t, j)
	m.until(t, "the first turn running, its owner recorded", 5*time.Second, func(n *model.Node) bool {
		return n.State == model.StateRunning && n.PID() == first && n.RecordedOwner().PID == owner.Process.Pid
	})
	m.until(t, "idle between the turns", 15*time.Second, func(n *model.Node) bool {
		return n.State == model.StateRunning && n.HasFlag(model.FlagIdle)
	})
	idle := time.Now()
	second := next() // the owner starts the next turn 10 s after the first ended
	t.Logf("the next turn started 10s after the first ended, %s after the worker read idle", time.Since(idle).Round(100*time.Millisecond))
	j.startTurn(t, second)
	m.until(t, "the next turn running", 5*time.Second, func(n *model.Node) bool {
		return n.State == model.StateRunning && !n.HasFlag(model.FlagIdle) && n.PID() == second
	})
	if dead := m.deadReadings(); len(dead) > 0 {
		t.Errorf("the worker read dead between its turns:\n  %s", strings.Join(dead, "\n  "))
	}
}

// SPEC §3 idle, the other half: the turn's owner is killed too. Past the
// exit grace (5 s) the worker reads dead, its owner named, long before its
// beat is stale (120 s).
func TestLivePerTurnPidWithItsOwnerKilledIsDeadPastTheExitGrace(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the exit grace")
	}
	j := newTurnJob(t)
	owner, next := startOwner(t, "sleep 300 & echo $!; wait")
	turn := next()
	j.startTurn(t, turn)
	m := monitorWorker(t, j)
	m.until(t, "the turn running, its owner recorded", 5*time.Second, func(n *model.Node) bool {
		return n.State == model.StateRunning && n.PID() == turn && n.RecordedOwner().PID == owner.Process.Pid
	})
	fi, err := os.Stat(j.stream)
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if p, err := os.FindProcess(turn); err == nil {
		_ = p.Kill()
	}
	_ = owner.Process.Kill()
	_ = owner.Wait()
	m.until(t, "dead", 15*time.Second, func(n *model.Node) bool { return n.State == model.StateDead })
	m.mu.Lock()
	n, at := m.last, m.at
	m.mu.Unlock()
	t.Logf("dead %s after the kill, %s after the last beat (exit grace 5s, stale 2m0s)",
		at.Sub(killed).Round(100*time.Millisecond), at.Sub(fi.ModTime()).Round(100*time.Millisecond))
	if want := fmt.Sprintf("its owner pid %d too", owner.Process.Pid); !strings.Contains(n.Reason, want) {
		t.Errorf("reason %q, want it to say %q", n.Reason, want)
	}
}
