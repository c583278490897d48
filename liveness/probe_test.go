package liveness

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/dispatchtop/dispatchtop/model"
)

// startSleep starts a real `sleep` and returns its pid and a stop function
// that kills and reaps it (so its pid is then gone).
func startSleep(t *testing.T) (pid int, stop func()) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sleep: %v", err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(stop)
	return cmd.Process.Pid, stop
}

// goneProcess returns the pid of a process that was started, killed and reaped.
func goneProcess(t *testing.T) int {
	t.Helper()
	pid, stop := startSleep(t)
	stop()
	return pid
}

func TestSystemProbeVerifiesRealProcesses(t *testing.T) {
	livePid, _ := startSleep(t)
	launched := time.Now()
	info := SystemProbe{}.Lookup(livePid)
	if !info.Exists || info.CreateTimeErr != nil {
		t.Fatalf("live sleep %d: %+v", livePid, info)
	}
	if d := info.CreateTime.Sub(launched); d > 2*time.Second || d < -2*time.Second {
		t.Fatalf("create time %v is %v away from the launch", info.CreateTime, d)
	}
	realStarted := info.CreateTime
	gonePid := goneProcess(t)
	boot := SystemProbe{}.BootTime()

	tests := []struct {
		name    string
		pid     int
		started time.Time // zero: left out
		want    model.ProcessStatus
	}{
		{name: "live sleep with its real create time as started: alive", pid: livePid, started: realStarted, want: model.ProcessAlive},
		{name: "live sleep, started off by 1s (within tolerance): alive", pid: livePid, started: realStarted.Add(time.Second), want: model.ProcessAlive},
		// Earlier, not later (that is the future), and by seconds, not
		// hours: the host may have booted minutes ago, and a started before
		// the boot cannot be compared.
		{name: "live sleep with a wrong started: reused", pid: livePid, started: realStarted.Add(-20 * time.Second), want: model.ProcessReused},
		{name: "live sleep, started off by 3s (outside tolerance): reused", pid: livePid, started: realStarted.Add(-3 * time.Second), want: model.ProcessReused},
		{name: "live sleep without started: unverified", pid: livePid, want: model.ProcessUnverified},
		{name: "live sleep, started in milliseconds: unverified", pid: livePid, started: time.Unix(realStarted.UnixMilli(), 0), want: model.ProcessUnverified},
		{name: "reaped pid: gone", pid: gonePid, started: realStarted, want: model.ProcessGone},
		{name: "pid 0: gone", pid: 0, started: realStarted, want: model.ProcessGone},
		{name: "negative pid: gone", pid: -1, started: realStarted, want: model.ProcessGone},
		{name: "pid beyond pid_t: gone", pid: math.MaxInt32 + 1, started: realStarted, want: model.ProcessGone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := SystemProbe{}.Lookup(tt.pid)
			started := 0.0
			if !tt.started.IsZero() {
				started = float64(tt.started.Unix()) + float64(tt.started.Nanosecond())/1e9
			}
			if got, _ := Verify(info, started, 2*time.Second, boot, time.Now()); got != tt.want {
				t.Errorf("Verify(Lookup(%d) = %+v) = %s, want %s", tt.pid, info, got, tt.want)
			}
		})
	}
}

func TestSystemProbePidOneExists(t *testing.T) {
	info := SystemProbe{}.Lookup(1)
	if !info.Exists {
		t.Fatalf("pid 1 should exist: %+v", info)
	}
	if info.CreateTime.IsZero() == (info.CreateTimeErr == nil) {
		t.Fatalf("pid 1: want either a create time or an error saying why not, got %+v", info)
	}
	// pid 1 is never the process a heartbeat started a minute ago names.
	want := model.ProcessReused
	if info.CreateTimeErr != nil {
		want = model.ProcessUnverified
	}
	at := time.Now()
	if got, _ := Verify(info, unixSeconds(at.Add(-time.Minute)), 2*time.Second, SystemProbe{}.BootTime(), at); got != want {
		t.Errorf("Verify(pid 1) = %s, want %s", got, want)
	}
}

