package claudecode

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Whatever a session file, a job's state or a team's config holds, a read
// never panics, and a node it makes has an id and a key.
func FuzzRecords(f *testing.F) {
	f.Add(`{"pid": 4242, "sessionId": "s", "procStart": "123", "status": "busy"}`)
	f.Add(`{"pid": 4242, "procStart": 12, "status": "waiting", "waitingFor": "approve Bash", "statusUpdatedAt": 1.5e12}`)
	f.Add(`{"state": "blocked", "sessionId": "s", "updatedAt": "2026-11-26T10:00:00Z"}`)
	f.Add(`{"leadSessionId": "s", "members": [{"name": "a", "tmuxPaneId": "in-process", "isActive": false}]}`)
	f.Add(`{"pid": -1, "status": null}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, content string) {
		dir := filepath.Join(t.TempDir(), ".claude")
		for _, rel := range []string{"sessions/4242.json", "jobs/j/state.json", "teams/t/config.json", "teams/t/inboxes/a.json"} {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		facts := Source{SocketDir: t.TempDir()}.Read(dir, time.Now())
		for _, n := range facts.Nodes {
			if n.ID == "" || n.HeartbeatPath == "" || n.Heartbeat == nil {
				t.Errorf("node %+v: no id, key or record", n)
			}
		}
	})
}
