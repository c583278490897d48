package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// SPEC §6 details, §8 memory: the live engine keeps none of a node's file
// bytes, so the details read them in a command when they open: the
// heartbeat as it is on disk, the node's line in its parent's registry and
// its CfA history; a file that cannot be read any more says so in a line.
func TestDetailsReadTheFilesTheEngineDoesNotKeep(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, dir string) // after the snapshot, before the details open
		want   []string
	}{
		{name: "the files as they are", change: func(*testing.T, string) {}, want: []string{
			`"role": "worker-on-disk"`,                       // the heartbeat, indented
			`line 1: {"heartbeat":`, `"team":"team-on-disk"`, // the registry line verbatim
			`"HISTORY-ON-DISK"`, // the CfA history
		}},
		{name: "a heartbeat gone since", change: func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, protocol.HeartbeatFile)); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"heartbeat not readable: read node dir " + "DIR"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			lead := filepath.Join(root, "20260308-000000")
			child := filepath.Join(lead, "team1", "a")
			leadHB := writeNodeFile(t, lead, protocol.HeartbeatFile, map[string]any{"pid": os.Getpid(), "status": "running", "role": "lead", "parent_heartbeat": ""})
			childHB := writeNodeFile(t, child, protocol.HeartbeatFile, map[string]any{"pid": os.Getpid(), "status": "running", "role": "worker-on-disk", "parent_heartbeat": leadHB})
			writeNodeFile(t, lead, protocol.RegistryFile, map[string]any{"heartbeat": childHB, "team": "team-on-disk", "status": "active"})
			writeNodeFile(t, child, protocol.CfaFile, map[string]any{"state": "TASK_IN_PROGRESS", "history": []string{"HISTORY-ON-DISK"}})
			w, err := scanner.NewWatcher(scanner.Options{Roots: []string{root}}, scanner.WatchOptions{Poll: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			snap := w.Snapshot()
			id := "20260308-000000/team1/a"
			if n := snap.Node(id); n == nil || n.HeartbeatRaw() != nil || n.Cfa == nil || n.Parent == nil {
				t.Fatalf("want the child read without its bytes, got %+v", n)
			}
			tt.change(t, child)
			m := newTestModel(t, 200, 120, Options{Initial: snap, Files: scanner.ReadNodeDir})
			m.moveTo(m.rowIndex(id))
			run(m, press(m, "enter"))
			frame := stripped(m)
			for _, want := range tt.want {
				if want = strings.ReplaceAll(want, "DIR", child); !strings.Contains(frame, want) {
					t.Errorf("the details do not show %q:\n%s", want, frame)
				}
			}
		})
	}
}

// writeNodeFile writes v as JSON (a line of it, for a registry) to
// dir/name and returns the file's path.
func writeNodeFile(t *testing.T, dir, name string, v any) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
