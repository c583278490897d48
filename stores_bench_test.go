package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/cli"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/middle/middletest"
	"github.com/dispatchtop/dispatchtop/sources/teaparty/teapartytest"
)

// The size of the stores of BenchmarkStoreRows*: storeRowsEnv sets it
// (1000000 for SPEC §8's million rows); a plain `go test -bench` writes
// defaultStoreRows. storeDirEnv names a dir that keeps the stores between
// runs (written when absent): a million rows take a while to write.
const (
	storeRowsEnv     = "DISPATCHTOP_BENCH_STORE_ROWS"
	storeDirEnv      = "DISPATCHTOP_BENCH_STORE_DIR"
	defaultStoreRows = 20000
	// storeNodeBudget is SPEC §8's memory a node of a store may cost, the
	// peak RSS of `--once --json` over the store divided by its rows; it
	// is held from storeBudgetRows up, where the process's own base no
	// longer weighs.
	storeNodeBudget = 2 << 10
	storeBudgetRows = 200000
)

// storeRows is the benchmarks' size: storeRowsEnv, else defaultStoreRows.
func storeRows(b *testing.B) int {
	s := os.Getenv(storeRowsEnv)
	if s == "" {
		return defaultStoreRows
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 2 {
		b.Fatalf("%s=%q: want a number of rows, at least 2", storeRowsEnv, s)
	}
	return n
}

// benchStores are a TeaParty home with one job of rows conversations and
// a middle database of rows workflows, written once per size (kept under
// storeDirEnv when it is set); the TeaParty rows name pid as their
// process, started at started.
type benchStores struct {
	rows                 int
	teapartyHome, middle string
}

func writeBenchStores(b *testing.B, rows int) benchStores {
	b.Helper()
	dir := os.Getenv(storeDirEnv)
	if dir == "" {
		dir = b.TempDir()
	}
	dir = filepath.Join(dir, fmt.Sprintf("rows-%d", rows))
	s := benchStores{rows: rows, teapartyHome: filepath.Join(dir, "webapp", ".teaparty"), middle: filepath.Join(dir, "middle", "db.sqlite3")}
	done := filepath.Join(dir, "written")
	if _, err := os.Stat(done); err == nil {
		return s
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.teapartyHome, "management"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := writeBusRows(filepath.Join(s.teapartyHome, "jobs", "job-001--bench", "messages.db"), rows); err != nil {
		b.Fatal(err)
	}
	if err := writeWorkflowRows(s.middle, rows); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return s
}

// inTx runs insert in one transaction on the database at path, made by
// ddl: a million rows one commit each would take hours.
func inTx(path string, ddl []string, open func(string, []string) (*sql.DB, error), insert func(*sql.Tx) error) error {
	db, err := open(path, ddl)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	if err := insert(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// writeBusRows writes one job's bus of rows conversations: the job's row
// and its workers', a tree ten wide under the first thousand; a third of
// them active (each hundredth of those awaiting input, with the question
// in a message), a third closed, a third pending. The active ones name
// this process as theirs (its pid and create time), so that they are
// running while the binary reads them.
func writeBusRows(path string, rows int) error {
	pid := os.Getpid()
	started, err := protocol.ProcessStarted(pid)
	if err != nil {
		return err
	}
	now := float64(time.Now().UnixNano()) / 1e9
	return inTx(path, teapartytest.DDL, teapartytest.Open, func(tx *sql.Tx) error {
		conv, err := tx.Prepare(`INSERT INTO conversations (id, type, state, created_at, awaiting_input, agent_name,
			parent_conversation_id, request_id, project_slug, worktree_path, pid, pid_started)
			VALUES (?, ?, ?, ?, ?, ?, ?, '', 'bench', '', ?, ?)`)
		if err != nil {
			return err
		}
		msg, err := tx.Prepare(`INSERT INTO messages VALUES (?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		const job = "job:bench:001"
		if _, err := conv.Exec(job, "job", "active", now, 0, "job-lead", "", pid, started); err != nil {
			return err
		}
		id := func(i int) string { return fmt.Sprintf("dispatch:%07d", i) }
		for i := 1; i < rows; i++ {
			parent := job
			if i > 1000 {
				parent = id(i / 10)
			}
			state, awaiting, p, st := "pending", 0, 0, 0.0
			switch i % 3 {
			case 0:
				state, p, st = "active", pid, started
				if i%300 == 0 {
					awaiting = 1
				}
			case 1:
				state = "closed"
			}
			if _, err := conv.Exec(id(i), "dispatch", state, now, awaiting, "worker", parent, p, st); err != nil {
				return fmt.Errorf("insert conversation %d: %w", i, err)
			}
			if awaiting == 1 {
				if _, err := msg.Exec("m-"+id(i), id(i), "worker", "may I merge?", now); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// writeWorkflowRows writes middle's database with rows workflows in Epics
// of ten rounds each: every other one running with a fresh beat and a
// session, the rest completed.
func writeWorkflowRows(path string, rows int) error {
	nowMs := time.Now().UnixMilli()
	return inTx(path, middletest.Migrations, middletest.Open, func(tx *sql.Tx) error {
		ins, err := tx.Prepare(`INSERT INTO workflows (id, kind, repo, epic_number, epic_ref, adapter, state, created_at, updated_at,
			session_name, controlled_by, last_heartbeat) VALUES (?, 'implementation', 'acme/api', ?, ?, 'claude', ?, ?, ?, ?, 'middle', ?)`)
		if err != nil {
			return err
		}
		for i := range rows {
			state := "completed"
			if i%2 == 0 {
				state = "running"
			}
			if _, err := ins.Exec(fmt.Sprintf("wf-%07d", i), i/10, strconv.Itoa(i/10), state, nowMs+int64(i), nowMs, fmt.Sprintf("middle-%07d", i), nowMs); err != nil {
				return fmt.Errorf("insert workflow %d: %w", i, err)
			}
		}
		return nil
	})
}

// storeRoots are the roots of each store's run.
func (s benchStores) roots() []struct{ name, root string } {
	return []struct{ name, root string }{
		{"teaparty", string(sources.TeaParty) + ":" + s.teapartyHome},
		{"middle", string(sources.Middle) + ":" + s.middle},
	}
}

// BenchmarkStoreRowsOnceJSON is the built binary's `--once --json` over a
// store of storeRows rows, TeaParty's and middle's, each alone: wall and
// CPU time per run, the peak RSS (VmHWM) and that divided by the rows,
// held to SPEC §8's budget a node from storeBudgetRows up.
func BenchmarkStoreRowsOnceJSON(b *testing.B) {
	rows := storeRows(b)
	stores := writeBenchStores(b, rows)
	config := b.TempDir()
	for _, store := range stores.roots() {
		b.Run(store.name, func(b *testing.B) {
			var peak int64
			var wall, cpu time.Duration
			for b.Loop() {
				cmd := exec.Command(binary, "--once", "--json", "--fail-on", "none", store.root)
				cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config)
				var out, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &stderr
				start := time.Now()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				hwm := followHWM(cmd.Process.Pid)
				if err := cmd.Wait(); err != nil {
					b.Fatalf("--once --json %s: %v: %s", store.root, err, stderr.Bytes())
				}
				wall += time.Since(start)
				peak = max(peak, <-hwm)
				if want := fmt.Sprintf(`"nodes": %d,`, rows); !bytes.Contains(out.Bytes(), []byte(want)) {
					b.Fatalf("output does not hold %d nodes: %.300s", rows, out.String())
				}
				ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
				cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			}
			perNode := float64(peak) / float64(rows)
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MiB")
			b.ReportMetric(perNode, "rss-B/node")
			b.Logf("%s, %d rows: wall %.1f s, cpu %.1f s a run; peak RSS %.0f MiB, %.0f B a node",
				store.name, rows, wall.Seconds()/float64(b.N), cpu.Seconds()/float64(b.N), float64(peak)/(1<<20), perNode)
			if rows >= storeBudgetRows && perNode > storeNodeBudget {
				b.Errorf("%s: %d rows peak at %.0f MiB, %.0f B a node: over the budget of %d", store.name, rows, float64(peak)/(1<<20), perNode, storeNodeBudget)
			}
		})
	}
}

// followHWM reads the process's peak RSS (VmHWM) every few milliseconds
// until it is gone, and sends the last figure read. Not the child's
// rusage: a child forked with CLONE_VM, as os/exec forks, starts its
// maxrss at this process's peak.
func followHWM(pid int) <-chan int64 {
	out := make(chan int64, 1)
	go func() {
		var last int64
		path := fmt.Sprintf("/proc/%d/status", pid)
		for {
			b, err := os.ReadFile(path)
			if err != nil {
				break
			}
			_, after, ok := bytes.Cut(b, []byte("VmHWM:"))
			if !ok {
				break // a zombie: its memory is gone
			}
			var kib int64
			if _, err := fmt.Sscan(string(after), &kib); err == nil {
				last = kib << 10
			}
			time.Sleep(5 * time.Millisecond)
		}
		out <- last
	}()
	return out
}

// BenchmarkStoreRowsInProcess is the same `--once --json` in this process:
// what a CPU or heap profile of a store's read sees.
func BenchmarkStoreRowsInProcess(b *testing.B) {
	rows := storeRows(b)
	stores := writeBenchStores(b, rows)
	b.Setenv("XDG_CONFIG_HOME", b.TempDir())
	for _, store := range stores.roots() {
		b.Run(store.name, func(b *testing.B) {
			args := []string{"--once", "--json", "--fail-on", "none", store.root}
			for b.Loop() {
				if code := cli.Execute(args, nil, io.Discard, io.Discard); code != 0 {
					b.Fatalf("--once --json: exit code %d", code)
				}
			}
		})
	}
}
