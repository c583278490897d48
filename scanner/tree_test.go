package scanner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// Each case builds a tree under a fresh root and checks one rule of SPEC §2.
func TestTreeEdges(t *testing.T) {
	tests := []struct {
		name  string
		build func(t *testing.T, root string)
		check func(t *testing.T, root string, snap *model.Snapshot)
	}{
		{
			name: "parent-declared edge from .children, absolute path",
			build: func(t *testing.T, root string) {
				node(t, root, "A", "")
				workerHeartbeat(t, root, "B") // no parent_heartbeat: not a session lead
				writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), registry(filepath.Join(root, "B", protocol.HeartbeatFile)), time.Now(), 0)
			},
			check: func(t *testing.T, root string, snap *model.Snapshot) {
				b := mustNode(t, snap, "B")
				if b.ParentID != "A" || b.Entry == nil || b.HasScanFlag(model.FlagConflict) {
					t.Errorf("B parent %q entry %v flags %v", b.ParentID, b.Entry, b.ScanFlags())
				}
			},
		},
		{
			name: "registry path relative to the parent's infra dir",
			build: func(t *testing.T, root string) {
				node(t, root, "job-1", "")
				node(t, root, "job-1/tasks/task-1", "")
				writeFile(t, filepath.Join(root, "job-1", protocol.RegistryFile), registry("tasks/task-1/.heartbeat"), time.Now(), 0)
			},
			check: func(t *testing.T, root string, snap *model.Snapshot) {
				if n := mustNode(t, snap, "job-1/tasks/task-1"); n.ParentID != "job-1" || n.Entry == nil {
					t.Errorf("parent %q entry %v", n.ParentID, n.Entry)
				}
			},
		},
		{
			name: "child-declared edge from parent_heartbeat",
			build: func(t *testing.T, root string) {
				a := node(t, root, "A", "")
				node(t, root, "B", a)
			},
			check: func(t *testing.T, root string, snap *model.Snapshot) {
				if b := mustNode(t, snap, "B"); b.ParentID != "A" || b.Entry != nil {
					t.Errorf("B parent %q entry %v", b.ParentID, b.Entry)
				}
				if len(snap.Sessions) != 1 {
					t.Errorf("sessions = %d, want 1", len(snap.Sessions))
				}
			},
		},
		{
			name: "directory nesting when nothing else says",
			build: func(t *testing.T, root string) {
				node(t, root, "S", "")
				node(t, root, "S/team/W", "")
			},
			check: func(t *testing.T, root string, snap *model.Snapshot) {
				if w := mustNode(t, snap, "S/team/W"); w.ParentID != "S" || w.HasScanFlag(model.FlagConflict) {
					t.Errorf("W parent %q flags %v", w.ParentID, w.ScanFlags())
				}
			},
		},
		{
			name: "conflict within a session: registry beats parent_heartbeat and nesting, losers named",
			build: func(t *testing.T, root string) {
				q := node(t, root, "Q", "")
				node(t, root, "Q/team/P", q)
				node(t, root, "Q/team/K", q)
				writeFile(t, filepath.Join(root, "Q/team/P", protocol.RegistryFile), registry(filepath.Join(root, "Q/team/K", protocol.HeartbeatFile)), time.Now(), 0)
			},
			check: func(t *testing.T, root string, snap *model.Snapshot) {
				k := mustNode(t, snap, "Q/team/K")
				if k.ParentID != "Q/team/P" || !k.HasScanFlag(model.FlagConflict) || !slices.Equal(k.OtherParents(), []string{"Q"}) {
					t.Errorf("K parent %q flags %v others %v", k.ParentID, k.ScanFlags(), k.OtherParents())
				}
			},
		},
		{
			name: "conflict: parent_heartbeat beats nesting",
			build: func(t *testing.T, root string) {
				p := node(t, root, "P", "")
				node(t, root, "Q", "")
				node(t, root, "Q/team/K", p)
			},
			check: func(t *testing.T, root string, snap *model.Snapshot) {
				k := mustNode(t, snap, "Q/team/K")
				if k.ParentID != "P" || !k.HasScanFlag(model.FlagConflict) || !slices.Equal(k.OtherParents(), []string{"Q"}) {
					t.Errorf("K parent %q flags %v others %v", k.ParentID, k.ScanFlags(), k.OtherParents())
				}
			},
		},
		{
			name: "registry entry without heartbeat is a missing node at its would-be dir",
			build: func(t *testing.T, root string) {
				node(t, root, "A", "")
				writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), registry(filepath.Join(root, "A/docs/4", protocol.HeartbeatFile)), time.Now(), 0)
			},
			check: func(t *testing.T, root string, snap *model.Snapshot) {
				m := mustNode(t, snap, "A/docs/4")
				if m.HasHeartbeat || m.ParentID != "A" || m.Entry == nil || m.HeartbeatPath != filepath.Join(root, "A/docs/4", protocol.HeartbeatFile) {
					t.Errorf("missing node = %+v", m)
				}
			},
		},
		{
			name: "cycle of two registries broken and flagged",
			build: func(t *testing.T, root string) {
				y1 := workerHeartbeat(t, root, "Y1")
				y2 := workerHeartbeat(t, root, "Y2")
				writeFile(t, filepath.Join(root, "Y1", protocol.RegistryFile), registry(y2), time.Now(), 0)
				writeFile(t, filepath.Join(root, "Y2", protocol.RegistryFile), registry(y1), time.Now(), 0)
			},
			check: func(t *testing.T, root string, snap *model.Snapshot) {
				y1, y2 := mustNode(t, snap, "Y1"), mustNode(t, snap, "Y2")
				if y1.Parent != nil || y2.ParentID != "Y1" {
					t.Errorf("Y1 parent %q, Y2 parent %q", y1.ParentID, y2.ParentID)
				}
				if !y1.HasScanFlag(model.FlagCycle) || !y2.HasScanFlag(model.FlagCycle) || !slices.Contains(y1.OtherParents(), "Y2") {
					t.Errorf("flags %v %v others %v", y1.ScanFlags(), y2.ScanFlags(), y1.OtherParents())
				}
			},
		},
		{
			name: "cycle broken at its weakest edge",
			build: func(t *testing.T, root string) {
				// A registers B (strong); A declares B its parent (weaker).
				a := filepath.Join(root, "A", protocol.HeartbeatFile)
				b := workerHeartbeat(t, root, "B")
				writeFile(t, a, heartbeat(os.Getpid(), b, "running"), time.Now(), 0)
				writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), registry(b), time.Now(), 0)
			},
			check: func(t *testing.T, root string, snap *model.Snapshot) {
				a, b := mustNode(t, snap, "A"), mustNode(t, snap, "B")
				if a.Parent != nil || b.ParentID != "A" || !a.HasScanFlag(model.FlagCycle) {
					t.Errorf("A parent %q flags %v; B parent %q", a.ParentID, a.ScanFlags(), b.ParentID)
				}
			},
		},
		{
			name: "a node registering itself is flagged cycle and stays a session",
			build: func(t *testing.T, root string) {
				a := node(t, root, "A", "")
				writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), registry(a), time.Now(), 0)
			},
			check: func(t *testing.T, root string, snap *model.Snapshot) {
				if a := mustNode(t, snap, "A"); a.Parent != nil || !a.HasScanFlag(model.FlagCycle) || len(a.Children) != 0 {
					t.Errorf("A = %+v", a)
				}
			},
		},
		{
			name: "last registry line naming a child wins for Entry",
			build: func(t *testing.T, root string) {
				node(t, root, "A", "")
				b := node(t, root, "A/b/1", "")
				reg := registry(b) + `{"heartbeat": "` + b + `", "team": "t", "task_id": "7", "status": "completed"}` + "\n"
				writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), reg, time.Now(), 0)
			},
			check: func(t *testing.T, root string, snap *model.Snapshot) {
				if e := mustNode(t, snap, "A/b/1").Entry; e == nil || e.Status != "completed" || e.TaskIDString() != "7" {
					t.Errorf("entry = %+v", e)
				}
			},
		},
		{
			name: "registry entry outside every root becomes outside_root, not read",
			build: func(t *testing.T, root string) {
				out := filepath.Join(filepath.Dir(root), "elsewhere", "agent")
				writeFile(t, filepath.Join(out, protocol.HeartbeatFile), heartbeat(1, "", "running"), time.Now(), 0)
				node(t, root, "A", "")
				writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), registry(filepath.Join(out, protocol.HeartbeatFile)), time.Now(), 0)
			},
			check: func(t *testing.T, root string, snap *model.Snapshot) {
				out := filepath.Join(filepath.Dir(root), "elsewhere", "agent")
				o := mustNode(t, snap, filepath.ToSlash(out))
				if !o.HasScanFlag(model.FlagOutsideRoot) || o.Heartbeat != nil || o.HasHeartbeat || o.ParentID != "A" {
					t.Errorf("outside node = %+v", o)
				}
			},
		},
		{
			name: "registry path escaping through a symlink is outside_root",
			build: func(t *testing.T, root string) {
				out := filepath.Join(filepath.Dir(root), "elsewhere")
				writeFile(t, filepath.Join(out, "x", protocol.HeartbeatFile), heartbeat(1, "", "running"), time.Now(), 0)
				if err := os.Symlink(out, filepath.Join(root, "link")); err != nil {
					t.Fatal(err)
				}
				node(t, root, "A", "")
				writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), registry(filepath.Join(root, "link/x", protocol.HeartbeatFile)), time.Now(), 0)
			},
			check: func(t *testing.T, root string, snap *model.Snapshot) {
				a := mustNode(t, snap, "A")
				if len(a.Children) != 1 || !a.Children[0].HasScanFlag(model.FlagOutsideRoot) || a.Children[0].Heartbeat != nil {
					t.Fatalf("children of A = %v", a.Children)
				}
			},
		},
		{
			name: "parent_heartbeat outside every root is shown as an outside_root parent",
			build: func(t *testing.T, root string) {
				node(t, root, "T", filepath.Join(filepath.Dir(root), "job", protocol.HeartbeatFile))
			},
			check: func(t *testing.T, root string, snap *model.Snapshot) {
				tn := mustNode(t, snap, "T")
				if tn.Parent == nil || !tn.Parent.HasScanFlag(model.FlagOutsideRoot) {
					t.Errorf("T parent = %+v", tn.Parent)
				}
			},
		},
		{
			name: "parent_heartbeat naming a missing dir inside the root invents nothing",
			build: func(t *testing.T, root string) {
				node(t, root, "T", filepath.Join(root, "gone", protocol.HeartbeatFile))
			},
			check: func(t *testing.T, root string, snap *model.Snapshot) {
				if tn := mustNode(t, snap, "T"); tn.Parent != nil || len(snap.ByID) != 1 || tn.DeclaredParent() == "" {
					t.Errorf("T = %+v, nodes %v", tn, ids(snap))
				}
			},
		},
		{
			name: "siblings and sessions sorted by id",
			build: func(t *testing.T, root string) {
				for _, s := range []string{"b", "a", "c"} {
					node(t, root, s, "")
					for _, c := range []string{"z", "x", "y"} {
						node(t, root, s+"/t/"+c, "")
					}
				}
			},
			check: func(t *testing.T, root string, snap *model.Snapshot) {
				var got []string
				for _, s := range snap.Sessions {
					s.Walk(func(n *model.Node) { got = append(got, n.ID) })
				}
				want := []string{"a", "a/t/x", "a/t/y", "a/t/z", "b", "b/t/x", "b/t/y", "b/t/z", "c", "c/t/x", "c/t/y", "c/t/z"}
				if !slices.Equal(got, want) {
					t.Errorf("order = %v", got)
				}
			},
		},
		{
			name: "the root itself may be a node",
			build: func(t *testing.T, root string) {
				node(t, root, ".", "")
				node(t, root, "tasks/t1", "")
			},
			check: func(t *testing.T, root string, snap *model.Snapshot) {
				if n := mustNode(t, snap, "tasks/t1"); n.ParentID != "." {
					t.Errorf("t1 parent %q, ids %v", n.ParentID, ids(snap))
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			if err := os.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			tt.build(t, root)
			tt.check(t, root, forest(t, Options{Roots: []string{root}}))
		})
	}
}

