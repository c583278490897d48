package scanner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/middle"
	"github.com/dispatchtop/dispatchtop/sources/teaparty"
)

// SPEC §4: a root that could not be read — missing, a walked root whose
// listing failed, a store whose read found nothing but problems — is a
// problem of the scan; the scan fails when no root could be read at all,
// and, under EveryRoot (--once without --allow-missing), when any could
// not. The error names each such root's file and cause.
func TestARootThatCannotBeReadFailsTheScanWhenNoneCanOrEveryRootMust(t *testing.T) {
	base := t.TempDir()
	tree := filepath.Join(base, "tree")
	node(t, tree, "s1", "")

	corrupt := filepath.Join(base, "corrupt", ".middle")
	corruptDB := filepath.Join(corrupt, "db.sqlite3")
	writeFile(t, corruptDB, "SQLite format 3\x00"+strings.Repeat("\xff", 4096), time.Now(), 0)

	emptyHome := filepath.Join(base, "empty", ".middle")
	db, err := storefixtures.Open(filepath.Join(emptyHome, "db.sqlite3"), storefixtures.MiddleMigrations)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	// A TeaParty job whose bus is corrupt but whose lead beats: the walk
	// of its directory reads the root.
	tpHome := filepath.Join(base, "tp", ".teaparty")
	job := filepath.Join(tpHome, "jobs", "job-1--fix")
	writeFile(t, filepath.Join(job, "messages.db"), "not a database at all, not at all", time.Now(), 0)
	node(t, job, "", "")
	// One whose only bus is corrupt and no lead: nothing read.
	tpBroken := filepath.Join(base, "tp2", ".teaparty")
	tpBrokenBus := filepath.Join(tpBroken, "jobs", "job-2--fix", "messages.db")
	writeFile(t, tpBrokenBus, "not a database at all, not at all", time.Now(), 0)

	missing := filepath.Join(base, "no", "such", "dir")
	srcs := []sources.Source{&teaparty.Source{BusyTimeout: 100 * time.Millisecond}, &middle.Source{BusyTimeout: 100 * time.Millisecond, PaneLookup: noPanes}}

	tests := []struct {
		name      string
		roots     []string
		everyRoot bool
		wantErr   []string // each in the error; nil: no error
		none      bool
		problem   string // a problem the snapshot must hold, when no error
	}{
		{name: "a corrupt store alone", roots: []string{corrupt}, wantErr: []string{"no root could be read", corruptDB, "not a database"}, none: true},
		{name: "a corrupt store alone, KIND:", roots: []string{"middle:" + corrupt}, wantErr: []string{"no root could be read", corruptDB, "not a database"}, none: true},
		{name: "a corrupt store beside a tree", roots: []string{corrupt, tree}, problem: corruptDB},
		{name: "a corrupt store beside a tree, every root", roots: []string{corrupt, tree}, everyRoot: true, wantErr: []string{"a root could not be read", corruptDB, "not a database"}},
		{name: "a missing root beside a tree", roots: []string{missing, tree}, problem: missing},
		{name: "a missing root beside a tree, every root", roots: []string{missing, tree}, everyRoot: true, wantErr: []string{"a root could not be read", missing, "no such file or directory"}},
		{name: "a missing root and a corrupt store beside a tree, every root", roots: []string{missing, corrupt, tree}, everyRoot: true, wantErr: []string{"2 roots could not be read", missing, corruptDB}},
		{name: "a missing root and a corrupt store", roots: []string{missing, corrupt}, wantErr: []string{"no root could be read", missing}, none: true},
		{name: "an empty store that says nothing wrong is read", roots: []string{emptyHome}, everyRoot: true},
		{name: "a TeaParty root whose bus is corrupt but whose lead beats is read", roots: []string{tpHome}, everyRoot: true, problem: filepath.Join(job, "messages.db")},
		{name: "a TeaParty root whose only bus is corrupt", roots: []string{tpBroken}, wantErr: []string{"no root could be read", tpBrokenBus, "not a database"}, none: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap, err := Scan(Options{Roots: tc.roots, Sources: srcs, EveryRoot: tc.everyRoot, Probe: aliveProbe{}})
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("scan: %v", err)
				}
				if tc.problem != "" && !hasProblemAt(snap.Problems, tc.problem) {
					t.Errorf("problems %v: none at %s", snap.Problems, tc.problem)
				}
				return
			}
			var unread *UnreadRootsError
			if !errors.As(err, &unread) || unread.None != tc.none {
				t.Fatalf("scan: %v (%T): want an UnreadRootsError, none %v", err, err, tc.none)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
		})
	}
}

// The live engine shows an unreadable store beside a readable root as a
// problem of its snapshot (the dashboard's header, serve's document), and
// refuses to start when no root can be read, as a scan does.
func TestWatcherShowsAStoreThatCannotBeReadAsAProblem(t *testing.T) {
	base := t.TempDir()
	tree := filepath.Join(base, "tree")
	node(t, tree, "s1", "")
	home := filepath.Join(base, ".middle")
	if err := os.MkdirAll(filepath.Join(home, "db.sqlite3"), 0o755); err != nil {
		t.Fatal(err)
	}
	srcs := []sources.Source{&middle.Source{PaneLookup: noPanes}}
	if _, err := NewWatcher(Options{Roots: []string{home}, Sources: srcs}, WatchOptions{FallbackPoll: time.Hour}); err == nil ||
		!strings.Contains(err.Error(), "no root could be read") || !strings.Contains(err.Error(), "not a regular file (directory)") {
		t.Fatalf("watch of an unreadable store alone: %v", err)
	}
	w, err := NewWatcher(Options{Roots: []string{home, tree}, Sources: srcs}, WatchOptions{FallbackPoll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	runWatcher(t, w)
	snap := w.Snapshot()
	db := filepath.Join(home, "db.sqlite3")
	if !hasProblemAt(snap.Problems, db) {
		t.Errorf("problems %v: none naming %s", snap.Problems, db)
	}
}

func hasProblemAt(problems []model.Problem, path string) bool {
	for _, p := range problems {
		if p.Path == path && strings.Contains(ProblemText(p), path) {
			return true
		}
	}
	return false
}

func noPanes() (map[string]middle.Session, error) { return nil, nil }
