package middle

import (
	"fmt"
	"testing"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
)

// writeWorkflow commits the i-th workflow as middle drives one: created
// pending, then launching, then running with a hook beat, then (every
// third) completed, each its own transaction.
func writeWorkflow(exec func(string, ...any) error, i int) error {
	id := fmt.Sprintf("wf-%04d", i)
	ms := nowMs - int64(1000-i)*1000
	if err := exec(`INSERT INTO workflows (id, kind, repo, epic_ref, adapter, state, created_at, updated_at, controlled_by)
		VALUES (?, 'implementation', 'acme/api', ?, 'claude', 'pending', ?, ?, 'middle')`, id, fmt.Sprint(i), ms, ms); err != nil {
		return err
	}
	states := []string{"launching", "running"}
	if i%3 == 0 {
		states = append(states, "completed")
	}
	for _, state := range states {
		if err := exec(`UPDATE workflows SET state = ?, updated_at = ?, last_heartbeat = ? WHERE id = ?`, state, ms+1, ms+1, id); err != nil {
			return err
		}
	}
	return nil
}

// docs/sources.md: middle writes its database while dispatchtop reads it,
// and dispatchtop never writes it. Three conditions, on every read: the
// read fails nothing, no committed row is missing, and the database's
// files are as the writer left them, byte for byte, apart from SQLite's
// own -shm. The writer commits as fast as it can beside the reads, then
// between reads (its frames still in the -wal, not checkpointed), then
// stops, and the database at rest is read (SQLite makes an empty -wal to
// read it: no data).
func TestReadsWhileMiddleWritesLoseNoRowAndChangeNoByte(t *testing.T) {
	h := newHome(t)
	exec := func(q string, args ...any) error { _, err := h.writer.Exec(q, args...); return err }
	src := New()
	src.PaneLookup = func() (map[string]Session, error) { return map[string]Session{}, nil }
	readAll := func(committed int) {
		t.Helper()
		facts := src.Read(h.dir, now)
		if len(facts.Problems) > 0 {
			t.Fatalf("read with %d workflows committed: %v", committed, facts.Problems)
		}
		keys := map[string]bool{}
		for _, n := range facts.Nodes {
			keys[n.HeartbeatPath] = true
		}
		for i := range committed {
			if !keys[h.db+"#"+fmt.Sprintf("wf-%04d", i)] {
				t.Fatalf("read with %d workflows committed: workflow %d is missing", committed, i)
			}
		}
	}

	const beside, between = 300, 60
	storefixtures.ReadsBesideWrites(t, h.dir, beside, between, func(i int) error { return writeWorkflow(exec, i) }, readAll)

	if err := h.writer.Close(); err != nil {
		t.Fatal(err)
	}
	files := storefixtures.DirBytes(t, h.dir)
	readAll(beside + between)
	storefixtures.RequireSameBytes(t, "a read of the database at rest", files, storefixtures.DirBytes(t, h.dir))
}