func TestSeveralRootsPrefixIDsAndNeverDuplicate(t *testing.T) {
	dir := t.TempDir()
	s := filepath.Join(dir, ".sessions")
	j := filepath.Join(dir, ".teaparty", "jobs")
	node(t, s, "20260308-203749", "")
	node(t, s, "20260308-203749/coding/20260308-211516", "")
	node(t, j, "job-1--api", "")
	tests := []struct {
		name  string
		roots []string
		want  []string
	}{
		{name: "two roots prefixed by base name", roots: []string{j, s},
			want: []string{".sessions/20260308-203749", ".sessions/20260308-203749/coding/20260308-211516", "jobs/job-1--api"}},
		{name: "a root given twice", roots: []string{s, s + "/"},
			want: []string{"20260308-203749", "20260308-203749/coding/20260308-211516"}},
		{name: "a root nested in another", roots: []string{filepath.Join(s, "20260308-203749"), s},
			want: []string{"20260308-203749", "20260308-203749/coding/20260308-211516"}},
		{name: "a root given through a symlink and directly", roots: []string{s, symlinkTo(t, s)},
			want: []string{"20260308-203749", "20260308-203749/coding/20260308-211516"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := forest(t, Options{Roots: tt.roots})
			if got := ids(snap); !slices.Equal(got, tt.want) {
				t.Errorf("ids = %v, want %v", got, tt.want)
			}
		})
	}
}