func TestSystemProbeBootTime(t *testing.T) {
	boot := SystemProbe{}.BootTime()
	self := SystemProbe{}.Lookup(os.Getpid())
	if boot.IsZero() || !boot.Before(time.Now()) {
		t.Fatalf("boot time %v", boot)
	}
	// Boot time has whole-second resolution; the test process came later.
	if self.CreateTime.Before(boot.Add(-time.Second)) {
		t.Errorf("this process (created %v) predates the boot (%v)", self.CreateTime, boot)
	}
}

func TestVerify(t *testing.T) {
	at := time.Unix(1711234567, 0)
	tests := []struct {
		name string
		info ProcessInfo
		want model.ProcessStatus
	}{
		{"no such pid: gone", ProcessInfo{}, model.ProcessGone},
		{"same create time: alive", ProcessInfo{Exists: true, CreateTime: at}, model.ProcessAlive},
		{"2s later, exactly the tolerance: alive", ProcessInfo{Exists: true, CreateTime: at.Add(2 * time.Second)}, model.ProcessAlive},
		{"2s earlier, exactly the tolerance: alive", ProcessInfo{Exists: true, CreateTime: at.Add(-2 * time.Second)}, model.ProcessAlive},
		{"2.001s later: reused", ProcessInfo{Exists: true, CreateTime: at.Add(2001 * time.Millisecond)}, model.ProcessReused},
		{"create time unreadable: unverified", ProcessInfo{Exists: true, CreateTimeErr: errors.New("permission denied")}, model.ProcessUnverified},
		{"exists, zero create time: unverified", ProcessInfo{Exists: true}, model.ProcessUnverified},
	}
	boot, later := at.Add(-24*time.Hour), at.Add(time.Hour)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, why := Verify(tt.info, unixSeconds(at), 2*time.Second, boot, later); got != tt.want || why != nil {
				t.Errorf("Verify = %s (%v), want %s", got, why, tt.want)
			}
		})
	}
	if got, why := Verify(ProcessInfo{Exists: true, CreateTime: at}, 0, 2*time.Second, boot, later); got != model.ProcessUnverified || why != nil {
		t.Errorf("Verify without started = %s (%v), want unverified, nothing to blame on started", got, why)
	}
}

// TestClassifyWithRealProcesses runs the dead and stalled rules of SPEC §3
// through SystemProbe on real pids.
func TestClassifyWithRealProcesses(t *testing.T) {
	livePid, _ := startSleep(t)
	liveStarted := SystemProbe{}.Lookup(livePid).CreateTime
	gonePid := goneProcess(t)
	now := time.Now()
	hb := func(pid int, started time.Time, age time.Duration) *model.Node {
		return &model.Node{
			ID: "s", HasHeartbeat: true, BeatMtime: now.Add(-age),
			Heartbeat: &model.Heartbeat{PID: pid, Status: model.StatusRunning, Started: float64(started.UnixNano()) / 1e9},
		}
	}
	tests := []struct {
		name      string
		node      *model.Node
		wantState model.State
		wantFlag  model.Flag // "" for none
	}{
		{"dead (b): reaped pid, beat 10s old", hb(gonePid, liveStarted, 10*time.Second), model.StateDead, ""},
		{"dead (b): live pid with another create time, beat 40s old", hb(livePid, liveStarted.Add(-3*time.Second), 40*time.Second), model.StateDead, ""},
		{"dead (b), clock_skew: reaped pid, mtime an hour ahead", hb(gonePid, liveStarted, -time.Hour), model.StateDead, model.FlagClockSkew},
		{"running, clock_skew: live pid as the same process, mtime an hour ahead", hb(livePid, liveStarted, -time.Hour), model.StateRunning, model.FlagClockSkew},
		{"running: live pid as the same process, beat 3m old: stalled", hb(livePid, liveStarted, 3*time.Minute), model.StateRunning, model.FlagStalled},
		{"running: live pid, beat 6m old: kill candidate", hb(livePid, liveStarted, 6*time.Minute), model.StateRunning, model.FlagKillCandidate},
		{"legacy: live pid after boot: running", &model.Node{ID: "c", Legacy: true, Rare: &model.Rare{LegacyPID: livePid}, BeatMtime: now.Add(-time.Minute)}, model.StateRunning, model.FlagLegacy},
		{"legacy: reaped pid: dead", &model.Node{ID: "c", Legacy: true, Rare: &model.Rare{LegacyPID: gonePid}, BeatMtime: now.Add(-time.Minute)}, model.StateDead, model.FlagLegacy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ClassifyForest([]*model.Node{tt.node}, nil, now, model.DefaultThresholds())
			if tt.node.State != tt.wantState {
				t.Errorf("state = %s, want %s (%s)", tt.node.State, tt.wantState, tt.node.Reason)
			}
			if tt.wantFlag != "" && !tt.node.HasFlag(tt.wantFlag) {
				t.Errorf("flags = %v, want %s", tt.node.Flags, tt.wantFlag)
			}
		})
	}
}

