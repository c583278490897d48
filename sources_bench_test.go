package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/cli"
	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/report"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/middle"
	"github.com/dispatchtop/dispatchtop/sources/middle/middletest"
	"github.com/dispatchtop/dispatchtop/sources/teaparty"
	"github.com/dispatchtop/dispatchtop/sources/teaparty/teapartytest"
)

// The stores of BenchmarkSourcesOnceJSON10k: 100 TeaParty jobs of 10 bus
// rows each (the job's and 9 workers'), and 1,000 middle workflows.
const (
	benchJobs           = 100
	benchRowsPerJob     = 10
	benchMiddleWorkflow = 1000
)

// BenchmarkSourcesOnceJSON10k is what the other sources add to
// `--once --json` (scan, classify, the JSON document) over the 10,000-node
// tree of BenchmarkOnceJSON10k: 100 TeaParty jobs with 1,000 bus rows in
// all and a middle database of 1,000 workflows (SPEC §8 budget: 100 ms).
// In process, so that the figure is the sources' and not a process
// start's. "added" runs the tree alone and the tree with the stores in
// each iteration, one after the other (their order alternating), so that
// the machine's load weighs on both alike, and reports each one's time
// per run and their difference, added-ms/op, and the CPU time the stores
// add on every core, added-cpu-ms/op: the figure the machine's other load
// moves least. "stores" reads the stores alone: what they cost without
// the tree's noise around it.
func BenchmarkSourcesOnceJSON10k(b *testing.B) {
	dir := b.TempDir()
	tree := filepath.Join(dir, "tree")
	if err := treegen.Generate(tree, 1000, 10, 3, time.Now()); err != nil {
		b.Fatal(err)
	}
	home := filepath.Join(dir, "webapp", ".teaparty")
	if err := writeBenchJobs(filepath.Join(home, "jobs")); err != nil {
		b.Fatal(err)
	}
	middleDB := filepath.Join(dir, "middle", "db.sqlite3")
	if err := writeBenchWorkflows(middleDB); err != nil {
		b.Fatal(err)
	}
	native := scanner.Options{Roots: []string{tree}, Thresholds: model.DefaultThresholds(), Probe: liveness.SystemProbe{}, Now: time.Now}
	withSources := native
	withSources.Roots = []string{tree, string(sources.TeaParty) + ":" + home, string(sources.Middle) + ":" + middleDB}
	withSources.Sources = []sources.Source{teaparty.New(), middle.New()}
	storesOnly := withSources
	storesOnly.Roots = withSources.Roots[1:]
	storeNodes := benchJobs*benchRowsPerJob + benchMiddleWorkflow

	benchStoresAdded(b, "sources", native, withSources, storesOnly, 10000, storeNodes)
}

// benchStoresAdded runs what stores add to a scan and its JSON document:
// "added" scans the tree alone (native) and with the stores (with) in
// each iteration, one after the other (their order alternating) so that
// the machine's load weighs on both alike, and reports each one's time
// per run (native-ms/op, <label>-ms/op), their difference (added-ms/op,
// and the median of each iteration's, added-median-ms: what a burst of
// other load landing on one run moves least) and the CPU time the stores
// add on every core (added-cpu-ms/op); "stores" reads the stores alone
// (storesOnly): what they cost without the tree's noise around it.
func benchStoresAdded(b *testing.B, label string, native, with, storesOnly scanner.Options, treeNodes, storeNodes int) {
	b.Run("added", func(b *testing.B) {
		checkScan(b, native, treeNodes)
		checkScan(b, with, treeNodes+storeNodes)
		var nativeTime, withTime, nativeCPU, withCPU time.Duration
		runs := []struct {
			opts       scanner.Options
			total, cpu *time.Duration
		}{{native, &nativeTime, &nativeCPU}, {with, &withTime, &withCPU}}
		var diffs []time.Duration
		i := 0
		for b.Loop() {
			var took [2]time.Duration
			for k := range runs {
				r := runs[(i+k)%2]
				restore := asOnce()
				start, cpu := time.Now(), cpuTime()
				scanAndWriteJSON(b, r.opts)
				took[(i+k)%2] = time.Since(start)
				*r.total += took[(i+k)%2]
				*r.cpu += cpuTime() - cpu
				restore()
			}
			diffs = append(diffs, took[1]-took[0])
			i++
		}
		slices.Sort(diffs)
		b.ReportMetric(float64(diffs[len(diffs)/2])/1e6, "added-median-ms")
		perRun := func(d time.Duration) float64 { return float64(d) / float64(i) / 1e6 }
		b.ReportMetric(perRun(nativeTime), "native-ms/op")
		b.ReportMetric(perRun(withTime), label+"-ms/op")
		b.ReportMetric(perRun(withTime-nativeTime), "added-ms/op")
		b.ReportMetric(perRun(nativeCPU), "native-cpu-ms/op")
		b.ReportMetric(perRun(withCPU-nativeCPU), "added-cpu-ms/op")
	})
	b.Run("stores", func(b *testing.B) {
		checkScan(b, storesOnly, storeNodes)
		var spent time.Duration
		for b.Loop() {
			restore := asOnce()
			cpu := cpuTime()
			scanAndWriteJSON(b, storesOnly)
			spent += cpuTime() - cpu
			restore()
		}
		b.ReportMetric(float64(spent)/float64(b.N)/1e6, "cpu-ms/op")
	})
}

