package scanner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// writeFile writes content to path (making its directories) with an mtime
// age before now.
func writeFile(t *testing.T, path, content string, now time.Time, age time.Duration) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	at := now.Add(-age)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// heartbeat renders a heartbeat document.
func heartbeat(pid int, parent, status string) string {
	b, _ := json.Marshal(map[string]any{"pid": pid, "parent_heartbeat": parent, "role": "agent", "started": 1.7e9, "status": status})
	return string(b)
}

// registry renders `.children` lines naming the given heartbeat paths.
func registry(heartbeats ...string) string {
	var sb strings.Builder
	for _, hb := range heartbeats {
		b, _ := json.Marshal(map[string]any{"heartbeat": hb, "team": "t", "task_id": nil, "status": "active"})
		sb.Write(b)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// node writes a running heartbeat in dir/rel and returns its path.
func node(t *testing.T, dir, rel, parentHB string) string {
	t.Helper()
	p := filepath.Join(dir, rel, protocol.HeartbeatFile)
	writeFile(t, p, heartbeat(os.Getpid(), parentHB, "running"), time.Now(), 0)
	return p
}

// forest discovers and builds (no classification) the given roots.
func forest(t *testing.T, opts Options) *model.Snapshot {
	t.Helper()
	w, err := Discover(opts)
	if err != nil {
		t.Fatalf("discover: %v", err)
	}
	return BuildForest(w.Roots, w.Nodes, w.Problems)
}

// ids lists every node id of a snapshot, sorted.
func ids(snap *model.Snapshot) []string {
	var out []string
	for id := range snap.Nodes() {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func mustNode(t *testing.T, snap *model.Snapshot, id string) *model.Node {
	t.Helper()
	n := snap.Node(id)
	if n == nil {
		t.Fatalf("node %q not in snapshot; have %v", id, ids(snap))
	}
	return n
}

// hasProblem reports whether a problem about a path under pathPart says msg.
func hasProblem(problems []model.Problem, pathPart, msg string) bool {
	for _, p := range problems {
		if strings.Contains(p.Path, pathPart) && strings.Contains(p.Error, msg) {
			return true
		}
	}
	return false
}
