package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/actions"
	"github.com/dispatchtop/dispatchtop/model"
)

// The journal BenchmarkJournalMemory reads is this many MiB: small enough
// for `go test -bench`, and scaled by the variable to SPEC §8's 1 GB
// (DISPATCHTOP_BENCH_JOURNAL_MB=1024).
const (
	benchJournalMBEnv     = "DISPATCHTOP_BENCH_JOURNAL_MB"
	benchJournalDefaultMB = 16
	// benchPaneRootEnv makes this test binary the pane's reader, measured
	// in a process of its own (TestJournalPaneChild).
	benchPaneRootEnv = "DISPATCHTOP_BENCH_PANE_JOURNAL"
	benchPaneNode    = "sessions/s-7/w-2"
)

// BenchmarkJournalMemory is the peak RSS (the kernel's high-water mark,
// VmHWM) of what reads a whole journal (SPEC §8: a 1 GB journal
// in ≤ 64 MiB): `dispatchtop journal` and `journal --json`, the real
// binary writing to /dev/null, and the details pane's reader of one
// node's entries, in a process of its own. The journal is generated in a
// temporary directory: kills, resumes and refusals of 1,000 nodes, and
// every 500th line a compaction carrying 40 removed registry lines.
func BenchmarkJournalMemory(b *testing.B) {
	mb := benchJournalDefaultMB
	if v := os.Getenv(benchJournalMBEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("%s=%q: want a positive number of MiB", benchJournalMBEnv, v)
		}
		mb = n
	}
	root := b.TempDir()
	start := time.Now()
	lines := writeBenchJournal(b, root, int64(mb)<<20)
	b.Logf("generated a journal of %d MiB, %d lines, in %s", mb, lines, time.Since(start).Round(time.Millisecond))
	runs := []struct {
		name string
		cmd  func() *exec.Cmd
	}{
		{"journal", func() *exec.Cmd { return exec.Command(dispatchtopBin, "journal", root) }},
		{"journal-json", func() *exec.Cmd { return exec.Command(dispatchtopBin, "journal", "--json", root) }},
		{"pane", func() *exec.Cmd {
			c := exec.Command(os.Args[0], "-test.run=^TestJournalPaneChild$")
			c.Env = append(os.Environ(), wrapHelperEnv+"=1", benchPaneRootEnv+"="+root)
			return c
		}},
	}
	for _, r := range runs {
		b.Run(r.name, func(b *testing.B) {
			var peakKB int64
			for b.Loop() {
				cmd := r.cmd()
				cmd.Env = append(cmd.Environ(), "XDG_CONFIG_HOME="+b.TempDir())
				var stderr bytes.Buffer
				cmd.Stderr = &stderr // stdout: /dev/null
				kb, err := runPeakKB(cmd)
				if err != nil {
					b.Fatalf("%v: %v\n%s", cmd.Args, err, stderr.Bytes())
				}
				peakKB = max(peakKB, kb)
			}
			b.ReportMetric(float64(peakKB)/1024, "MiB-peak-RSS")
			b.ReportMetric(float64(mb), "MiB-journal")
		})
	}
}

// runPeakKB runs cmd and returns its peak RSS in KiB: its VmHWM, read from
// /proc every 2 ms while it runs (rusage's maxrss would count the memory
// of this process, which the child is forked from, too); -1 where the
// system does not say.
func runPeakKB(cmd *exec.Cmd) (int64, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	done := make(chan struct{})
	peak := make(chan int64)
	go func() {
		kb := int64(-1)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			if v, ok := statusHWM(status); ok {
				kb = max(kb, v)
			}
			select {
			case <-done:
				peak <- kb
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	return <-peak, err
}

// statusHWM is the VmHWM (KiB) a /proc/PID/status gives.
func statusHWM(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}

// TestJournalPaneChild is BenchmarkJournalMemory's pane: it reads one
// node's entries as the details pane does, then exits. It runs only as
// that benchmark's child.
func TestJournalPaneChild(t *testing.T) {
	root := os.Getenv(benchPaneRootEnv)
	if root == "" {
		t.Skip("the child of BenchmarkJournalMemory")
	}
	lines, err := readNodeJournal(context.Background(), &model.Node{Root: root, ID: benchPaneNode})
	if err != nil || len(lines) == 0 {
		t.Fatalf("%d lines of %s (%v)", len(lines), benchPaneNode, err)
	}
}

// writeBenchJournal writes about size bytes of journal lines to root's
// journal and returns how many.
func writeBenchJournal(b *testing.B, root string, size int64) int {
	b.Helper()
	p := actions.JournalPath(root)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	removed := make([]string, 40)
	for i := range removed {
		removed[i] = fmt.Sprintf(`{"heartbeat":"/srv/work/.sessions/s-1/w-%d/.heartbeat","team":"web","task_id":"t-%d","status":"completed"}`, i, i)
	}
	base := time.Now().Add(-30 * 24 * time.Hour).UTC()
	var written int64
	n := 0
	for ; written < size; n++ {
		e := actions.JournalEntry{Time: base.Add(time.Duration(n) * time.Second), User: "ops", Host: "build-7",
			Node: fmt.Sprintf("sessions/s-%d/w-%d", n%200, n%5), PID: 4000 + n%30000, By: 99}
		switch n % 3 {
		case 0:
			e.Action, e.Outcome = model.ActionKill, actions.OutcomeDone
			e.Checks = []string{"state running", "kill_candidate", fmt.Sprintf("pid %d verified (create time matches started)", e.PID)}
			e.Message = fmt.Sprintf("ended pid %d (SIGTERM, gone after 1.2s)", e.PID)
			e.Signals = []string{fmt.Sprintf("TERM %d", e.PID)}
		case 1:
			e.Action, e.Outcome = model.ActionResume, actions.OutcomeDone
			e.Checks = []string{"state dead", "cfa EXECUTE (running)", "budget total 1/9, EXECUTE 1/3", "no resume pending"}
			e.Message = fmt.Sprintf("resumed %s: started pid %d, retries total 2/9", e.Node, e.PID)
		default:
			e.Action, e.Outcome = model.ActionResume, actions.OutcomeRefused
			e.Checks = []string{"state running"}
			e.Message = fmt.Sprintf("node %s is running, not dead: beat 12s ago", e.Node)
		}
		if n%500 == 499 {
			e.Action, e.Outcome, e.Removed = model.ActionCompact, actions.OutcomeDone, removed
			e.Message = fmt.Sprintf("removed %d line(s) from .children", len(removed))
		}
		line, err := json.Marshal(e)
		if err != nil {
			b.Fatal(err)
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			b.Fatal(err)
		}
		written += int64(len(line))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return n
}
