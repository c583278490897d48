package scanner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// sharedTree is a session whose registry names its two children (one in
// its directory, one a team directory below) by the paths the walk finds
// them at, and a child whose registry names one grandchild the same way;
// every child's parent_heartbeat is its parent's.
func sharedTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	now := time.Now()
	lead := node(t, root, "lead", "")
	a := node(t, root, "lead/a", lead)
	b := node(t, root, "lead/team1/b", lead)
	g := node(t, root, "lead/a/g", a)
	writeFile(t, filepath.Join(root, "lead", protocol.RegistryFile), registry(a, b), now, 0)
	writeFile(t, filepath.Join(root, "lead/a", protocol.RegistryFile), registry(g), now, 0)
	return root
}

func sameString(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// checkSharedStrings: at 100,000 nodes each path held twice is about
// 10 MB, so a registry entry naming a child holds the child's own
// HeartbeatPath, and a child's parent_heartbeat its parent's HeartbeatPath,
// when they are equal (SPEC §8's memory budget).
func checkSharedStrings(t *testing.T, nodes []*model.Node) {
	t.Helper()
	byPath := map[string]*model.Node{}
	for _, n := range nodes {
		byPath[n.HeartbeatPath] = n
	}
	entries, parents := 0, 0
	for _, n := range nodes {
		for _, line := range n.RegistryLines() {
			if line.Entry == nil {
				t.Fatalf("%s: registry line %d does not parse: %s", n.InfraDir, line.Number, line.Err)
			}
			c := byPath[line.Entry.Heartbeat]
			if c == nil {
				t.Fatalf("%s: registry names %s, not found", n.InfraDir, line.Entry.Heartbeat)
			}
			entries++
			if !sameString(line.Entry.Heartbeat, c.HeartbeatPath) {
				t.Errorf("%s: the registry entry of %s holds a copy of its heartbeat path", n.InfraDir, c.InfraDir)
			}
		}
		if n.Heartbeat == nil || n.Heartbeat.ParentHeartbeat == "" {
			continue
		}
		p := byPath[n.Heartbeat.ParentHeartbeat]
		if p == nil {
			t.Fatalf("%s: parent_heartbeat %s not found", n.InfraDir, n.Heartbeat.ParentHeartbeat)
		}
		parents++
		if !sameString(n.Heartbeat.ParentHeartbeat, p.HeartbeatPath) {
			t.Errorf("%s: parent_heartbeat holds a copy of %s's heartbeat path", n.InfraDir, p.InfraDir)
		}
		if !sameString(n.DeclaredParent(), p.HeartbeatPath) {
			t.Errorf("%s: DeclaredParent holds a copy of %s's heartbeat path", n.InfraDir, p.InfraDir)
		}
	}
	if entries != 3 || parents != 3 {
		t.Fatalf("checked %d registry entries and %d parent_heartbeats, want 3 and 3", entries, parents)
	}
}

func TestWalkHoldsAPathNamedTwiceOnce(t *testing.T) {
	w, err := Discover(Options{Roots: []string{sharedTree(t)}})
	if err != nil {
		t.Fatal(err)
	}
	checkSharedStrings(t, w.Nodes)
}

func TestWatcherHoldsAPathNamedTwiceOnce(t *testing.T) {
	w, err := NewWatcher(Options{Roots: []string{sharedTree(t)}}, WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	nodes := snapshotNodes(w.Snapshot())
	checkSharedStrings(t, nodes)
}

// TestWatcherKeepsAPathNamedTwiceOnceWhenItReadsAgain: a node read again
// (a heartbeat replaced, a registry replaced) holds the strings its paths
// had, not copies: over a long watch every node is read again.
func TestWatcherKeepsAPathNamedTwiceOnceWhenItReadsAgain(t *testing.T) {
	root := sharedTree(t)
	w := newTestWatcher(t, WatchOptions{}, root)
	lead := filepath.Join(root, "lead", protocol.HeartbeatFile)
	a := filepath.Join(root, "lead/a", protocol.HeartbeatFile)
	b := filepath.Join(root, "lead/team1/b", protocol.HeartbeatFile)
	writeHeartbeat(t, filepath.Dir(a), os.Getpid(), 1.7e9, "waiting", lead)
	reg := filepath.Join(root, "lead", protocol.RegistryFile)
	writeFile(t, reg+".tmp", registry(b, a), time.Now(), 0)
	if err := os.Rename(reg+".tmp", reg); err != nil {
		t.Fatal(err)
	}
	await(t, w, "lead/a waiting and the lead's registry replaced", func(snap *model.Snapshot) bool {
		n, l := snap.Node("lead/a"), snap.Node("lead")
		return n != nil && n.Status() == "waiting" && l != nil && len(l.RegistryLines()) == 2 &&
			l.RegistryLines()[0].Entry != nil && l.RegistryLines()[0].Entry.Heartbeat == b
	})
	nodes := snapshotNodes(w.Snapshot())
	checkSharedStrings(t, nodes)
}

// A directory between a node and a child its registry names (a team's) is
// held as a slice of that entry's string, which names it too: at 100,000
// nodes those directories' paths were 7 MB of their own. The walk lists
// it, and the watcher holds it, as that slice.
func TestADirectoryBetweenANodeAndItsRegisteredChildIsASliceOfTheEntry(t *testing.T) {
	root := sharedTree(t)
	team := filepath.Join(root, "lead", "team1")
	entryOf := func(nodes []*model.Node) string {
		for _, n := range nodes {
			for _, line := range n.RegistryLines() {
				if e := line.Entry; e != nil && strings.HasPrefix(e.Heartbeat, team+string(filepath.Separator)) {
					return e.Heartbeat
				}
			}
		}
		t.Fatalf("no registry entry names a child in %s", team)
		return ""
	}
	walk, err := Discover(Options{Roots: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	entry := entryOf(walk.Nodes)
	listed := false
	for _, d := range walk.Dirs {
		if d == team {
			listed = true
			if !sameString(d, entry) {
				t.Errorf("the walk lists %s as a string of its own, not a slice of the entry %s", d, entry)
			}
		}
	}
	if !listed {
		t.Fatalf("the walk did not list %s: %v", team, walk.Dirs)
	}

	w, err := NewWatcher(Options{Roots: []string{root}}, WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	nodes := snapshotNodes(w.Snapshot())
	entry = entryOf(nodes)
	d := w.dirs.byPath[team]
	if d == nil {
		t.Fatalf("the watcher holds no record of %s", team)
	}
	if !sameString(d.path, entry) {
		t.Errorf("the watcher holds %s as a string of its own, not a slice of the entry %s", d.path, entry)
	}
}

// snapshotNodes lists a snapshot's nodes, in no particular order.
func snapshotNodes(snap *model.Snapshot) []*model.Node {
	var nodes []*model.Node
	for _, n := range snap.Nodes() {
		nodes = append(nodes, n)
	}
	return nodes
}