// countingProbe counts lookups per pid.
type countingProbe struct {
	mu    sync.Mutex
	calls map[int]int
	boots int
}

func (c *countingProbe) Lookup(pid int) ProcessInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[int]int{}
	}
	c.calls[pid]++
	return ProcessInfo{Exists: pid%2 == 0, CreateTime: started}
}

func (c *countingProbe) BootTime() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.boots++
	return now.Add(-time.Hour)
}

func (c *countingProbe) count(pid int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[pid]
}

func TestCachingProbeWithoutExistenceCheck(t *testing.T) {
	inner := &countingProbe{}
	clock := now
	c := newCachingProbe(inner, 2*time.Second, 10*time.Second, func() time.Time { return clock })

	steps := []struct {
		name      string
		advance   time.Duration
		pid       int
		wantCalls int // the inner probe's count for pid after the lookup
		wantLen   int
	}{
		{name: "first lookup asks", pid: 10, wantCalls: 1, wantLen: 1},
		{name: "within the TTL answers from the cache", advance: time.Second, pid: 10, wantCalls: 1, wantLen: 1},
		{name: "another pid asks", pid: 11, wantCalls: 1, wantLen: 2},
		{name: "past the TTL asks again (no cheaper question to ask)", advance: 1500 * time.Millisecond, pid: 10, wantCalls: 2, wantLen: 2},
		{name: "a lookup a re-verify period later sweeps pids nobody asked about", advance: 11 * time.Second, pid: 12, wantCalls: 1, wantLen: 1},
	}
	for _, s := range steps {
		clock = clock.Add(s.advance)
		info := c.Lookup(s.pid)
		if info.Exists != (s.pid%2 == 0) {
			t.Errorf("%s: Exists = %v for pid %d", s.name, info.Exists, s.pid)
		}
		if got := inner.count(s.pid); got != s.wantCalls {
			t.Errorf("%s: inner lookups of %d = %d, want %d", s.name, s.pid, got, s.wantCalls)
		}
		if got := c.Len(); got != s.wantLen {
			t.Errorf("%s: cached pids = %d, want %d", s.name, got, s.wantLen)
		}
	}

	for range 3 {
		if got := c.BootTime(); !got.Equal(now.Add(-time.Hour)) {
			t.Errorf("BootTime = %v", got)
		}
	}
	if inner.boots != 1 {
		t.Errorf("boot time read %d times, want once", inner.boots)
	}
	if bt := NewCachingProbe(fakeLookupOnly{}, time.Second).BootTime(); !bt.IsZero() {
		t.Errorf("a probe without BootTime gives boot time %v, want zero", bt)
	}
}

// processTable is a probe with an existence check whose processes the test
// starts, ends and replaces; it counts both kinds of question.
type processTable struct {
	mu      sync.Mutex
	procs   map[int]time.Time // pid -> create time
	zombies map[int]bool      // exited, not reaped: signal 0 finds them, a full lookup calls them gone
	lookups int
	checks  int
	failing bool // PidExists errors
}

func (p *processTable) Lookup(pid int) ProcessInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lookups++
	ct, ok := p.procs[pid]
	if !ok || p.zombies[pid] {
		return ProcessInfo{}
	}
	return ProcessInfo{Exists: true, CreateTime: ct}
}

