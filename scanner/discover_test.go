package scanner

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// Discovery rules of SPEC §1, one case each.
func TestDiscover(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		build func(t *testing.T, root string)
		want  []string // node ids found
		check func(t *testing.T, root string, w *Walk)
	}{
		{
			name: "sessions layout",
			build: func(t *testing.T, root string) {
				node(t, root, "20260308-203749", "")
				node(t, root, "20260308-203749/coding/20260308-211516", "")
			},
			want: []string{"20260308-203749", "20260308-203749/coding/20260308-211516"},
		},
		{
			name: "teaparty layout and a mix",
			build: func(t *testing.T, root string) {
				node(t, root, "job-1--api", "")
				node(t, root, "job-1--api/tasks/task-1--schema", "")
				node(t, root, "20260308-203749", "")
			},
			want: []string{"20260308-203749", "job-1--api", "job-1--api/tasks/task-1--schema"},
		},
		{
			name: "legacy .running is a node",
			build: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, "old", protocol.RunningFile), "4242\n", time.Now(), 0)
			},
			want: []string{"old"},
			check: func(t *testing.T, root string, w *Walk) {
				if n := w.Nodes[0]; !n.Legacy || n.LegacyPID() != 4242 || n.HeartbeatPath != "" || n.BeatMtime.IsZero() {
					t.Errorf("legacy node = %+v", n)
				}
			},
		},
		{
			name: "never descends into a git worktree, .git or node_modules",
			build: func(t *testing.T, root string) {
				node(t, root, "S", "")
				writeFile(t, filepath.Join(root, "S/worktree/.git"), "gitdir: /elsewhere\n", time.Now(), 0)
				node(t, root, "S/worktree/sub", "")
				node(t, root, ".git/x", "")
				node(t, root, "S/node_modules/pkg", "")
			},
			want: []string{"S"},
		},
		{
			name: "a .git entry in the root itself does not stop the walk",
			build: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/main\n", time.Now(), 0)
				node(t, root, "S", "")
			},
			want: []string{"S"},
		},
		{
			name: "ignore globs match the base name and the root-relative path",
			opts: Options{Ignore: []string{"tmp-*", "keep/skip"}},
			build: func(t *testing.T, root string) {
				node(t, root, "tmp-1", "")
				node(t, root, "a/tmp-2/n", "")
				node(t, root, "keep/skip/n", "")
				node(t, root, "keep/n", "")
			},
			want: []string{"keep/n"},
		},
		{
			name: "directory symlinks are never followed, in or out of the root",
			build: func(t *testing.T, root string) {
				out := filepath.Join(filepath.Dir(root), "outside")
				node(t, out, "X", "")
				node(t, root, "S", "")
				if err := os.Symlink(out, filepath.Join(root, "S", "out")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(root, "S"), filepath.Join(root, "again")); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"S"},
		},
		{
			name: "symlink loops end",
			build: func(t *testing.T, root string) {
				node(t, root, "S", "")
				if err := os.Symlink(root, filepath.Join(root, "S", "loop")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("self", filepath.Join(root, "self")); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"S"},
		},
		{
			name: "depth bound stops the walk and says so",
			opts: Options{MaxDepth: 3},
			build: func(t *testing.T, root string) {
				node(t, root, "a/b/c", "")
				node(t, root, "a/b/c/d/e", "")
			},
			want: []string{"a/b/c"},
			check: func(t *testing.T, root string, w *Walk) {
				if !hasProblem(w.Problems, "a/b/c/d", "depth bound 3") {
					t.Errorf("problems = %v", w.Problems)
				}
			},
		},
		{
			name: "every directory visited is reported for watching",
			build: func(t *testing.T, root string) {
				node(t, root, "S/team/W", "")
				writeFile(t, filepath.Join(root, "S/team/W", protocol.MiddleDir, protocol.BlockedFile), `{"question":"q"}`, time.Now(), 0)
				node(t, root, "S/node_modules/x", "")
			},
			want: []string{"S/team/W"},
			check: func(t *testing.T, root string, w *Walk) {
				var rel []string
				for _, d := range w.Dirs {
					r, _ := filepath.Rel(root, d)
					rel = append(rel, filepath.ToSlash(r))
				}
				want := []string{".", "S", "S/team", "S/team/W", "S/team/W/.middle"}
				if !slices.Equal(rel, want) {
					t.Errorf("dirs = %v, want %v", rel, want)
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
			opts := tt.opts
			opts.Roots = []string{root}
			w, err := Discover(opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range w.Nodes {
				r, _ := filepath.Rel(root, n.InfraDir)
				got = append(got, filepath.ToSlash(r))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("nodes = %v, want %v", got, tt.want)
			}
			if tt.check != nil {
				tt.check(t, root, w)
			}
		})
	}
}

func TestDiscoverErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{name: "no root could be read", opts: Options{Roots: []string{filepath.Join(dir, "absent")}}, wantErr: "no root could be read"},
		{name: "a root that is a file", opts: Options{Roots: []string{writeTemp(t, dir, "f")}}, wantErr: "not a directory"},
		{name: "malformed ignore glob", opts: Options{Roots: []string{dir}, Ignore: []string{"[x"}}, wantErr: `ignore glob "[x"`},
		{name: "no root could be read: the only root cannot be listed",
			opts:    Options{Roots: []string{dir}, readDir: deny(dir)},
			wantErr: "no root could be read (" + dir + ": read directory: open " + dir + ": permission denied)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Scan(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
	t.Run("one root that cannot be listed among good ones is a problem", func(t *testing.T) {
		good, locked := filepath.Join(dir, "good2"), filepath.Join(dir, "locked")
		node(t, good, "S", "")
		node(t, locked, "S", "")
		w, err := Discover(Options{Roots: []string{good, locked}, readDir: deny(locked)})
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Nodes) != 1 || !hasProblem(w.Problems, "locked", "permission denied") {
			t.Errorf("nodes %d problems %v", len(w.Nodes), w.Problems)
		}
	})
	t.Run("one unreadable root among good ones is a problem", func(t *testing.T) {
		good := filepath.Join(dir, "good")
		node(t, good, "S", "")
		w, err := Discover(Options{Roots: []string{good, filepath.Join(dir, "absent")}})
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Nodes) != 1 || !hasProblem(w.Problems, "absent", "root:") {
			t.Errorf("nodes %d problems %v", len(w.Nodes), w.Problems)
		}
	})
}

