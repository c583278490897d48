package middle

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkRead1000Workflows reads a store of 1,000 workflows, every other
// one running with a session and a fresh beat, the rest completed: the
// middle part of the sources' --once budget (SPEC §8). The panes are asked
// of the user's default tmux server, as --once asks them.
func BenchmarkRead1000Workflows(b *testing.B) {
	path := filepath.Join(b.TempDir(), dbFile)
	db := newStore(b, path, migrations)
	nowMs := time.Now().UnixMilli()
	for i := range 1000 {
		w := wf{id: fmt.Sprintf("wf-%04d", i), epic: fmt.Sprint(i), state: "completed", created: nowMs, updated: nowMs,
			session: fmt.Sprintf("middle-%04d", i), lastHeartbeat: nowMs}
		if i%2 == 0 {
			w.state = "running"
		}
		insertWorkflow(b, db, w)
	}
	db.Close()
	src := New()
	if facts := src.Read(path, time.Now()); len(facts.Nodes) != 1000 || len(facts.Problems) > 0 {
		b.Fatalf("read %d nodes (want 1000) and problems %v", len(facts.Nodes), facts.Problems)
	}
	b.ReportAllocs()
	for b.Loop() {
		src.Read(path, time.Now())
	}
}
