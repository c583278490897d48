package chatroom

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadStateFile: no state file crashes a read; every node read has a
// record, and every agent a pid and its daemon as parent. The fixture's
// state file is the seed corpus.
func FuzzReadStateFile(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(fixtureHome, ".chatroom", "machines", "state", machineID+".json")); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"version": "1", "agents": {"/": {"pid": 1, "harness": "x", "startedAt": "2026-02-11T09:31:07Z"}}}`))
	f.Add([]byte(`{"version": "1", "agents": null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		store := t.TempDir()
		path := filepath.Join(store, "machines", "state", machineID+".json")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, n := range (Source{}).Read(store, fixtureNow).Nodes {
			if n.Heartbeat == nil {
				t.Fatalf("node %s without a record", n.ID)
			}
			if n.ID != machineID && (n.Heartbeat.PID <= 0 || n.Heartbeat.ParentHeartbeat != path) {
				t.Fatalf("agent %s: pid %d parent %q", n.ID, n.Heartbeat.PID, n.Heartbeat.ParentHeartbeat)
			}
		}
	})
}
