package codex

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkRead reads a home of 1,000 threads, half of them children,
// with the process lookup of every read.
func BenchmarkRead(b *testing.B) {
	h := newHome(b)
	now := time.Now()
	for i := range 1000 {
		id := fmt.Sprintf("t-%04d", i)
		if _, err := h.writer.Exec(`INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title,
			sandbox_policy, approval_mode, archived) VALUES (?, '', ?, ?, 'cli', 'openai', '/w', 't', 'read-only', 'on-request', ?)`,
			id, now.Unix(), now.Unix(), i%3); err != nil {
			b.Fatal(err)
		}
		if i%2 == 1 {
			h.edge(b, "t-0000", id, "open")
		}
	}
	src := &Source{program: testProgram}
	b.ResetTimer()
	for b.Loop() {
		if f := src.Read(h.dir, now); len(f.Nodes) != 1000 {
			b.Fatalf("%d nodes", len(f.Nodes))
		}
	}
}
