package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkReadHome reads a home of 200 sessions whose processes are gone
// (a hard kill leaves the file) and 500 jobs spread over them: the records
// a read opens and decodes, which the agents' homes of `--once` pay for
// (SPEC §8, the agents' stores).
func BenchmarkReadHome(b *testing.B) {
	store := newStore(b)
	dir, write := store.dir, store.write
	now := time.Now()
	const sessions, jobs = 200, 500
	for i := range sessions {
		pid := 4_000_000 + i // past any pid_max a host sets: gone
		write(fmt.Sprintf("sessions/%d.json", pid), map[string]any{"pid": pid, "sessionId": fmt.Sprintf("s-%03d", i),
			"cwd": "/home/u/project", "procStart": "123456", "startedAt": now.UnixMilli(), "kind": "interactive",
			"entrypoint": "cli", "version": "2.1.278", "status": "idle", "updatedAt": now.UnixMilli(),
			"statusUpdatedAt": now.UnixMilli(), "name": "fix-login"})
	}
	if err := os.MkdirAll(filepath.Join(dir, "projects"), 0o755); err != nil {
		b.Fatal(err)
	}
	for j := range jobs {
		write(fmt.Sprintf("jobs/job%04d/state.json", j), map[string]any{"state": "working", "sessionId": fmt.Sprintf("s-%03d", j%sessions),
			"name": fmt.Sprintf("job %d", j), "intent": "run the suite", "cwd": "/home/u/project",
			"createdAt": now.UTC().Format(time.RFC3339Nano), "updatedAt": now.UTC().Format(time.RFC3339Nano), "cliVersion": "2.1.278"})
	}
	src := Source{BootTime: func() time.Time { return time.Time{} }}
	b.ReportAllocs()
	for b.Loop() {
		if n := len(src.Read(dir, now).Nodes); n != sessions+jobs {
			b.Fatalf("%d nodes", n)
		}
	}
}
