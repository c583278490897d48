package scanner

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

// turnStore is recordStore whose records run a pid per turn, as
// TeaParty's leads and workers do.
type turnStore struct{ recordStore }

func (s turnStore) Read(path string, now time.Time) sources.Facts {
	facts := s.recordStore.Read(path, now)
	for _, n := range facts.Nodes {
		n.Traits.PIDPerTurn = true
	}
	return facts
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// turnRecord is a record of the turn process pid, beating at beat.
func turnRecord(t *testing.T, pid int, beat time.Time) record {
	t.Helper()
	info := liveness.SystemProbe{}.Lookup(pid)
	if !info.Exists {
		t.Fatalf("pid %d is gone before its record", pid)
	}
	return record{ID: "worker", PID: pid, Started: float64(info.CreateTime.UnixNano()) / 1e9,
		Status: "running", Beat: float64(beat.UnixNano()) / 1e9}
}

// startTurnWatcher watches a store of one per-turn record at the clock.
func startTurnWatcher(t *testing.T, store string, clock *fakeClock) *Watcher {
	t.Helper()
	w, err := NewWatcher(Options{Roots: []string{store}, Sources: []sources.Source{turnStore{}}, Now: clock.now},
		WatchOptions{Tick: 10 * time.Millisecond, FallbackPoll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	runWatcher(t, w)
	return w
}

// awaitNeverDead is await, failing on any snapshot where the worker is dead.
func awaitNeverDead(t *testing.T, w *Watcher, what string, cond func(*model.Node) bool) {
	t.Helper()
	await(t, w, what, func(s *model.Snapshot) bool {
		n := s.Node("worker")
		if n != nil && n.State == model.StateDead {
			t.Fatalf("worker read dead while waiting for %s: %s", what, n.Reason)
		}
		return n != nil && cond(n)
	})
}

// SPEC §3 idle: the live engine records the owner of a per-turn pid when it
// first sees it alive. The turn ends, the owner lives: the worker is
// running and idle, never dead; 10 s later a new turn's pid runs it again.
func TestWatchPerTurnPidUnderALivingOwnerIsIdleNeverDead(t *testing.T) {
	store := newRecordStore(t)
	t0 := time.Now()
	clock := &fakeClock{t: t0}
	turn := exec.Command("sleep", "60") // this test is its owner
	if err := turn.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = turn.Process.Kill(); _ = turn.Wait() })
	writeRecords(t, store, []record{turnRecord(t, turn.Process.Pid, t0)})
	w := startTurnWatcher(t, store, clock)
	awaitNeverDead(t, w, "the first turn running", func(n *model.Node) bool { return n.State == model.StateRunning })

	_ = turn.Process.Kill()
	_ = turn.Wait()
	clock.set(t0.Add(6 * time.Second)) // past the exit grace
	awaitNeverDead(t, w, "idle between turns", func(n *model.Node) bool {
		return n.State == model.StateRunning && n.HasFlag(model.FlagIdle) && n.RecordedOwner().PID == os.Getpid()
	})

	clock.set(t0.Add(10 * time.Second))
	next := exec.Command("sleep", "60")
	if err := next.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = next.Process.Kill(); _ = next.Wait() })
	writeRecords(t, store, []record{turnRecord(t, next.Process.Pid, clock.now())})
	awaitNeverDead(t, w, "the next turn running", func(n *model.Node) bool {
		return n.State == model.StateRunning && !n.HasFlag(model.FlagIdle) && n.PID() == next.Process.Pid
	})
}

// SPEC §3 idle: with the owner gone too, the worker is dead at once past
// the exit grace, long before its beat is stale.
func TestWatchPerTurnPidWithItsOwnerGoneIsDeadPastTheExitGrace(t *testing.T) {
	store := newRecordStore(t)
	t0 := time.Now()
	clock := &fakeClock{t: t0}
	// The owner runs the turn as its child and waits for it.
	owner := exec.Command("sh", "-c", "sleep 60 & echo $!; wait")
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = owner.Process.Kill(); _ = owner.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	turnPid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	writeRecords(t, store, []record{turnRecord(t, turnPid, t0)})
	w := startTurnWatcher(t, store, clock)
	// The owner is recorded when the turn is first seen alive: the snapshot
	// that shows it running carries it.
	awaitNeverDead(t, w, "the turn running, its owner recorded", func(n *model.Node) bool {
		return n.State == model.StateRunning && n.RecordedOwner().PID == owner.Process.Pid
	})

	// The turn ends (its owner reaps it), then the owner is killed and reaped.
	if p, err := os.FindProcess(turnPid); err == nil {
		_ = p.Kill()
	}
	_ = owner.Process.Kill()
	_ = owner.Wait()
	clock.set(t0.Add(6 * time.Second)) // past the exit grace, far from stale
	await(t, w, "dead", func(s *model.Snapshot) bool {
		n := s.Node("worker")
		return n != nil && n.State == model.StateDead
	})
}

// SPEC §3 idle: an idle node's verdict hangs on its owner. When the owner
// ends, the next tick classifies the node again — it is dead — although no
// threshold is near and its own pid was gone already.
func TestWatchTickNoticesTheOwnerOfAnIdleNodeGone(t *testing.T) {
	store := newRecordStore(t)
	t0 := time.Now()
	clock := &fakeClock{t: t0}
	// The owner runs the turn, waits for it, then lives on as the same
	// process (exec keeps its pid and create time).
	owner := exec.Command("sh", "-c", "sleep 60 & echo $!; wait; exec sleep 60")
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = owner.Process.Kill(); _ = owner.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	turnPid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	writeRecords(t, store, []record{turnRecord(t, turnPid, t0)})
	// Not run: the test makes each tick, none of them the reasons' refresh.
	w, err := NewWatcher(Options{Roots: []string{store}, Sources: []sources.Source{turnStore{}}, Now: clock.now},
		WatchOptions{Tick: 10 * time.Millisecond, FallbackPoll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	if n := w.Snapshot().Node("worker"); n == nil || n.RecordedOwner().PID != owner.Process.Pid {
		t.Fatalf("owner not recorded: %+v", n)
	}
	tickUntil := func(what string, ok func(*model.Node) bool) {
		t.Helper()
		for hang := time.Now().Add(5 * time.Second); time.Now().Before(hang); time.Sleep(20 * time.Millisecond) {
			w.publish(clock.now(), true)
			if n := w.Snapshot().Node("worker"); ok(n) {
				return
			}
		}
		n := w.Snapshot().Node("worker")
		t.Fatalf("%s: worker %s %v (%s)", what, n.State, n.Flags, n.Reason)
	}
	if p, err := os.FindProcess(turnPid); err == nil {
		_ = p.Kill()
	}
	clock.set(t0.Add(6 * time.Second)) // past the exit grace
	tickUntil("idle", func(n *model.Node) bool { return n.HasFlag(model.FlagIdle) })

	// Just past a refresh of the ages reasons quote as text: the ticks up
	// to the next one classify only the sessions due.
	for w.due.ticks%reasonRefreshTicks != 1 {
		w.publish(clock.now(), true)
	}
	_ = owner.Process.Kill()
	_ = owner.Wait()
	for {
		w.publish(clock.now(), true)
		if n := w.Snapshot().Node("worker"); n.State == model.StateDead {
			break
		}
		if (w.due.ticks+1)%reasonRefreshTicks == 0 {
			n := w.Snapshot().Node("worker")
			t.Fatalf("no tick before the refresh noticed the owner gone: worker %s %v (%s)", n.State, n.Flags, n.Reason)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