// The reasons of a conflict and a cycle built from disk name the parents
// and the edge cut (SPEC §2), from what BuildForest leaves in OtherParents.
func TestConflictAndCycleReasonsFromDisk(t *testing.T) {
	root := t.TempDir()
	q := node(t, root, "Q", "")
	node(t, root, "Q/team/P", q)
	node(t, root, "Q/team/K", q)
	writeFile(t, filepath.Join(root, "Q/team/P", protocol.RegistryFile), registry(filepath.Join(root, "Q/team/K", protocol.HeartbeatFile)), time.Now(), 0)
	y1, y2 := workerHeartbeat(t, root, "Y1"), workerHeartbeat(t, root, "Y2")
	writeFile(t, filepath.Join(root, "Y1", protocol.RegistryFile), registry(y2), time.Now(), 0)
	writeFile(t, filepath.Join(root, "Y2", protocol.RegistryFile), registry(y1), time.Now(), 0)
	snap, err := Scan(Options{Roots: []string{root}, Probe: aliveProbe{}})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"Q/team/K": "; also claimed by Q", "Y1": "; cycle broken at Y2 → Y1", "Y2": "; cycle broken at Y2 → Y1"} {
		if n := mustNode(t, snap, id); !strings.Contains(n.Reason, want) {
			t.Errorf("%s: reason %q, want it to contain %q", id, n.Reason, want)
		}
	}
}

