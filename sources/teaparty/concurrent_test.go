package teaparty

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
)

// workerKey is the key of the i-th worker row the writer below commits.
func workerKey(bus string, i int) string { return bus + "#" + fmt.Sprintf("dispatch:%012d", i) }

// writeWorker commits the i-th worker: its row created, then its pid
// stamped, then (every third) closed, each its own transaction, as
// TeaParty's dispatcher and launcher write them.
func writeWorker(exec func(string, ...any) error, i int) error {
	id := fmt.Sprintf("dispatch:%012d", i)
	if err := exec(`INSERT INTO conversations (id, type, state, created_at, parent_conversation_id) VALUES (?, 'dispatch', 'active', ?, ?)`,
		id, 1746638200.0+float64(i), jobID); err != nil {
		return err
	}
	if err := exec(`UPDATE conversations SET pid = ?, pid_started = ? WHERE id = ?`, 40000+i, 1746638300.0, id); err != nil {
		return err
	}
	if i%3 == 0 {
		return exec(`UPDATE conversations SET state = 'closed' WHERE id = ?`, id)
	}
	return nil
}

// docs/sources.md: TeaParty writes its bus while dispatchtop reads it, and
// dispatchtop never writes it. Three conditions, on every read: the read
// fails nothing, no committed row is missing, and the bus's files are as
// the writer left them, byte for byte, apart from SQLite's own -shm. The
// writer commits as fast as it can beside the reads, then between reads
// (its frames still in the -wal, not checkpointed), then stops, and the
// bus at rest is read (SQLite makes an empty -wal to read it: no data).
func TestReadsWhileTeaPartyWritesLoseNoRowAndChangeNoByte(t *testing.T) {
	tr := newTree(t)
	db := newBus(t, tr.jobBus, busDDL)
	insertConv(t, db, conv{id: jobID, typ: typeJob, created: 1746638100})
	exec := func(q string, args ...any) error { _, err := db.Exec(q, args...); return err }
	src := New()
	// readAll reads the home and checks the first two conditions: no
	// problem, and the job's row and every worker below committed there.
	readAll := func(committed int) {
		t.Helper()
		facts := src.Read(tr.home, now)
		if len(facts.Problems) > 0 {
			t.Fatalf("read with %d workers committed: %v", committed, facts.Problems)
		}
		keys := map[string]bool{}
		for _, n := range facts.Nodes {
			keys[n.HeartbeatPath] = true
		}
		if !keys[filepath.Join(tr.job, ".heartbeat")] {
			t.Fatalf("read with %d workers committed: the job's row is missing", committed)
		}
		for i := range committed {
			if !keys[workerKey(tr.jobBus, i)] {
				t.Fatalf("read with %d workers committed: worker %d is missing", committed, i)
			}
		}
	}

	const beside, between = 300, 60
	storefixtures.ReadsBesideWrites(t, tr.job, beside, between, func(i int) error { return writeWorker(exec, i) }, readAll)

	// At rest: the writer's close checkpoints and removes the -wal.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	files := storefixtures.DirBytes(t, tr.job)
	readAll(beside + between)
	storefixtures.RequireSameBytes(t, "a read of the bus at rest", files, storefixtures.DirBytes(t, tr.job))
}