func (p *processTable) PidExists(pid int) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.checks++
	if p.failing {
		return false, errors.New("no answer")
	}
	_, ok := p.procs[pid]
	return ok, nil
}

func (p *processTable) set(pid int, ct time.Time, alive bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.zombies, pid)
	if alive {
		p.procs[pid] = ct
	} else {
		delete(p.procs, pid)
	}
}

func TestCachingProbeChecksExistenceBetweenFullLookups(t *testing.T) {
	const pid = 1994 // re-verify period for it: 50-100 % of 20 s, here 10 s
	table := &processTable{procs: map[int]time.Time{pid: started}}
	clock := now
	c := newCachingProbe(table, time.Second, 20*time.Second, func() time.Time { return clock })
	if got := c.reverifyFor(pid); got != 10*time.Second {
		t.Fatalf("re-verify for pid %d = %v, want 10s", pid, got)
	}

	steps := []struct {
		name        string
		advance     time.Duration
		change      func()
		want        model.ProcessStatus
		wantLookups int
		wantChecks  int
	}{
		{name: "first: a full lookup", want: model.ProcessAlive, wantLookups: 1},
		{name: "within the TTL: from the cache", advance: 500 * time.Millisecond, want: model.ProcessAlive, wantLookups: 1},
		{name: "past the TTL: an existence check only", advance: time.Second, want: model.ProcessAlive, wantLookups: 1, wantChecks: 1},
		{name: "again a tick later: another existence check", advance: time.Second, want: model.ProcessAlive, wantLookups: 1, wantChecks: 2},
		{name: "the process exits: its death is seen within a TTL", advance: time.Second,
			change: func() { table.set(pid, time.Time{}, false) }, want: model.ProcessGone, wantLookups: 1, wantChecks: 3},
		{name: "still gone a tick later: an existence check only", advance: time.Second,
			want: model.ProcessGone, wantLookups: 1, wantChecks: 4},
		{name: "its pid is reused: a gone pid that exists again gets a full lookup", advance: time.Second,
			change: func() { table.set(pid, started.Add(time.Minute), true) }, want: model.ProcessReused, wantLookups: 2, wantChecks: 5},
		{name: "the re-verify period passes: the create time is read again", advance: 11 * time.Second,
			want: model.ProcessReused, wantLookups: 3, wantChecks: 5},
		{name: "a failing existence check falls back to a full lookup", advance: time.Second,
			change: func() { table.mu.Lock(); table.failing = true; table.mu.Unlock() }, want: model.ProcessReused, wantLookups: 4, wantChecks: 6},
	}
	for _, s := range steps {
		clock = clock.Add(s.advance)
		if s.change != nil {
			s.change()
		}
		if got, _ := Verify(c.Lookup(pid), unixSeconds(started), 2*time.Second, time.Time{}, now); got != s.want {
			t.Errorf("%s: %s, want %s", s.name, got, s.want)
		}
		if table.lookups != s.wantLookups || table.checks != s.wantChecks {
			t.Errorf("%s: %d lookups and %d existence checks, want %d and %d", s.name, table.lookups, table.checks, s.wantLookups, s.wantChecks)
		}
	}
}

func TestCachingProbeReverifySpreadsOverHalfToAllOfThePeriod(t *testing.T) {
	c := NewCachingProbe(fakeLookupOnly{}, time.Second)
	lo, hi := DefaultReverify, time.Duration(0)
	for pid := 1; pid < 5000; pid++ {
		d := c.reverifyFor(pid)
		lo, hi = min(lo, d), max(hi, d)
	}
	if lo < DefaultReverify/2 || hi > DefaultReverify || hi-lo < DefaultReverify/3 {
		t.Errorf("re-verify periods span [%v, %v], want a spread within [%v, %v]", lo, hi, DefaultReverify/2, DefaultReverify)
	}
}

