package scanner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// settle makes the watcher compare everything it holds with the disk and
// waits for the update that follows, so that what is not in the snapshot
// afterwards is not coming.
func settle(t *testing.T, w *Watcher) *model.Snapshot {
	t.Helper()
	w.Refresh()
	var snap *model.Snapshot
	await(t, w, "refresh", func(s *model.Snapshot) bool { snap = s; return true })
	return snap
}

// noneUnder fails when the snapshot or the watch list holds anything below dir.
func noneUnder(t *testing.T, w *Watcher, snap *model.Snapshot, dir string) {
	t.Helper()
	for _, n := range snap.Nodes() {
		if within(dir, n.InfraDir) {
			t.Errorf("node %s (%s) found inside %s", n.ID, n.InfraDir, dir)
		}
	}
	if w.fsw != nil {
		for _, p := range w.fsw.WatchList() {
			if strings.HasPrefix(p, dir+string(filepath.Separator)) {
				t.Errorf("watch added inside %s: %s", dir, p)
			}
		}
	}
}

// SPEC §1: never descend into a git worktree (a directory with a `.git`
// entry), also when its directories appear while watching, and also when
// the `.git` comes after them (`git init` in a directory already watched).
func TestWatchNeverDescendsIntoWorktree(t *testing.T) {
	tests := []struct {
		name string
		// prepare runs before the watcher starts, change while it runs;
		// both get the session dir.
		prepare, change func(t *testing.T, s string)
	}{
		{
			name: "directories made in a worktree",
			prepare: func(t *testing.T, s string) {
				mkGit(t, filepath.Join(s, "worktree"))
			},
			change: func(t *testing.T, s string) {
				pid, started := self(t)
				writeHeartbeat(t, filepath.Join(s, "worktree", "newdir", "inner"), pid, started, "running", "")
			},
		},
		{
			name: "a worktree made whole",
			change: func(t *testing.T, s string) {
				pid, started := self(t)
				mkGit(t, filepath.Join(s, "worktree"))
				writeHeartbeat(t, filepath.Join(s, "worktree", "newdir", "inner"), pid, started, "running", "")
			},
		},
		{
			name: "a directory that becomes a worktree",
			prepare: func(t *testing.T, s string) {
				pid, started := self(t)
				writeHeartbeat(t, filepath.Join(s, "worktree", "newdir", "inner"), pid, started, "running", "")
			},
			change: func(t *testing.T, s string) {
				mkGit(t, filepath.Join(s, "worktree"))
			},
		},
	}
	for _, tt := range tests {
		for _, m := range watchModes {
			t.Run(tt.name+"/"+m.name, func(t *testing.T) {
				root := t.TempDir()
				pid, started := self(t)
				s := filepath.Join(root, "s")
				writeHeartbeat(t, s, pid, started, "running", "")
				if tt.prepare != nil {
					tt.prepare(t, s)
				}
				w := newTestWatcher(t, m.wo, root)
				tt.change(t, s)
				// A node made after the change, outside the worktree: once it
				// is seen, the change was seen too.
				writeHeartbeat(t, filepath.Join(s, "team", "marker"), pid, started, "running", "")
				await(t, w, "marker", nodeIs("s/team/marker", model.StateRunning, "", false))
				noneUnder(t, w, settle(t, w), filepath.Join(s, "worktree"))
			})
		}
	}
}

// mkGit makes dir a git worktree: a `.git` file naming its repository, as
// `git worktree add` leaves it.
func mkGit(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: /elsewhere/.git/worktrees/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// SPEC §1 watching: a root deleted and made again (a cleanup script, a
// test harness) is followed again; while it is gone, the snapshot says so.
func TestWatchRootRecreated(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "sessions")
			pid, started := self(t)
			writeHeartbeat(t, filepath.Join(root, "s"), pid, started, "running", "")
			w := newTestWatcher(t, m.wo, root)
			await(t, w, "s", nodeIs("s", model.StateRunning, "", false))
			if err := os.RemoveAll(root); err != nil {
				t.Fatal(err)
			}
			await(t, w, "s gone, the root missed", func(s *model.Snapshot) bool {
				return s.Node("s") == nil && slices.ContainsFunc(s.Problems, func(p model.Problem) bool { return p.Path == root })
			})
			writeHeartbeat(t, filepath.Join(root, "s2", "team", "w"), pid, started, "running", "")
			writeHeartbeat(t, filepath.Join(root, "s2"), pid, started, "running", "")
			// Found at the next poll of the missing root (2 s under fsnotify).
			awaitWithin(t, w, 10*time.Second, "the new root's nodes", func(s *model.Snapshot) bool {
				return nodeIs("s2/team/w", model.StateRunning, "", false)(s) && len(s.Problems) == 0
			})
			// And it is watched (or polled) again, not just read once.
			writeHeartbeat(t, filepath.Join(root, "s3"), pid, started, "running", "")
			await(t, w, "a session made later", nodeIs("s3", model.StateRunning, "", false))
		})
	}
}
