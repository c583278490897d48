package actions

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// dropSeed is the rule of the interruption tests: only the seed lines go,
// so every appended line must be in the registry exactly once at the end.
func dropSeed(line []byte, _ bool) (bool, string) {
	if bytes.Contains(line, []byte(`/nowhere/seed-`)) {
		return true, "seed"
	}
	return false, ""
}

// compactUntilSignalled is the body of the compact-interrupted helper: one
// compaction of path, with the signals wired as cli.Execute wires them
// (SIGINT, SIGTERM and SIGHUP cancel the context the action runs under).
// It says "renaming" just before the rename, so the test can aim its
// signal there, and "cancelled" when a signal reached it.
func compactUntilSignalled(path string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	e := testEngine(filepath.Dir(path), model.Thresholds{}, Config{})
	e.hook = func(step string) error {
		if step == "compact:journaled" {
			fmt.Println("renaming")
		}
		return nil
	}
	_, err := e.compactFile(ctx, path, dropSeed, nil)
	if ctx.Err() != nil {
		fmt.Println("cancelled")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	return 0
}

// interruptStats are the figures of a series of interrupted compactions.
type interruptStats struct {
	runs, appends int
	// signals sent, and how many reached a compaction still at work
	// (SIGTERM: it saw the cancel; SIGKILL: it died of it)
	signals, interrupted int
	// orphans: a SIGKILL left the replaced registry for the next run;
	// every other one is finished by a watcher, the rest by an action
	orphans, byWatcher     int
	lost, duplicated, torn int
}

func (s interruptStats) String() string {
	return fmt.Sprintf("%d runs, %d appends, %d signals (%d reached a compaction at work, %d left an orphan, %d of them finished by a watcher), %d lost, %d duplicated, %d torn",
		s.runs, s.appends, s.signals, s.interrupted, s.orphans, s.byWatcher, s.lost, s.duplicated, s.torn)
}

// quickExit is the environment of the helpers: under -race a process
// otherwise waits a second before it exits, every run.
var quickExit = append(os.Environ(), "GORACE=atexit_sleep_ms=0")

// appendAfter is how long the appender goes on after the compaction ended
// (it started before the compaction did).
const appendAfter = 5 * time.Millisecond

// interruptAroundRename runs compactions in a child process while another
// process appends (plain O_APPEND, open-write-close, no lock) from before
// the compaction starts until after it ended, and sends SIGTERM or SIGKILL
// (alternately) at a random moment 0-3 ms after the compaction said it is
// about to rename: before the rename, between it and the drain, or in the
// drain. Then the next run — a watcher for every other orphan a SIGKILL
// left, and another compaction — must leave the registry holding every
// appended line exactly once, whole.
func interruptAroundRename(tb testing.TB, runs int) interruptStats {
	tb.Helper()
	seed := uint64(time.Now().UnixNano())
	tb.Logf("random seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed>>7))
	var st interruptStats
	for run := 0; run < runs; run++ {
		sig := syscall.SIGTERM
		if run%2 == 1 {
			sig = syscall.SIGKILL
		}
		dir := tb.TempDir()
		path := filepath.Join(dir, ".children")
		var seedLines strings.Builder
		for i := 0; i < 20; i++ {
			fmt.Fprintf(&seedLines, `{"heartbeat":"/nowhere/seed-%d/.heartbeat","team":"t","task_id":"%d","status":"active"}`+"\n", i, i)
		}
		if err := os.WriteFile(path, []byte(seedLines.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
		// A node, so that a watcher reads its registry.
		if err := os.WriteFile(filepath.Join(dir, ".heartbeat"), []byte(`{"pid":0,"parent_heartbeat":"","role":"lead","started":0,"status":"completed"}`), 0o644); err != nil {
			tb.Fatal(err)
		}
		appender := helperCmd("append-until-eof", path, "a")
		appender.Env = quickExit
		var appendOut, appendErr bytes.Buffer
		appender.Stdout, appender.Stderr = &appendOut, &appendErr
		stopAppending, err := appender.StdinPipe()
		if err != nil {
			tb.Fatal(err)
		}
		if err := appender.Start(); err != nil {
			tb.Fatal(err)
		}
		compactor := helperCmd("compact-interrupted", path)
		compactor.Env = quickExit
		stdout, err := compactor.StdoutPipe()
		if err != nil {
			tb.Fatal(err)
		}
		var compactErr bytes.Buffer
		compactor.Stderr = &compactErr
		if err := compactor.Start(); err != nil {
			tb.Fatal(err)
		}
		said := make(chan string, 4)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				said <- sc.Text()
			}
			close(said)
		}()
		select {
		case line := <-said:
			if line != "renaming" {
				tb.Fatalf("run %d: compactor said %q: %s", run, line, compactErr.String())
			}
		case <-time.After(10 * time.Second): // hang guard
			_ = compactor.Process.Kill()
			tb.Fatalf("run %d: the compaction never reached its rename", run)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(3 * time.Millisecond))))
		if err := compactor.Process.Signal(sig); err == nil {
			st.signals++
		}
		cancelled := false
		for line := range said {
			cancelled = cancelled || line == "cancelled"
		}
		werr := compactor.Wait()
		orphan := false
		if sig == syscall.SIGKILL {
			if ws, ok := compactor.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				st.interrupted++
				if _, err := os.Lstat(path + ".compacting"); err == nil {
					orphan = true
					st.orphans++
				}
			}
		} else {
			if werr != nil {
				tb.Fatalf("run %d: compaction interrupted by SIGTERM failed: %v: %s", run, werr, compactErr.String())
			}
			if cancelled {
				st.interrupted++
			}
		}
		// Appends go on a little after the compaction ended, into the
		// registry and into what it replaced.
		time.Sleep(appendAfter)
		stopAppending.Close()
		if err := appender.Wait(); err != nil {
			tb.Fatalf("run %d: appender: %v: %s", run, err, appendErr.String())
		}
		appended, err := strconv.Atoi(strings.TrimSpace(appendOut.String()))
		if err != nil {
			tb.Fatalf("run %d: appender said %q", run, appendOut.String())
		}
		st.appends += appended

		if orphan && st.orphans%2 == 0 {
			// A dashboard started now finishes what the kill left.
			w, err := scanner.NewWatcher(scanner.Options{Roots: []string{dir}}, scanner.WatchOptions{RecoverCompactions: true})
			if err != nil {
				tb.Fatalf("run %d: watcher: %v", run, err)
			}
			w.Close()
			if _, err := os.Lstat(path + ".compacting"); err == nil {
				tb.Fatalf("run %d: the watcher did not finish the orphaned compaction", run)
			}
			st.byWatcher++
		}
		// The next action: a compaction, which finishes what the
		// interrupted one left (if still there) before it does its own work.
		e := testEngine(dir, model.Thresholds{}, Config{})
		if _, err := e.compactFile(context.Background(), path, dropSeed, nil); err != nil {
			tb.Fatalf("run %d: the next compaction: %v", run, err)
		}
		lost, dup, torn := countAppended(tb, path, "a", appended)
		if lost+dup+torn > 0 {
			tb.Logf("run %d (%s): %d lost, %d duplicated, %d torn", run, sig, lost, dup, torn)
		}
		st.lost += lost
		st.duplicated += dup
		st.torn += torn
		if left, _ := filepath.Glob(filepath.Join(dir, ".children.*")); len(left) != 0 {
			tb.Fatalf("run %d: left behind after the next action: %v", run, left)
		}
		st.runs++
	}
	return st
}