func TestSystemProbePidExists(t *testing.T) {
	livePid, _ := startSleep(t)
	gonePid := goneProcess(t)
	tests := []struct {
		name string
		pid  int
		want bool
	}{
		{"live sleep", livePid, true},
		{"this process", os.Getpid(), true},
		{"pid 1 (another user's process counts)", 1, true},
		{"reaped pid", gonePid, false},
		{"pid 0 (a process group for kill: never asked)", 0, false},
		{"negative pid", -1, false},
		{"beyond pid_t", math.MaxInt32 + 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SystemProbe{}.PidExists(tt.pid)
			if err != nil || got != tt.want {
				t.Errorf("PidExists(%d) = %v, %v; want %v", tt.pid, got, err, tt.want)
			}
			if full := (SystemProbe{}).Lookup(tt.pid).Exists; full != tt.want {
				t.Errorf("Lookup(%d).Exists = %v disagrees", tt.pid, full)
			}
		})
	}
}

type fakeLookupOnly struct{}

func (fakeLookupOnly) Lookup(int) ProcessInfo { return ProcessInfo{} }

func TestCachingProbeConcurrentUse(t *testing.T) {
	inner := &countingProbe{}
	c := NewCachingProbe(inner, time.Hour)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				pid := (g*7 + i) % 50
				if got := c.Lookup(pid); got.Exists != (pid%2 == 0) {
					t.Errorf("pid %d: Exists = %v", pid, got.Exists)
					return
				}
				_ = c.BootTime()
			}
		}()
	}
	wg.Wait()
	if c.Len() != 50 {
		t.Errorf("cached pids = %d, want 50", c.Len())
	}
	// With an hour's TTL each pid is asked at most by the goroutines that
	// missed it together, never once per lookup.
	for pid := range 50 {
		if n := inner.count(pid); n < 1 || n > 16 {
			t.Errorf("pid %d asked %d times", pid, n)
		}
	}
}

// startSleeps starts n real processes for a benchmark, stopped at its end.
func startSleeps(b *testing.B, n int) []int {
	b.Helper()
	pids := make([]int, n)
	for i := range pids {
		cmd := exec.Command("sleep", "3600")
		if err := cmd.Start(); err != nil {
			b.Fatalf("start sleep: %v", err)
		}
		b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		pids[i] = cmd.Process.Pid
	}
	return pids
}

// BenchmarkCachingProbeTick: what the live engine's probe costs per
// distinct live pid, in its steady state (SPEC §8 idle CPU). One op is one
// simulated second: every pid asked once, through a CachingProbe with the
// engine's TTL (0.9 of the 1 s tick, so each answer has expired) and
// re-verify period, over real processes. µs/pid/s is the CPU a pid costs
// each second; %cpu-10k-pids is that for 10,000 distinct pids.
func BenchmarkCachingProbeTick(b *testing.B) {
	pids := startSleeps(b, 500)
	clock := time.Now()
	probe := newCachingProbe(SystemProbe{}, 900*time.Millisecond, DefaultReverify, func() time.Time { return clock })
	tick := func() {
		clock = clock.Add(time.Second)
		for _, pid := range pids {
			if !probe.Lookup(pid).Exists {
				b.Fatalf("live sleep %d reads as gone", pid)
			}
		}
	}
	// Two whole re-verify periods: every create time read and its re-read
	// spread over the period, as after a minute of watching.
	for range 2 * DefaultReverify / time.Second {
		tick()
	}
	b.ResetTimer()
	for b.Loop() {
		tick()
	}
	perPid := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(len(pids)) / 1000
	b.ReportMetric(perPid, "µs/pid/s")
	b.ReportMetric(perPid*10000/1e6*100, "%cpu-10k-pids")
}

