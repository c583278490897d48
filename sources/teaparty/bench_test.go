package teaparty

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRead100Jobs reads a home of 100 jobs, each a bus of the job's
// row and 9 workers' (their session dirs, worktrees and streams there), at
// rest: the TeaParty part of the sources' --once budget (SPEC §8).
// cpu-ms/op is the CPU time of a read on every core, the figure the
// machine's other load moves least.
func BenchmarkRead100Jobs(b *testing.B) {
	tr := newTree(b)
	for j := range 100 {
		job := filepath.Join(tr.jobs, fmt.Sprintf("job-%03d--bench", j))
		db := newBus(b, filepath.Join(job, busFile), busDDL)
		jobRow := fmt.Sprintf("job:bench:%03d", j)
		rows := []conv{{id: jobRow, typ: typeJob, created: 1746638100, agent: "job-lead", slug: "bench"}}
		for w := 1; w < 10; w++ {
			sid := fmt.Sprintf("%03d-%02d", j, w)
			dir := workerDir(b, job, sid)
			if err := os.WriteFile(filepath.Join(dir, streamFile), []byte("{}\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			c := conv{id: "dispatch:" + sid, typ: typeDispatch, created: 1746638100, agent: "worker",
				parent: jobRow, slug: "bench", worktree: filepath.Join(dir, "worktree")}
			if w%3 == 1 {
				c.state = stateClosed
			}
			rows = append(rows, c)
		}
		insertConv(b, db, rows...)
		db.Close()
	}
	src := New()
	if facts := src.Read(tr.home, now); len(facts.Nodes) != 1000 || len(facts.Problems) > 0 {
		b.Fatalf("read %d nodes (want 1000) and problems %v", len(facts.Nodes), facts.Problems)
	}
	// By how many goroutines read the buses: what readers is chosen from.
	defer func(r int) { readers = r }(readers)
	for _, k := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("readers=%d", k), func(b *testing.B) {
			readers = k
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				src.Read(tr.home, now)
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// cpuTime is the CPU time the process has used, user and system: a
// figure the machine's other load moves less than the wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRereadOneCommit is what one commit into one bus of a home of
// 100 jobs × 10 workers costs the source (SPEC §8, the live sources): a
// message written into a random bus, then the read after it, told that
// bus's -wal moved. It is the path `make bench-sources-live` measures
// from outside, without the terminal; its CPU profile says where a
// commit's cost lies.
func BenchmarkRereadOneCommit(b *testing.B) {
	tr := newTree(b)
	var dbs []*sql.DB
	var buses []string
	for j := range 100 {
		job := filepath.Join(tr.jobs, fmt.Sprintf("job-%03d--bench", j))
		bus := filepath.Join(job, busFile)
		db := newBus(b, bus, busDDL)
		jobRow := fmt.Sprintf("job:bench:%03d", j)
		rows := []conv{{id: jobRow, typ: typeJob, created: 1746638100, agent: "job-lead", slug: "bench"}}
		for w := range 10 {
			sid := fmt.Sprintf("%03d-%02d", j, w)
			dir := workerDir(b, job, sid)
			rows = append(rows, conv{id: "dispatch:" + sid, typ: typeDispatch, created: 1746638100, agent: "worker",
				parent: jobRow, slug: "bench", worktree: filepath.Join(dir, "worktree")})
		}
		insertConv(b, db, rows...)
		dbs, buses = append(dbs, db), append(buses, bus)
	}
	// As a live home's are two seconds on: a dir listed so soon after it
	// was made is listed again at every read (see racyWindow).
	ageDirs(b, tr.home)
	src := New()
	facts, k := src.Reread(tr.home, now, nil, nil)
	if len(facts.Nodes) != 1100 || len(facts.Problems) > 0 {
		b.Fatalf("read %d nodes (want 1100) and problems %v", len(facts.Nodes), facts.Problems)
	}
	b.ReportAllocs()
	cpu := cpuTime()
	for i := 0; b.Loop(); i++ {
		j := i % len(dbs)
		b.StopTimer()
		insertMessage(b, dbs[j], fmt.Sprintf("m%d", i), fmt.Sprintf("dispatch:%03d-%02d", j, i%10), "worker", "working", 1746638200)
		b.StartTimer()
		_, k = src.Reread(tr.home, now, k, []string{buses[j] + "-wal"})
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}