// cpuTime is the CPU time the process has used, user and system, on
// every core: the work a run costs, which the machine's other load moves
// far less than the wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// checkScan checks once that a scan of opts finds nodes nodes and no
// problem.
func checkScan(b *testing.B, opts scanner.Options, nodes int) {
	b.Helper()
	snap, err := scanner.Scan(opts)
	if err != nil {
		b.Fatal(err)
	}
	if len(snap.ByID) != nodes || len(snap.Problems) > 0 {
		b.Fatalf("scan found %d nodes (want %d) and %d problems %v", len(snap.ByID), nodes, len(snap.Problems), snap.Problems)
	}
}

// asOnce makes the process's heap and collector what a `--once` run starts
// with: the garbage of the runs before it collected (a process starts with
// none) and the collector paced as a one-shot run paces it (held off until
// its heap is 64 MB, cli.HoldOnceCollection). Measured under the default
// pacing instead, a run paid for collections of the runs before it that
// `--once` never makes. The func returned puts the pacing back.
func asOnce() (restore func()) {
	runtime.GC()
	return cli.HoldOnceCollection()
}

// scanAndWriteJSON is what --once --json does after its start: a scan,
// classified, written as the JSON document.
func scanAndWriteJSON(b *testing.B, opts scanner.Options) {
	snap, err := scanner.Scan(opts)
	if err != nil {
		b.Fatal(err)
	}
	if err := report.WriteJSON(io.Discard, snap); err != nil {
		b.Fatal(err)
	}
}

// writeBenchJobs writes benchJobs job dirs under jobs, each a bus with the
// job's row and its workers' dispatch rows: a third running as this
// process, a third closed, a third not started yet; each worker with its
// session dir, worktree and stream.
func writeBenchJobs(jobs string) error {
	pid := os.Getpid()
	started, err := protocol.ProcessStarted(pid)
	if err != nil {
		return err
	}
	now := float64(time.Now().UnixNano()) / 1e9
	for j := range benchJobs {
		job := filepath.Join(jobs, fmt.Sprintf("job-%03d--bench", j))
		db, err := teapartytest.Open(filepath.Join(job, "messages.db"), teapartytest.DDL)
		if err != nil {
			return err
		}
		jobRow := fmt.Sprintf("job:bench:%03d", j)
		rows := []teapartytest.Conversation{{ID: jobRow, Type: "job", CreatedAt: now, Agent: "job-lead", Slug: "bench", PID: pid, PIDStarted: started}}
		for w := 1; w < benchRowsPerJob; w++ {
			sid := fmt.Sprintf("%03d-%02d", j, w)
			worktree := filepath.Join(job, "tasks", sid, "worktree")
			if err := os.MkdirAll(worktree, 0o755); err != nil {
				db.Close()
				return err
			}
			if err := os.WriteFile(filepath.Join(job, "tasks", sid, "stream.jsonl"), []byte("{}\n"), 0o644); err != nil {
				db.Close()
				return err
			}
			c := teapartytest.Conversation{ID: "dispatch:" + sid, Type: "dispatch", CreatedAt: now, Agent: "worker",
				Parent: jobRow, Slug: "bench", Worktree: worktree}
			switch w % 3 {
			case 0:
				c.PID, c.PIDStarted = pid, started
			case 1:
				c.State = "closed"
			}
			rows = append(rows, c)
		}
		err = teapartytest.Insert(db, rows...)
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeBenchWorkflows writes middle's database with benchMiddleWorkflow
// workflows, every other one running with a fresh heartbeat, the rest
// completed.
func writeBenchWorkflows(path string) error {
	db, err := middletest.Open(path, middletest.Migrations)
	if err != nil {
		return err
	}
	defer db.Close()
	nowMs := time.Now().UnixMilli()
	for i := range benchMiddleWorkflow {
		state := "completed"
		if i%2 == 0 {
			state = "running"
		}
		_, err := db.Exec(`INSERT INTO workflows (id, kind, repo, epic_number, epic_ref, adapter, state, created_at, updated_at,
			session_name, controlled_by, last_heartbeat) VALUES (?, 'implementation', 'acme/api', ?, ?, 'claude', ?, ?, ?, ?, 'middle', ?)`,
			fmt.Sprintf("wf-%04d", i), i, fmt.Sprint(i), state, nowMs, nowMs, fmt.Sprintf("middle-%04d", i), nowMs)
		if err != nil {
			return fmt.Errorf("insert workflow %d: %w", i, err)
		}
	}
	return nil
}