// deny makes a listing of any of dirs fail as a directory without read
// permission does (root lists any directory, so the error is injected).
func deny(dirs ...string) func(string) ([]fs.DirEntry, error) {
	return func(dir string) ([]fs.DirEntry, error) {
		if slices.Contains(dirs, dir) {
			return nil, &fs.PathError{Op: "open", Path: dir, Err: syscall.EACCES}
		}
		return os.ReadDir(dir)
	}
}

func writeTemp(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	writeFile(t, p, "x", time.Now(), 0)
	return p
}

func TestDiscoverDirWalksOneNewSubtree(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	node(t, root, "S", "")
	roots, _, err := PrepareRoots([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	node(t, root, "S/new/N", "")
	node(t, root, "S/node_modules/x", "")
	tests := []struct {
		name string
		dir  string
		want []string
	}{
		{name: "a new directory", dir: filepath.Join(root, "S/new"), want: []string{filepath.Join(root, "S/new/N")}},
		{name: "an excluded directory finds nothing", dir: filepath.Join(root, "S/node_modules"), want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := DiscoverDir(roots, tt.dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range w.Nodes {
				got = append(got, n.InfraDir)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("nodes = %v, want %v", got, tt.want)
			}
		})
	}
	if _, err := DiscoverDir(roots, t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "not under any root") {
		t.Errorf("outside dir: err = %v", err)
	}
}

func TestReadNodeDirFacts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n")
	now := time.Now()
	writeFile(t, filepath.Join(dir, protocol.HeartbeatFile), `{"pid": 7, "status": "running", "model": "x"}`, now, 40*time.Second)
	writeFile(t, filepath.Join(dir, protocol.RegistryFile), registry("a/.heartbeat", "b/.heartbeat"), now, time.Minute)
	writeFile(t, filepath.Join(dir, protocol.CfaFile), `{"state": "DONE"}`, now, 0)
	writeFile(t, filepath.Join(dir, protocol.RetryCountFile), `2`, now, 0)
	writeFile(t, filepath.Join(dir, protocol.MiddleDir, protocol.BlockedFile), `{"question": "why?"}`, now, 0)
	writeFile(t, filepath.Join(dir, ".intent-stream.jsonl"), "{}\n", now, 50*time.Second)
	writeFile(t, filepath.Join(dir, ".exec-stream.jsonl"), "{}\n", now, 20*time.Second)
	writeFile(t, filepath.Join(dir, protocol.MergedFile), "", now, 0)
	writeFile(t, filepath.Join(dir, protocol.ResumePendingFile), `{"pid": 9, "time": "2026-11-22T05:00:00Z", "user": "op"}`, now, 3*time.Second)
	n, err := ReadNodeDir("/r", dir)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name string
		ok   bool
	}{
		{"heartbeat parsed with extra", n.Heartbeat != nil && n.Heartbeat.PID == 7 && string(n.Heartbeat.Optional().Extra["model"]) == `"x"`},
		{"heartbeat mtime", n.BeatMtime.Round(time.Second).Equal(now.Add(-40 * time.Second).Round(time.Second))},
		{"heartbeat path", n.HasHeartbeat && n.HeartbeatPath == filepath.Join(dir, protocol.HeartbeatFile)},
		{"registry", len(n.RegistryLines()) == 2 && n.RegistryPath() == filepath.Join(n.InfraDir, protocol.RegistryFile) && n.RegistrySize() > 0 && !n.RegistryMtime().IsZero()},
		{"cfa", n.Cfa != nil && n.Cfa.State == "DONE"},
		{"retries", n.Retries.Total == 2},
		{"blocked in .middle", n.Blocked != nil && n.Blocked.Question == "why?" && strings.HasSuffix(n.Blocked.Path, ".middle/blocked.json")},
		{"newest stream mtime", n.ActivityMtime.Round(time.Second).Equal(now.Add(-20 * time.Second).Round(time.Second))},
		{"merged", n.Merged},
		{"resume pending", n.ResumePending() != nil && n.ResumePending().PID == 9 && !n.ResumeMtime().IsZero()},
		{"no problems", len(n.Problems()) == 0 && len(n.ScanFlags()) == 0},
		{"root kept", n.Root == "/r"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: node = %+v", c.name, n)
		}
	}
	if _, err := ReadNodeDir("/r", t.TempDir()); err == nil || !strings.Contains(err.Error(), "no .heartbeat or .running") {
		t.Errorf("empty dir: err = %v", err)
	}
}

