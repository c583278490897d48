package scanner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// The registry fixture: session X registers Y in its `.children`; where Y
// belongs by its own word (its parent_heartbeat, its directory) varies.
// Trees are scoped (SPEC §2): a registry entry never pulls a node out of
// another session, it is a conflict on both sides instead.

// workerHeartbeat writes a running heartbeat in dir/rel without any
// parent_heartbeat field (old writers) and returns its path.
func workerHeartbeat(t *testing.T, dir, rel string) string {
	t.Helper()
	p := filepath.Join(dir, rel, protocol.HeartbeatFile)
	b, err := json.Marshal(map[string]any{"pid": os.Getpid(), "role": "agent", "started": 1.7e9, "status": "running"})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, string(b), time.Now(), 0)
	return p
}

// registryCase is one variant of where the registered node Y lives.
type registryCase struct {
	name string
	// build writes X (a session lead) and the other nodes under root and
	// returns Y's heartbeat path, which X's .children then names.
	build      func(t *testing.T, root string) string
	y          string   // Y's id
	yParent    string   // Y's parent id ("" when Y is a session)
	yOthers    []string // the parents Y names as losing claims
	adopted    bool     // X keeps Y as its child
	xConflicts bool     // X's registry entry is a refused claim
}

func registryCases() []registryCase {
	return []registryCase{
		{
			name: "a session lead (parent_heartbeat empty) is not adopted",
			build: func(t *testing.T, root string) string {
				return node(t, root, "Y", "")
			},
			y: "Y", yParent: "", yOthers: []string{"X"}, xConflicts: true,
		},
		{
			name: "a node whose parent_heartbeat names another session's lead is not adopted",
			build: func(t *testing.T, root string) string {
				return node(t, root, "Y", node(t, root, "L", ""))
			},
			y: "Y", yParent: "L", yOthers: []string{"X"}, xConflicts: true,
		},
		{
			name: "a node nested in another session's dir is not adopted",
			build: func(t *testing.T, root string) string {
				node(t, root, "L", "")
				return workerHeartbeat(t, root, "L/team/Y")
			},
			y: "L/team/Y", yParent: "L", yOthers: []string{"X"}, xConflicts: true,
		},
		{
			name: "a node nested below another session's worker is not adopted",
			build: func(t *testing.T, root string) string {
				l := node(t, root, "L", "")
				node(t, root, "L/team/T", l)
				return workerHeartbeat(t, root, "L/team/T/sub/Y")
			},
			y: "L/team/T/sub/Y", yParent: "L/team/T", yOthers: []string{"X"}, xConflicts: true,
		},
		{
			name: "a node without a parent_heartbeat field (old writers) is adopted",
			build: func(t *testing.T, root string) string {
				return workerHeartbeat(t, root, "Y")
			},
			y: "Y", yParent: "X", adopted: true,
		},
		{
			name: "a session lead nested in the registering lead's dir is its child (nesting agrees)",
			build: func(t *testing.T, root string) string {
				return node(t, root, "X/team/Y", "")
			},
			y: "X/team/Y", yParent: "X", adopted: true,
		},
		{
			name: "within one session the registry still beats parent_heartbeat (SPEC §2)",
			build: func(t *testing.T, root string) string {
				tm := node(t, root, "X/team/T", filepath.Join(root, "X", protocol.HeartbeatFile))
				return node(t, root, "Y", tm)
			},
			y: "Y", yParent: "X", yOthers: []string{"X/team/T"}, adopted: true,
		},
		{
			name: "a node of another session's dir naming the registering lead is its child",
			build: func(t *testing.T, root string) string {
				node(t, root, "L", "")
				return node(t, root, "L/team/Y", filepath.Join(root, "X", protocol.HeartbeatFile))
			},
			y: "L/team/Y", yParent: "X", yOthers: []string{"L"}, adopted: true,
		},
	}
}

// buildRegistryCase writes the fixture of tc under root: X a session lead
// whose .children names Y.
func buildRegistryCase(t *testing.T, root string, tc registryCase) {
	t.Helper()
	node(t, root, "X", "")
	y := tc.build(t, root)
	writeFile(t, filepath.Join(root, "X", protocol.RegistryFile), registry(y), time.Now(), 0)
}

