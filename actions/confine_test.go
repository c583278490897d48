package actions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/middle"
)

// middleRows writes a middle home with one workflow per entry of
// worktrees (id -> worktree_path): "done" ids completed, the others
// running and ten minutes stale (dead).
func middleRows(t *testing.T, worktrees map[string]string) storeFixture {
	t.Helper()
	home := filepath.Join(t.TempDir(), ".middle")
	db := storefixtures.NewDB(t, filepath.Join(home, "db.sqlite3"), storefixtures.MiddleMigrations)
	ms := time.Now().Add(-10 * time.Minute).UnixMilli()
	epic := 0
	for id, wt := range worktrees {
		state := "running"
		if strings.HasPrefix(id, "done") {
			state = "completed"
		}
		epic++
		if _, err := db.Exec(`INSERT INTO workflows (id, kind, repo, epic_ref, adapter, state, created_at, updated_at, worktree_path, controlled_by)
			VALUES (?, 'implementation', 'acme/api', ?, 'claude', ?, ?, ?, ?, 'middle')`, id, epic, state, ms, ms, wt); err != nil {
			t.Fatal(err)
		}
	}
	return storeFixture{root: "middle:" + home, srcs: []sources.Source{middle.New()}}
}

// listing is the names under dir with their mtimes: what a write there,
// or a create and a remove, would change.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, p+" "+fi.ModTime().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}

// SPEC §3, §5, §9: the dir a store's record names — a middle row's
// worktree_path, a TeaParty session dir reached through a symlink — is
// resolved, and one that lies outside every root is never acted on: the
// scan flags the node outside_root (nothing recommended), and resume and
// merge, their dry runs too, are refused naming the dir, with nothing
// written there and no command run.
func TestAStoreDirOutsideEveryRootIsNeverActedOn(t *testing.T) {
	elsewhere := t.TempDir()
	outside := filepath.Join(elsewhere, "wt")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	mid := middleRows(t, map[string]string{"done-out": outside, "dead-out": outside, "done-etc": "/etc", "done-slash": "/"})
	tp := deadTeaPartyWorker(t)
	// The worker's session dir becomes a symlink to a dir outside the
	// home, its files moved there.
	linked := filepath.Join(elsewhere, "w1")
	if err := os.Rename(tp.infra, linked); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(linked, tp.infra); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		f      storeFixture
		node   string
		action model.Action
		dryRun bool
		dir    string // the dir the refusal names, and where nothing may be written
	}{
		{"middle merge, worktree elsewhere", mid, "acme/api/done-out", model.ActionMerge, false, outside},
		{"middle merge dry run, worktree elsewhere", mid, "acme/api/done-out", model.ActionMerge, true, outside},
		{"middle resume, worktree elsewhere", mid, "acme/api/dead-out", model.ActionResume, false, outside},
		{"middle merge dry run, worktree /etc", mid, "acme/api/done-etc", model.ActionMerge, true, "/etc"},
		{"middle merge dry run, worktree /", mid, "acme/api/done-slash", model.ActionMerge, true, "/"},
		{"teaparty resume, session dir a symlink out", tp, tp.node, model.ActionResume, false, linked},
		{"teaparty resume dry run, session dir a symlink out", tp, tp.node, model.ActionResume, true, linked},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "argv")
			argv := helperArgv("argv", out, "{id}")
			e := storeEngine(tc.f, Config{Resume: CommandConfig{Argv: argv}, Merge: CommandConfig{Argv: argv}})
			snap, err := e.scan(e.opts.Scan)
			if err != nil {
				t.Fatal(err)
			}
			n := snap.Node(tc.node)
			if n == nil {
				t.Fatalf("fixture: no node %s", tc.node)
			}
			if !n.HasScanFlag(model.FlagOutsideRoot) || n.Action != model.ActionNone {
				t.Errorf("scan: %s flags %v, action %s: want outside_root, none", tc.node, n.ScanFlags(), n.Action)
			}
			var before string
			if tc.dir != "/" && tc.dir != "/etc" {
				before = listing(t, tc.dir)
			}
			res, err := e.Run(context.Background(), Request{Action: tc.action, Node: tc.node, DryRun: tc.dryRun})
			if err != nil || !res.Refused || !strings.Contains(res.Message, tc.dir) || !strings.Contains(res.Message, "outside every root") {
				t.Fatalf("%s: %s: %s (%v), want refused naming %s outside every root", tc.action, res.Outcome, res.Message, err, tc.dir)
			}
			if before != "" {
				if after := listing(t, tc.dir); after != before {
					t.Errorf("%s was written to:\nbefore %s\nafter  %s", tc.dir, before, after)
				}
			}
			time.Sleep(50 * time.Millisecond)
			if got := dispatches(t, out); len(got) != 0 {
				t.Errorf("the command ran: %v", got)
			}
		})
	}
}

// SPEC §9: a store's dir inside its root is acted on as before — the
// confinement is no blanket refusal: middle's default layout keeps its
// worktrees beside its database.
func TestAStoreDirInsideItsRootIsActedOn(t *testing.T) {
	f := deadMiddleWorkflow(t)
	e := storeEngine(f, Config{Resume: CommandConfig{Argv: helperArgv("argv", filepath.Join(t.TempDir(), "argv"))}})
	res, err := e.DryRun(context.Background(), Request{Action: model.ActionResume, Node: f.node})
	if err != nil || res.Outcome != OutcomeDryRun {
		t.Fatalf("resume --dry-run: %s: %s (%v)", res.Outcome, res.Message, err)
	}
}
