package scanner

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
		{"not there yet, inside its root", filepath.Join(root, "state", "s1"), false},
		{"not there yet, below a symlink out of the root", filepath.Join(link, "state", "s1"), true},
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

// resolve looks a path up once, and never a path whose parent is not
// there: the state dirs of a store's sessions, all under one dir not made
// yet, cost one lookup of that dir and one of its parent, not one each.
func TestResolveLooksNothingUpUnderADirNotThere(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var looked []string
	b := &builder{lstat: func(p string) (fs.FileInfo, error) {
		looked = append(looked, p)
		return os.Lstat(p)
	}}
	b.resolve(root) // the root and its parents, looked up once
	looked = nil
	for i := range 100 {
		p := filepath.Join(root, ".dispatchtop", "claude", "s"+strconv.Itoa(i))
		if got := b.resolve(p); got != p {
			t.Fatalf("resolve(%s) = %s", p, got)
		}
	}
	want := []string{filepath.Join(root, ".dispatchtop")}
	if !slices.Equal(looked, want) {
		t.Errorf("looked up %d paths %v, want %v", len(looked), looked[:min(len(looked), 4)], want)
	}
}

// SPEC §2: a store's node declares its parent by key, the HeartbeatPath
// of a node: another store node's, or a walked node's heartbeat file; a
// key no node has invents no parent.
func TestAStoreNodeHangsUnderTheNodeItsKeyNames(t *testing.T) {
	root := t.TempDir()
	walked := &model.Node{Root: root, InfraDir: filepath.Join(root, "lead"), HeartbeatPath: filepath.Join(root, "lead", ".heartbeat"),
		HasHeartbeat: true, Heartbeat: &model.Heartbeat{PID: 1}}
	stored := func(id, key, parent string) *model.Node {
		return &model.Node{Root: root, Source: string(recordKind), ID: id, HeartbeatPath: key, HasHeartbeat: true,
			Heartbeat: &model.Heartbeat{HasParentField: true, ParentHeartbeat: parent}}
	}
	tests := []struct {
		name, parentKey, wantParent string
	}{
		{"a walked node's heartbeat", walked.HeartbeatPath, "lead"},
		{"another store node's key", root + "#lead", "store-lead"},
		{"a key no node has", root + "#gone", ""},
		{"a walked node's dir, not its heartbeat", walked.InfraDir, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			walked := *walked
			nodes := []*model.Node{&walked, stored("store-lead", root+"#lead", ""), stored("child", root+"#child", tt.parentKey)}
			snap := BuildForest([]Root{{Path: root, Resolved: root, Source: recordStore{}, AlsoNative: true}}, nodes, nil)
			child := snap.Node("child")
			if child == nil {
				t.Fatal("no child")
			}
			if got := child.ParentID; got != tt.wantParent {
				t.Errorf("parent of a node declaring %q = %q, want %q", tt.parentKey, got, tt.wantParent)
			}
		})
	}
}
