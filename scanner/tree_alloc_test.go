package scanner

import (
	"path/filepath"
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

// The forest splits the paths files name, and makes ids, without Clean's
// passes when the paths are absolute and clean already: the same directory,
// name and relative path as filepath's, for every shape of path.
func TestSplitNamedIsFilepathsDirAndBase(t *testing.T) {
	paths := []string{"/r/s/.heartbeat", "/r/.heartbeat", "/.heartbeat", "/", "//", "/r//s/.heartbeat", "/r/./s/.heartbeat",
		"/r/../s/.heartbeat", "/r/s/", "/r/s/.", "/r/s/..", "s/.heartbeat", "./s/.heartbeat", "../s/.heartbeat", ".heartbeat",
		"", ".", "..", "/r/s/..heartbeat", "/r/.../.heartbeat", "/r/s/.heartbeat/"}
	for _, named := range paths {
		for _, dir := range []string{"/r/p", "/"} {
			abs := named
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(dir, abs)
			}
			abs = filepath.Clean(abs)
			gotDir, gotFile := splitNamed(named, dir)
			if gotDir != filepath.Dir(abs) || gotFile != filepath.Base(abs) {
				t.Errorf("splitNamed(%q, %q) = %q, %q; want %q, %q", named, dir, gotDir, gotFile, filepath.Dir(abs), filepath.Base(abs))
			}
		}
		if clean := filepath.IsAbs(named) && filepath.Clean(named) == named && named != "/"; isCleanAbs(named) != clean {
			t.Errorf("isCleanAbs(%q) = %v, want %v", named, !clean, clean)
		}
		for _, root := range []string{"/r", "/r/s", "/", "/r/"} {
			want, err := filepath.Rel(root, named)
			if got, ok := relativeTo(root, named); ok != (err == nil) || ok && got != want {
				t.Errorf("relativeTo(%q, %q) = %q, %v; want %q, %v", root, named, got, ok, want, err)
			}
		}
		if isCleanAbs(named) {
			for d := named; d != "/"; d = filepath.Dir(d) {
				if got := parentOfClean(d); got != filepath.Dir(d) {
					t.Errorf("parentOfClean(%q) = %q, want %q", d, got, filepath.Dir(d))
				}
			}
		}
	}
}
