package treegen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// Generate writes a realistic `.sessions` tree under dir: sessions trees
// of perSession nodes each, at most depth levels deep (the session lead is
// level 1), laid out as `<ts>/.heartbeat` with sub-teams at
// `<ts>/<team>/<ts>/.heartbeat`. Every node has a heartbeat (status running,
// this process's pid, mtime now), a `.cfa-state.json` and an
// `.exec-stream.jsonl`; every parent has a `.children` naming its children
// by absolute path. The benchmark tree is Generate(dir, 1000, 10, 3, now).
func Generate(dir string, sessions, perSession, depth int, now time.Time) error {
	return GenerateWith(dir, Options{Sessions: sessions, PerSession: perSession, Depth: depth, Now: now})
}

// Options shape a generated tree (see Generate).
type Options struct {
	Sessions, PerSession, Depth int
	// Now is every file's mtime.
	Now time.Time
	// Processes are the live processes the heartbeats name, node k (in
	// generation order) Processes[k % len]: consecutive nodes name distinct
	// ones, so each session has as many as it has nodes, up to their count.
	// Empty means this process, for every node.
	Processes []Process
}

// Process is a process a generated heartbeat names: its pid and `started`
// (its create time, as the heartbeat writes it).
type Process struct {
	PID     int
	Started float64
}

// GenerateWith writes the tree Generate writes, shaped by o.
func GenerateWith(dir string, o Options) error {
	sessions, perSession, depth, now := o.Sessions, o.PerSession, o.Depth, o.Now
	if sessions < 0 || perSession < 1 || depth < 1 {
		return fmt.Errorf("generate tree in %s: need sessions >= 0, perSession >= 1, depth >= 1 (got %d, %d, %d)", dir, sessions, perSession, depth)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("generate tree: %w", err)
	}
	fanout := fanoutFor(perSession, depth)
	procs := o.Processes
	if len(procs) == 0 {
		// The heartbeats name this process, as a live agent would.
		pid := os.Getpid()
		started, err := protocol.ProcessStarted(pid)
		if err != nil {
			started = model.EpochSeconds(now.Add(-time.Hour))
		}
		procs = []Process{{PID: pid, Started: started}}
	}
	made := 0 // nodes generated so far
	for s := range sessions {
		ts := fmt.Sprintf("20260308-%06d", s)
		// Heap layout: node i's parent is (i-1)/fanout, which keeps the
		// tree within depth levels.
		dirs := make([]string, perSession)
		children := make([][]int, perSession)
		dirs[0] = filepath.Join(dir, ts)
		for i := 1; i < perSession; i++ {
			p := (i - 1) / fanout
			children[p] = append(children[p], i)
			dirs[i] = filepath.Join(dirs[p], fmt.Sprintf("team%d", len(children[p])), fmt.Sprintf("%s-%d", ts, i))
		}
		for i, d := range dirs {
			parentHB := ""
			if i > 0 {
				parentHB = filepath.Join(dirs[(i-1)/fanout], protocol.HeartbeatFile)
			}
			role := "lead"
			if i > 0 {
				role = "worker"
			}
			if len(children[i]) > 0 && i > 0 {
				role = "team-lead"
			}
			var reg []byte
			for k, c := range children[i] {
				line, err := json.Marshal(map[string]any{
					"heartbeat": filepath.Join(dirs[c], protocol.HeartbeatFile), "team": fmt.Sprintf("team%d", k+1),
					"task_id": fmt.Sprintf("task-%d", c), "status": "active",
				})
				if err != nil {
					return fmt.Errorf("generate tree: %w", err)
				}
				reg = append(append(reg, line...), '\n')
			}
			proc := procs[made%len(procs)]
			made++
			if err := writeNode(d, nodeFiles{pid: proc.PID, parent: parentHB, role: role, started: proc.Started, registry: reg}, now); err != nil {
				return err
			}
		}
	}
	return nil
}

// fanoutFor is the smallest fan-out that fits n nodes in depth levels.
func fanoutFor(n, depth int) int {
	for k := 1; ; k++ {
		total, level := 0, 1
		for range depth {
			total += level
			level *= k
		}
		if total >= n || k >= n {
			return k
		}
	}
}

type nodeFiles struct {
	pid      int
	parent   string
	role     string
	started  float64
	registry []byte
}

func writeNode(dir string, f nodeFiles, now time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("generate node %s: %w", dir, err)
	}
	hb, err := json.Marshal(map[string]any{
		"pid": f.pid, "parent_heartbeat": f.parent, "role": f.role, "started": f.started, "status": "running",
	})
	if err != nil {
		return fmt.Errorf("generate node %s: %w", dir, err)
	}
	files := map[string][]byte{
		protocol.HeartbeatFile:          hb,
		protocol.CfaFile:                []byte(`{"state": "EXECUTE", "history": [{"state": "PLAN"}], "backtrack_count": 0, "task_id": ""}`),
		".exec" + protocol.StreamSuffix: []byte("{\"event\": \"tool_use\"}\n"),
	}
	if len(f.registry) > 0 {
		files[protocol.RegistryFile] = f.registry
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return fmt.Errorf("generate node: %w", err)
		}
		if err := os.Chtimes(p, now, now); err != nil {
			return fmt.Errorf("generate node: %w", err)
		}
	}
	return nil
}

// HeartbeatPaths lists every heartbeat under root, in walk order: what a
// benchmark touches, and what a test counts a watcher's nodes against.
func HeartbeatPaths(root string) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == protocol.HeartbeatFile {
			paths = append(paths, p)
		}
		return err
	})
	return paths, err
}