// checkRegistryCase checks the forest of tc's fixture.
func checkRegistryCase(t *testing.T, tc registryCase, snap *model.Snapshot) {
	t.Helper()
	x, y := mustNode(t, snap, "X"), mustNode(t, snap, tc.y)
	if y.ParentID != tc.yParent {
		t.Errorf("Y's parent = %q, want %q", y.ParentID, tc.yParent)
	}
	if isSession := slices.Contains(snap.Sessions, y); isSession != (tc.yParent == "") {
		t.Errorf("Y is a session: %v, want %v", isSession, tc.yParent == "")
	}
	if !slices.Equal(y.OtherParents(), tc.yOthers) || y.HasScanFlag(model.FlagConflict) != (len(tc.yOthers) > 0) {
		t.Errorf("Y: flags %v, other parents %v; want conflict with %v", y.ScanFlags(), y.OtherParents(), tc.yOthers)
	}
	var underX bool
	x.Walk(func(n *model.Node) { underX = underX || n == y })
	if underX != tc.adopted {
		t.Errorf("Y in X's subtree: %v, want %v", underX, tc.adopted)
	}
	var refused []string
	if tc.xConflicts {
		refused = []string{tc.y}
	}
	if x.HasScanFlag(model.FlagConflict) != tc.xConflicts || !slices.Equal(x.RefusedChildren(), refused) {
		t.Errorf("X: flags %v, refused children %v; want conflict %v, refused %v", x.ScanFlags(), x.RefusedChildren(), tc.xConflicts, refused)
	}
}

// SPEC §2, trees are scoped: X's `.children` naming Y adopts Y only where
// Y's own word (parent_heartbeat, directory) does not place it in another
// session.
func TestRegistryNeverAdoptsAcrossSessions(t *testing.T) {
	for _, tc := range registryCases() {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			buildRegistryCase(t, root, tc)
			checkRegistryCase(t, tc, forest(t, Options{Roots: []string{root}}))
		})
	}
}

// A re-read of one session's directory (what an action does for a
// self-contained session) places Y as the whole forest does: Y's own
// parents are read from disk even where the walk did not go.
func TestRegistryScopedReadKeepsTheSessions(t *testing.T) {
	for _, tc := range registryCases() {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			buildRegistryCase(t, root, tc)
			roots, _, err := PrepareRoots([]string{root})
			if err != nil {
				t.Fatal(err)
			}
			walk, err := DiscoverDir(roots, filepath.Join(root, "X"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			snap := BuildForest(walk.Roots, walk.Nodes, walk.Problems)
			x, y := mustNode(t, snap, "X"), mustNode(t, snap, tc.y)
			var underX bool
			x.Walk(func(n *model.Node) { underX = underX || n == y })
			if underX != tc.adopted || y.ParentID != tc.yParent {
				t.Errorf("Y in X's subtree: %v (parent %q), want %v", underX, y.ParentID, tc.adopted)
			}
		})
	}
}

// The reasons name both claims: the node's own and the registry's, on
// both sides.
func TestRegistryConflictReasonsNameBothClaims(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	node(t, root, "X", "")
	y := node(t, root, "Y", "")
	writeFile(t, filepath.Join(root, "X", protocol.RegistryFile), registry(y), time.Now(), 0)
	snap, err := Scan(Options{Roots: []string{root}, Probe: aliveProbe{}})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		"Y": `; a session lead (parent_heartbeat ""); also claimed by X`,
		"X": "; its .children names Y of another session: not adopted",
	} {
		if n := mustNode(t, snap, id); !strings.Contains(n.Reason, want) {
			t.Errorf("%s: reason %q, want it to contain %q", id, n.Reason, want)
		}
	}
	if len(snap.Sessions) != 2 {
		t.Errorf("sessions %d, want 2", len(snap.Sessions))
	}
}

// Recommendations follow the tree, so they stay in their session too: a
// dead session lead that another session's `.children` names is resumed on
// its own, not made to wait for the registering lead (running, or dead and
// "the topmost dead ancestor").
func TestRecommendationsStayInTheirSession(t *testing.T) {
	tests := []struct {
		name    string
		xDead   bool
		wantX   model.Action
		wantY   model.Action
		notInYs string // what Y's reason must not say
	}{
		{name: "registering lead running", wantX: model.ActionNone, wantY: model.ActionResume, notInYs: "its lead is running"},
		{name: "registering lead dead too", xDead: true, wantX: model.ActionResume, wantY: model.ActionResume, notInYs: "resume goes on X"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			now := time.Now()
			if tc.xDead {
				writeFile(t, filepath.Join(root, "X", protocol.HeartbeatFile), heartbeat(0, "", "running"), now, 10*time.Minute)
			} else {
				node(t, root, "X", "")
			}
			y := filepath.Join(root, "Y", protocol.HeartbeatFile)
			writeFile(t, y, heartbeat(0, "", "running"), now, 10*time.Minute) // no pid, stale: dead
			writeFile(t, filepath.Join(root, "X", protocol.RegistryFile), registry(y), now, 0)
			snap, err := Scan(Options{Roots: []string{root}, Probe: aliveProbe{}, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			x, yn := mustNode(t, snap, "X"), mustNode(t, snap, "Y")
			if yn.State != model.StateDead || yn.Action != tc.wantY || strings.Contains(yn.Reason, tc.notInYs) {
				t.Errorf("Y: %s %s (%s), want dead %s", yn.State, yn.Action, yn.Reason, tc.wantY)
			}
			if x.Action != tc.wantX {
				t.Errorf("X: %s %s (%s), want %s", x.State, x.Action, x.Reason, tc.wantX)
			}
		})
	}
}
