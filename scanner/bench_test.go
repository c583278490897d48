package scanner

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/liveness"
)

// benchTree generates the SPEC §8 tree (sessions × perSession nodes, nested
// 3 deep) once per benchmark run, outside the timer.
func benchTree(b *testing.B, sessions, perSession int) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), ".sessions")
	if err := treegen.Generate(dir, sessions, perSession, 3, time.Now()); err != nil {
		b.Fatal(err)
	}
	return dir
}

func benchScan(b *testing.B, sessions, perSession int) {
	dir := benchTree(b, sessions, perSession)
	opts := Options{
		Roots: []string{dir},
		// The system probe, as --once uses it, and beats 10 s old, as most
		// beats are between two touches: past the exit grace every pid is
		// decisive, so the scan pays for its process lookups. (Every
		// generated heartbeat names this process, so they are deduplicated
		// to one; distinct live pids cost about 10 µs each, spread over the
		// cores.)
		Probe: liveness.SystemProbe{},
		Now:   func() time.Time { return time.Now().Add(10 * time.Second) },
	}
	want := sessions * perSession
	cpu := startCPU()
	b.ResetTimer()
	for b.Loop() {
		snap, err := Scan(opts)
		if err != nil {
			b.Fatal(err)
		}
		if snap.NodeCount() != want || len(snap.Sessions) != sessions {
			b.Fatalf("scanned %d nodes in %d sessions, want %d in %d", snap.NodeCount(), len(snap.Sessions), want, sessions)
		}
	}
	cpu.report(b)
}

// cpuClock reports the process's CPU time (user + system) per op beside
// the wall time: on a shared machine the wall time swings with the load,
// the CPU time much less.
type cpuClock struct{ start time.Duration }

func startCPU() cpuClock { return cpuClock{start: processCPU()} }

func (c cpuClock) report(b *testing.B) {
	b.ReportMetric(float64(processCPU()-c.start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkColdScan10k is the SPEC §8 cold scan: discover, read, build and
// classify 1,000 sessions × 10 nodes.
func BenchmarkColdScan10k(b *testing.B) { benchScan(b, 1000, 10) }

// BenchmarkBareWalk10k is the baseline: filepath.WalkDir of the same tree,
// with a stat of every entry and no file read.
func BenchmarkBareWalk10k(b *testing.B) {
	dir := benchTree(b, 1000, 10)
	cpu := startCPU()
	b.ResetTimer()
	for b.Loop() {
		entries := 0
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if _, err := d.Info(); err != nil {
				return err
			}
			entries++
			return nil
		})
		if err != nil || entries == 0 {
			b.Fatalf("walk: %d entries, %v", entries, err)
		}
	}
	cpu.report(b)
}

// BenchmarkColdScan100k checks that 100,000 nodes work (10,000 sessions).
func BenchmarkColdScan100k(b *testing.B) {
	if testing.Short() {
		b.Skip("100,000 nodes take a while to generate")
	}
	benchScan(b, 10000, 10)
}

// TestGenerateBenchmarkTreeShape checks the generator: node count, depth
// bound, and that every non-session node is registered by its parent.
func TestGenerateBenchmarkTreeShape(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".sessions")
	if err := treegen.Generate(dir, 3, 10, 3, time.Now()); err != nil {
		t.Fatal(err)
	}
	snap := forest(t, Options{Roots: []string{dir}})
	if snap.NodeCount() != 30 || len(snap.Sessions) != 3 {
		t.Fatalf("%d nodes in %d sessions, want 30 in 3", snap.NodeCount(), len(snap.Sessions))
	}
	for _, n := range snap.Nodes() {
		depth := 1
		for p := n.Parent; p != nil; p = p.Parent {
			depth++
		}
		if depth > 3 {
			t.Errorf("%s is %d deep", n.ID, depth)
		}
		if n.Parent != nil && (n.Entry == nil || n.HasScanFlag("conflict")) {
			t.Errorf("%s: entry %v flags %v", n.ID, n.Entry, n.ScanFlags())
		}
		if n.Cfa == nil || n.ActivityMtime.IsZero() || n.Heartbeat == nil || n.Heartbeat.PID != os.Getpid() {
			t.Errorf("%s lacks generated facts: %+v", n.ID, n)
		}
	}
	if err := treegen.Generate(dir, 1, 0, 3, time.Now()); err == nil {
		t.Error("perSession 0 accepted")
	}
}