// Root prefixes are unique, whatever the base names: a made-up prefix
// ("x-2") must not collide with a root that is really called so.
func TestRootPrefixesNeverCollide(t *testing.T) {
	tests := []struct {
		name  string
		roots []string // relative to a temporary directory
		want  []string // the prefixes, in the order given
	}{
		{name: "distinct base names", roots: []string{"a/x", "b/y"}, want: []string{"x", "y"}},
		{name: "one base name twice", roots: []string{"a/x", "b/x"}, want: []string{"x", "x-2"}},
		{name: "a made-up prefix taken by a later root", roots: []string{"r1/x", "r2/x", "r3/x-2"}, want: []string{"x", "x-2", "x-2-2"}},
		{name: "a made-up prefix taken by an earlier root", roots: []string{"r3/x-2", "r1/x", "r2/x"}, want: []string{"x-2", "x", "x-3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			for _, r := range tt.roots {
				paths = append(paths, filepath.Join(dir, r))
				node(t, filepath.Join(dir, r), "S", "")
			}
			roots, _, err := PrepareRoots(paths)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range roots {
				got = append(got, r.Prefix)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("prefixes = %v, want %v", got, tt.want)
			}
			if snap := forest(t, Options{Roots: paths}); len(snap.ByID) != len(paths) {
				t.Errorf("ids %v: a session was lost to a collision", ids(snap))
			}
		})
	}
}

func symlinkTo(t *testing.T, target string) string {
	t.Helper()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return link
}

func TestResolveNode(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, ".sessions")
	hb := node(t, root, "A", "")
	node(t, root, "A/code/2", hb)
	snap := forest(t, Options{Roots: []string{root}})
	t.Chdir(dir)
	tests := []struct {
		name    string
		arg     string
		want    string
		wantErr string
	}{
		{name: "by id", arg: "A/code/2", want: "A/code/2"},
		{name: "by absolute infra dir", arg: filepath.Join(root, "A/code/2"), want: "A/code/2"},
		{name: "by infra dir relative to the cwd", arg: ".sessions/A/code/2/", want: "A/code/2"},
		{name: "by absolute heartbeat path", arg: hb, want: "A"},
		{name: "by heartbeat path relative to the cwd", arg: ".sessions/A/code/2/.heartbeat", want: "A/code/2"},
		{name: "unknown node is an error that says so", arg: "A/nope", wantErr: `node "A/nope": no such node under ` + root},
		{name: "empty argument", arg: "", wantErr: "no such node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := ResolveNode(snap, tt.arg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || n.ID != tt.want {
				t.Fatalf("got %v, %v; want %s", n, err, tt.want)
			}
		})
	}
}