// On Linux the probe reads /proc/<pid>/stat itself; its create times must
// be gopsutil's to the millisecond (the heartbeat writers' `started` comes
// from gopsutil), for real processes including one whose name holds spaces
// and parentheses, and a zombie still exists as it does for gopsutil.
func TestSystemProbeReadsProcStat(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	odd := filepath.Join(t.TempDir(), "a) b (c")
	if err := os.Symlink(sleep, odd); err != nil {
		t.Fatal(err)
	}
	oddCmd := exec.Command(odd, "60")
	if err := oddCmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = oddCmd.Process.Kill(); _ = oddCmd.Wait() })
	livePid, _ := startSleep(t)
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = zombie.Wait() })

	for name, pid := range map[string]int{"this process": os.Getpid(), "sleep": livePid,
		"a name with spaces and parentheses": oddCmd.Process.Pid, "pid 1": 1} {
		t.Run(name, func(t *testing.T) {
			info, ok := procStatLookup(pid)
			if !ok || !info.Exists || info.CreateTimeErr != nil {
				t.Fatalf("procStatLookup(%d) = %+v, %v", pid, info, ok)
			}
			p, err := process.NewProcess(int32(pid))
			if err != nil {
				t.Fatal(err)
			}
			ms, err := p.CreateTime()
			if err != nil {
				t.Fatal(err)
			}
			if got := info.CreateTime.UnixMilli(); got != ms {
				t.Errorf("create time %d ms, gopsutil says %d ms", got, ms)
			}
		})
	}

	t.Run("zombie", func(t *testing.T) {
		// Exited and not yet reaped: /proc still has it.
		for deadline := time.Now().Add(5 * time.Second); ; {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", zombie.Process.Pid))
			if err != nil {
				t.Fatal(err)
			}
			if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); f[0] == "Z" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("true did not become a zombie")
			}
			time.Sleep(10 * time.Millisecond)
		}
		// An agent killed under a frozen wrapper stays a zombie until the
		// wrapper reaps it: it exited, so it is gone, not alive.
		if info := (SystemProbe{}).Lookup(zombie.Process.Pid); info.Exists {
			t.Errorf("zombie %d: %+v, want gone (it exited; it holds its pid but never beats again)", zombie.Process.Pid, info)
		}
		_ = zombie.Wait()
		if info := (SystemProbe{}).Lookup(zombie.Process.Pid); info.Exists {
			t.Errorf("reaped %d: %+v, want gone", zombie.Process.Pid, info)
		}
	})
}

