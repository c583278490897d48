package scanner

import (
	"testing"
	"time"
	"unsafe"

	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/model"
)

// BuildForest links a walked tree with a few allocations a node (its
// candidate, its place in the maps and lists), none for its id, which is
// a slice of its infra dir: at 100,000 nodes every allocation a node is
// 100,000 more for the collector, and an id of its own each was 5 MB.
func TestBuildForestAllocatesLittleANode(t *testing.T) {
	dir := t.TempDir()
	if err := treegen.Generate(dir, 50, 10, 3, time.Now()); err != nil {
		t.Fatal(err)
	}
	w, err := Discover(Options{Roots: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	copies := func() []*model.Node {
		nodes := make([]*model.Node, len(w.Nodes))
		for i, n := range w.Nodes {
			nodes[i] = CopyFacts(n)
		}
		return nodes
	}
	copying := testing.AllocsPerRun(5, func() { copies() })
	building := testing.AllocsPerRun(5, func() { BuildForest(w.Roots, copies(), nil) })
	if perNode := (building - copying) / float64(len(w.Nodes)); perNode > 3 {
		t.Errorf("%.1f allocations a node, want at most 3", perNode)
	}
	snap := BuildForest(w.Roots, copies(), nil)
	for _, n := range snap.ByID {
		if start, end := uintptr(unsafe.Pointer(unsafe.StringData(n.InfraDir))), uintptr(unsafe.Pointer(unsafe.StringData(n.ID))); end < start || end >= start+uintptr(len(n.InfraDir)) {
			t.Errorf("%s: its id is a string of its own", n.ID)
		}
	}
}