func TestScanCollectsNodeProblemsIntoTheSnapshot(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "S", protocol.HeartbeatFile), `{"pid": "abc"}`, time.Now(), 0)
	snap := forest(t, Options{Roots: []string{root}})
	if !hasProblem(snap.Problems, filepath.Join(root, "S", protocol.HeartbeatFile), `field "pid"`) {
		t.Errorf("problems = %v", snap.Problems)
	}
	if n := mustNode(t, snap, "S"); !n.HasScanFlag(model.FlagUnreadable) || len(n.Problems()) != 1 {
		t.Errorf("node = %+v", n)
	}
}

// The walk's workers each sort their share; the shares merge into one
// sorted list, of equal elements the earlier share's first.
func TestMergeSortedMergesSortedShares(t *testing.T) {
	type item struct {
		key   string
		share int
	}
	cmp := func(a, b item) int { return strings.Compare(a.key, b.key) }
	tests := []struct {
		name   string
		shares [][]item
		want   []item
	}{
		{name: "none", shares: [][]item{nil, nil}, want: nil},
		{name: "one share", shares: [][]item{{{"a", 0}, {"b", 0}}, nil}, want: []item{{"a", 0}, {"b", 0}}},
		{name: "interleaved", shares: [][]item{{{"a", 0}, {"c", 0}, {"e", 0}}, {{"b", 1}, {"d", 1}}},
			want: []item{{"a", 0}, {"b", 1}, {"c", 0}, {"d", 1}, {"e", 0}}},
		{name: "equal keys: the earlier share first", shares: [][]item{{{"x", 0}}, {{"x", 1}}, {{"w", 2}, {"x", 2}}},
			want: []item{{"w", 2}, {"x", 0}, {"x", 1}, {"x", 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mergeSorted(tt.shares, cmp); !slices.Equal(got, tt.want) {
				t.Errorf("merged %v, want %v", got, tt.want)
			}
		})
	}
}