// countAppended checks the registry at path against the n lines the append
// helper wrote with prefix: how many are missing, how many extra copies
// there are, and how many lines are not whole JSON. A seed line left is a
// failure of its own.
func countAppended(tb testing.TB, path, prefix string, n int) (lost, duplicated, torn int) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	seen := map[string]int{}
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" {
			continue
		}
		var entry struct {
			Heartbeat string `json:"heartbeat"`
		}
		if !strings.HasSuffix(line, "\n") || json.Unmarshal([]byte(line), &entry) != nil {
			torn++
			continue
		}
		if strings.Contains(entry.Heartbeat, "/nowhere/seed-") {
			tb.Fatalf("a seed line survived the compaction: %s", line)
		}
		seen[entry.Heartbeat]++
	}
	for i := 0; i < n; i++ {
		switch k := seen[fmt.Sprintf("/nowhere/%s-%06d/.heartbeat", prefix, i)]; {
		case k == 0:
			lost++
		case k > 1:
			duplicated += k - 1
		}
	}
	return lost, duplicated, torn
}

// SPEC §5.3, §9: a compaction interrupted at any moment around its rename,
// by SIGTERM (the cli cancels; the drain must finish with a final carry)
// or by SIGKILL (the next action must carry over what it left), loses no
// appended line, duplicates none and tears none. 20 runs here; set
// DISPATCHTOP_INTERRUPT_RUNS, or run BenchmarkCompactionInterruptedAroundTheRename
// with -benchtime 200x, for the long series.
func TestCompactionInterruptedAroundTheRenameLosesNoLine(t *testing.T) {
	runs := 20
	if v := os.Getenv("DISPATCHTOP_INTERRUPT_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("DISPATCHTOP_INTERRUPT_RUNS=%q: want a positive number", v)
		}
		runs = n
	}
	st := interruptAroundRename(t, runs)
	t.Log(st)
	if st.lost+st.duplicated+st.torn > 0 {
		t.Fatalf("interrupted compactions damaged the registry: %s", st)
	}
	if st.interrupted == 0 {
		t.Fatalf("no signal reached a compaction at work: the test did not exercise the rule: %s", st)
	}
}

// BenchmarkCompactionInterruptedAroundTheRename is the long series of the
// test above (go test -run '^$' -bench CompactionInterrupted -benchtime
// 200x ./actions): its figures are metrics, and any damage fails it.
func BenchmarkCompactionInterruptedAroundTheRename(b *testing.B) {
	st := interruptAroundRename(b, b.N)
	b.ReportMetric(float64(st.appends), "appends")
	b.ReportMetric(float64(st.signals), "signals")
	b.ReportMetric(float64(st.interrupted), "interrupted")
	b.ReportMetric(float64(st.orphans), "orphans")
	b.ReportMetric(float64(st.lost), "lost")
	b.ReportMetric(float64(st.duplicated), "duplicated")
	b.ReportMetric(float64(st.torn), "torn")
	b.Log(st)
	if st.lost+st.duplicated+st.torn > 0 {
		b.Fatalf("interrupted compactions damaged the registry: %s", st)
	}
}
