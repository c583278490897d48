package scanner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// treeShape is what the tree says of every node: its parent, its scan flags
// and the claims it lost or refused, one line a node, sorted.
func treeShape(snap *model.Snapshot) string {
	var lines []string
	for id, n := range snap.Nodes() {
		flags := slices.Clone(n.ScanFlags())
		slices.Sort(flags)
		lines = append(lines, fmt.Sprintf("%s parent=%q flags=%v others=%v refused=%v",
			id, n.ParentID, flags, n.OtherParents(), n.RefusedChildren()))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// The live engine links the same forest as a cold scan: a registry entry
// that names another session's node is a conflict there too, not an edge.
func TestWatchRegistryAcrossSessionsAsTheColdScan(t *testing.T) {
	for _, tc := range registryCases() {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			buildRegistryCase(t, root, tc)
			cold := treeShape(forest(t, Options{Roots: []string{root}}))
			w := newTestWatcher(t, watchModes[1].wo, root)
			var live string
			awaitWithin(t, w, 5e9, "the cold scan's tree", func(s *model.Snapshot) bool {
				live = treeShape(s)
				return live == cold
			})
			checkRegistryCase(t, tc, w.Snapshot())
		})
	}
}

// A heartbeat rewritten from no parent_heartbeat field (an old writer) to
// `parent_heartbeat: ""` (a session lead) changes the edges although the
// parent path read is "" both times: the live engine relinks, and the lead
// leaves the session that registered it.
func TestWatchHeartbeatBecomingASessionLeadLeavesTheRegistrant(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			pid, started := self(t)
			writeHeartbeat(t, filepath.Join(root, "X"), pid, started, "running", "")
			yDir := filepath.Join(root, "Y")
			if err := os.MkdirAll(yDir, 0o755); err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(map[string]any{"pid": pid, "started": started, "status": "running", "role": "worker"})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(yDir, protocol.HeartbeatFile), b, 0o644); err != nil {
				t.Fatal(err)
			}
			appendLine(t, filepath.Join(root, "X", protocol.RegistryFile), map[string]any{
				"heartbeat": filepath.Join(yDir, protocol.HeartbeatFile), "team": "t", "task_id": nil, "status": "active"})
			w := newTestWatcher(t, m.wo, root)
			await(t, w, "Y adopted by X", func(s *model.Snapshot) bool {
				y := s.Node("Y")
				return y != nil && y.ParentID == "X" && y.State == model.StateRunning
			})

			writeHeartbeat(t, yDir, pid, started, "running", "")
			await(t, w, "Y a session of its own, in conflict", func(s *model.Snapshot) bool {
				y, x := s.Node("Y"), s.Node("X")
				return y != nil && x != nil && y.Parent == nil && y.HasFlag(model.FlagConflict) &&
					x.HasFlag(model.FlagConflict) && len(x.Children) == 0 && len(s.Sessions) == 2
			})
		})
	}
}