func TestStartTicks(t *testing.T) {
	tail := " S 1 2 3 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 200 18446744073709551615\n"
	tests := []struct {
		name, stat string
		want       uint64
		wantErr    bool
	}{
		{"plain", "42 (sleep)" + tail, 98765, false},
		{"name with spaces and parentheses", "42 (a) b (c)" + tail, 98765, false},
		{"name that looks like fields", "42 (1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20))" + tail, 98765, false},
		{"start time last, newline after", "42 (x) S 1 2 3 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 555\n", 555, false},
		{"truncated", "42 (x) S 1 2 3", 0, true},
		{"no name", "42 x S 1", 0, true},
		{"not a number", "42 (x) S 1 2 3 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 abc 1", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := startTicks([]byte(tt.stat))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("startTicks = %d, %v; want %d (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// pinningTable is a processTable whose lookups pin the process found, as a
// pidfd does: a pin says whether that very process still runs, and reports
// its exit once.
type pinningTable struct {
	*processTable
	pins   map[int]bool // pid -> the pinned process still runs
	pinned int          // StillRunning answers given from a pin
}

func (p *pinningTable) Lookup(pid int) ProcessInfo {
	info := p.processTable.Lookup(pid)
	p.mu.Lock()
	defer p.mu.Unlock()
	if info.Exists {
		p.pins[pid] = true
	}
	return info
}

func (p *pinningTable) StillRunning(pid int) (running, pinned bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	running, pinned = p.pins[pid]
	if pinned {
		p.pinned++
		if !running {
			delete(p.pins, pid) // an exit is reported once
		}
	}
	return running, pinned
}

// exit ends the pinned process: gone, or left a zombie (its pid still
// exists for a signal 0; a full lookup calls it gone).
func (p *pinningTable) exit(pid int, zombie bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.pins[pid]; ok {
		p.pins[pid] = false
	}
	if !zombie {
		delete(p.procs, pid)
		return
	}
	if p.zombies == nil {
		p.zombies = map[int]bool{}
	}
	p.zombies[pid] = true
}

// With a probe that pins what it looked up, a pinned process still running
// is renewed without asking the system anything, however long (no signal 0
// each tick, no create time re-read: the pin is the identity); once it
// exits, the pid is asked as usual.
func TestCachingProbeTrustsPinnedProcesses(t *testing.T) {
	const pid = 1994
	table := &pinningTable{processTable: &processTable{procs: map[int]time.Time{pid: started}}, pins: map[int]bool{}}
	clock := now
	c := newCachingProbe(table, time.Second, 20*time.Second, func() time.Time { return clock })
	steps := []struct {
		name                                string
		advance                             time.Duration
		change                              func()
		want                                model.ProcessStatus
		wantLookups, wantChecks, wantPinned int
	}{
		{name: "first: a full lookup, which pins", want: model.ProcessAlive, wantLookups: 1},
		{name: "past the TTL: the pin answers", advance: time.Second, want: model.ProcessAlive, wantLookups: 1, wantPinned: 1},
		{name: "past the re-verify period: still the pin, no re-read", advance: time.Minute, want: model.ProcessAlive, wantLookups: 1, wantPinned: 2},
		{name: "it exits and is reaped: the pin says so, a full lookup confirms", advance: time.Second,
			change: func() { table.exit(pid, false) }, want: model.ProcessGone, wantLookups: 2, wantChecks: 0, wantPinned: 3},
		{name: "its pid is reused: a full lookup of the new process", advance: time.Second,
			change: func() { table.set(pid, started.Add(time.Minute), true) }, want: model.ProcessReused, wantLookups: 3, wantChecks: 1, wantPinned: 3},
		{name: "the new process is pinned in turn", advance: time.Second, want: model.ProcessReused, wantLookups: 3, wantChecks: 1, wantPinned: 4},
		{name: "it exits, left a zombie: the full lookup calls it gone, though signal 0 finds it", advance: time.Second,
			change: func() { table.exit(pid, true) }, want: model.ProcessGone, wantLookups: 4, wantChecks: 1, wantPinned: 5},
		{name: "a zombie stays gone: signal 0 finds it, the full lookup says gone", advance: time.Second, want: model.ProcessGone, wantLookups: 5, wantChecks: 2, wantPinned: 5},
	}
	for _, s := range steps {
		clock = clock.Add(s.advance)
		if s.change != nil {
			s.change()
		}
		if got, _ := Verify(c.Lookup(pid), unixSeconds(started), 2*time.Second, time.Time{}, now); got != s.want {
			t.Errorf("%s: %s, want %s", s.name, got, s.want)
		}
		if table.lookups != s.wantLookups || table.checks != s.wantChecks || table.pinned != s.wantPinned {
			t.Errorf("%s: %d lookups, %d existence checks, %d pinned answers; want %d, %d, %d", s.name,
				table.lookups, table.checks, table.pinned, s.wantLookups, s.wantChecks, s.wantPinned)
		}
	}
}

// A pinned process's answer does not need asking to stay true, so a caller
// may stop asking (the live engine skips pinned pids on its ticks): the
// sweep of pids nobody asked about keeps those whose pinned process runs,
// and drops the rest as before.
func TestCachingProbeSweepKeepsPinnedProcesses(t *testing.T) {
	table := &pinningTable{processTable: &processTable{procs: map[int]time.Time{10: started, 12: started}}, pins: map[int]bool{}}
	clock := now
	c := newCachingProbe(table, time.Second, 10*time.Second, func() time.Time { return clock })
	c.Lookup(10)
	c.Lookup(12)
	table.exit(12, false)
	table.pins[12] = false // its exit not taken yet: the sweep must not count it as running
	clock = clock.Add(11 * time.Second)
	c.Lookup(99) // a lookup a re-verify period later sweeps
	if got := c.Len(); got != 2 {
		t.Errorf("%d pids cached after the sweep, want 2 (the pinned one and the new one)", got)
	}
	lookups := table.lookups
	if got, _ := Verify(c.Lookup(10), unixSeconds(started), 2*time.Second, time.Time{}, now); got != model.ProcessAlive || table.lookups != lookups {
		t.Errorf("pid 10 after the sweep: %s with %d new lookups; want alive from the cache", got, table.lookups-lookups)
	}
}
