package scanner

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §3 outside_root: the dir a store's record names (a middle
// worktree_path, a TeaParty session dir) is resolved, symlinks followed,
// and one no root holds flags the node outside_root, so that nothing is
// recommended there; a database root holds the directory it lies in.
func TestAStoreNodeWhoseDirLiesOutsideEveryRootIsOutsideRoot(t *testing.T) {
	real := func(p string) string {
		t.Helper()
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	mkdir := func(p string) string {
		t.Helper()
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	root, elsewhere, dbDir := real(t.TempDir()), real(t.TempDir()), real(t.TempDir())
	db := filepath.Join(dbDir, "db.sqlite3")
	if err := os.WriteFile(db, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	mkdir(filepath.Join(elsewhere, "sub"))
	roots := []Root{{Path: root, Resolved: root, Source: recordStore{}}, {Path: db, Resolved: db, Source: recordStore{}}}
	tests := []struct {
		name    string
		dir     string
		outside bool
	}{
		{"no dir", "", false},
		{"inside its root", mkdir(filepath.Join(root, "wt")), false},
		{"beside a database root", mkdir(filepath.Join(dbDir, "worktrees", "wf")), false},
		{"elsewhere", elsewhere, true},
		{"a symlink out of the root", link, true},
		{"below a symlink out of the root", filepath.Join(link, "sub"), true},
		{"/etc", "/etc", true},
		{"the filesystem root", "/", true},
		{"not absolute", "wt", true},
	}
	var nodes []*model.Node
	for i, tc := range tests {
		nodes = append(nodes, &model.Node{Root: root, Source: string(recordKind), ID: "n" + strconv.Itoa(i), HeartbeatPath: root + "#" + strconv.Itoa(i),
			HasHeartbeat: true, Heartbeat: &model.Heartbeat{HasParentField: true}, InfraDir: tc.dir})
	}
	snap := BuildForest(roots, nodes, nil)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := snap.Node("n" + strconv.Itoa(i))
			if n == nil {
				t.Fatal("no node")
			}
			if got := n.HasScanFlag(model.FlagOutsideRoot); got != tc.outside {
				t.Errorf("dir %q: outside_root = %v, want %v", tc.dir, got, tc.outside)
			}
		})
	}
}
