package teaparty

import (
	"path/filepath"
	"strings"
	"testing"
)

// The management bus holds conversations of its own (TeaParty's bridge
// sweeps it, its dispatch-tree endpoint falls back to it) besides the pids
// the launcher stamps there for rows of other buses. A row there with no
// twin of its id elsewhere is a node, with its parent edge from
// parent_conversation_id, whether the root is the home or its jobs dir
// (an id never climbs out of the root with ".."); a row with a twin lends
// the twin its pid and is no node, and a management row under it hangs
// under the twin.
func TestManagementRowsAreConversationsOfTheirOwn(t *testing.T) {
	tr := newTree(t)
	insertConv(t, newBus(t, tr.jobBus, busDDL),
		conv{id: jobID, typ: typeJob, created: createdAt, agent: "webapp-lead"},
		conv{id: "dispatch:aa", typ: typeDispatch, created: createdAt, parent: jobID, agent: "coder"})
	insertConv(t, newBus(t, tr.management, busDDL),
		conv{id: "dispatch:aa", typ: typeDispatch, created: createdAt, pid: 4242, pidStarted: 1746638500.5},
		conv{id: "dispatch:ac", typ: typeDispatch, created: createdAt, parent: "dispatch:aa", agent: "helper"},
		conv{id: "dispatch:bb", typ: typeDispatch, created: createdAt, agent: "researcher", pid: 4343, pidStarted: 1746638501},
		conv{id: "dispatch:cc", typ: typeDispatch, state: statePaused, created: createdAt, parent: "dispatch:bb", agent: "reader"})
	twin := tr.jobBus + "#dispatch:aa"
	for _, root := range []string{tr.home, tr.jobs} {
		t.Run(filepath.Base(root), func(t *testing.T) {
			nodes, problems := read(t, root)
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			if n := nodes[tr.management+"#dispatch:aa"]; n != nil {
				t.Errorf("the management row that stamps dispatch:aa's pid is a node of its own: %s", n.ID)
			}
			if n := nodes[twin]; n == nil || n.Heartbeat.PID != 4242 {
				t.Errorf("dispatch:aa %+v, want the pid stamped in the management bus", n)
			}
			tests := []struct {
				key, id, parent, status string
				pid                     int
			}{
				{tr.management + "#dispatch:bb", "management/dispatch:bb", "", "running", 4343},
				{tr.management + "#dispatch:cc", "management/dispatch:cc", tr.management + "#dispatch:bb", "paused", 0},
				{tr.management + "#dispatch:ac", "management/dispatch:ac", twin, "starting", 0},
			}
			for _, tc := range tests {
				n := nodes[tc.key]
				if n == nil {
					t.Errorf("%s is no node; have %v", tc.key, keys(nodes))
					continue
				}
				if n.ID != tc.id || strings.Contains(n.ID, "..") {
					t.Errorf("%s: id %q, want %q", tc.key, n.ID, tc.id)
				}
				if n.Heartbeat.ParentHeartbeat != tc.parent || n.Heartbeat.Status != tc.status || n.Heartbeat.PID != tc.pid {
					t.Errorf("%s: parent %q, status %q, pid %d; want %q, %q, %d", tc.key,
						n.Heartbeat.ParentHeartbeat, n.Heartbeat.Status, n.Heartbeat.PID, tc.parent, tc.status, tc.pid)
				}
			}
		})
	}
}