func TestDefaultRoots(t *testing.T) {
	tests := []struct {
		name string
		dirs []string
		want []string
	}{
		{name: "both layouts", dirs: []string{".teaparty/jobs", ".sessions"}, want: []string{".teaparty/jobs", ".sessions"}},
		{name: "only .sessions", dirs: []string{".sessions"}, want: []string{".sessions"}},
		{name: "neither: the cwd", dirs: nil, want: []string{"."}},
		{name: ".teaparty without jobs: the cwd", dirs: []string{".teaparty"}, want: []string{"."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cwd := t.TempDir()
			for _, d := range tt.dirs {
				if err := os.MkdirAll(filepath.Join(cwd, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, filepath.Join(cwd, w))
			}
			if got := DefaultRoots(cwd); !slices.Equal(got, want) {
				t.Errorf("DefaultRoots = %v, want %v", got, want)
			}
		})
	}
}

func TestCopyFactsRebuildsTheSameForest(t *testing.T) {
	root := t.TempDir()
	a := node(t, root, "A", "")
	node(t, root, "A/x/1", a)
	writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), registry(filepath.Join(root, "A/x/2", protocol.HeartbeatFile)), time.Now(), 0)
	w, err := Discover(Options{Roots: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	first := BuildForest(w.Roots, w.Nodes, w.Problems)
	var copies []*model.Node
	for _, n := range w.Nodes {
		copies = append(copies, CopyFacts(n))
	}
	second := BuildForest(w.Roots, copies, w.Problems)
	if !slices.Equal(ids(first), ids(second)) {
		t.Fatalf("ids differ: %v vs %v", ids(first), ids(second))
	}
	if first.Node("A/x/1").Parent == second.Node("A/x/1").Parent {
		t.Error("the rebuilt forest shares parents with the first")
	}
	if second.Node("A/x/2") == nil || second.Node("A/x/2").HasHeartbeat {
		t.Error("the missing node was not rebuilt")
	}
}

// A path named in a file (a registry entry, a parent_heartbeat) does not
// reach where the walk never goes: --ignore globs, node_modules, .git and
// git worktrees. Such an entry is not a node.
func TestLookupsKeepTheSkipRules(t *testing.T) {
	tests := []struct {
		name    string
		ignore  []string
		build   func(t *testing.T, root string)
		absent  string   // a node id that must not be in the forest
		session []string // the sessions expected
	}{
		{name: "registry entry into an ignored directory", ignore: []string{"tmp-*"},
			build: func(t *testing.T, root string) {
				node(t, root, "A", "")
				writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), registry(node(t, root, "A/tmp-1/x", "")), time.Now(), 0)
			}, absent: "A/tmp-1/x", session: []string{"A"}},
		{name: "registry entry into an ignored root-relative path", ignore: []string{"A/skip"},
			build: func(t *testing.T, root string) {
				node(t, root, "A", "")
				writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), registry("skip/x/.heartbeat"), time.Now(), 0)
				node(t, root, "A/skip/x", "")
			}, absent: "A/skip/x", session: []string{"A"}},
		{name: "registry entry never started, under an ignored directory, is not a missing node", ignore: []string{"tmp-*"},
			build: func(t *testing.T, root string) {
				node(t, root, "A", "")
				writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), registry("tmp-2/x/.heartbeat"), time.Now(), 0)
			}, absent: "A/tmp-2/x", session: []string{"A"}},
		{name: "registry entry into node_modules",
			build: func(t *testing.T, root string) {
				node(t, root, "A", "")
				writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), registry(node(t, root, "A/node_modules/pkg", "")), time.Now(), 0)
			}, absent: "A/node_modules/pkg", session: []string{"A"}},
		{name: "registry entry into .git",
			build: func(t *testing.T, root string) {
				node(t, root, "A", "")
				writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), registry(node(t, root, ".git/hooks", "")), time.Now(), 0)
			}, absent: ".git/hooks", session: []string{"A"}},
		{name: "registry entry into a git worktree",
			build: func(t *testing.T, root string) {
				node(t, root, "A", "")
				writeFile(t, filepath.Join(root, "A/wt/.git"), "gitdir: /elsewhere\n", time.Now(), 0)
				writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), registry(node(t, root, "A/wt/sub/x", "")), time.Now(), 0)
			}, absent: "A/wt/sub/x", session: []string{"A"}},
		{name: "parent_heartbeat into an ignored directory", ignore: []string{"tmp-*"},
			build: func(t *testing.T, root string) {
				node(t, root, "B", node(t, root, "tmp-3/P", ""))
			}, absent: "tmp-3/P", session: []string{"B"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			tt.build(t, root)
			snap := forest(t, Options{Roots: []string{root}, Ignore: tt.ignore})
			if n := snap.Node(tt.absent); n != nil {
				t.Errorf("%s was read: %+v", tt.absent, n)
			}
			var sessions []string
			for _, s := range snap.Sessions {
				sessions = append(sessions, s.ID)
			}
			if !slices.Equal(sessions, tt.session) || len(snap.ByID) != len(tt.session) {
				t.Errorf("sessions %v, nodes %v; want only %v", sessions, ids(snap), tt.session)
			}
		})
	}
}
