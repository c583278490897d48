package teaparty

import (
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/sources"
)

// ageDirs sets the mtime of every dir under root a minute back, so that a
// listing of them is no racy one (see racyWindow).
func ageDirs(t testing.TB, root string) {
	t.Helper()
	back := time.Now().Add(-time.Minute)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return os.Chtimes(p, back, back)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// listingHome is a home of two jobs, each a bus of its lead's row and a
// worker of the chat tier's sessions, and a scope whose sessions dir holds
// the first worker's dir.
type listingHome struct {
	tr    tree
	buses []string
	dbs   []*sql.DB
	scope string // the sessions dir of a scope of the home
}

func newListingHome(t *testing.T) listingHome {
	t.Helper()
	tr := newTree(t)
	h := listingHome{tr: tr, scope: filepath.Join(tr.home, "webapp", sessionsDir)}
	mkdirs(t, filepath.Join(h.scope, "s0"), filepath.Dir(tr.management))
	now := float64(time.Now().Unix())
	for i := range 2 {
		bus := filepath.Join(tr.jobs, fmt.Sprintf("job-%d--work", i), busFile)
		db := newBus(t, bus, busDDL)
		insertConv(t, db,
			conv{id: fmt.Sprintf("job:webapp:%d", i), typ: typeJob, created: now, agent: "webapp-lead"},
			conv{id: fmt.Sprintf("dispatch:s%d", i), typ: typeDispatch, created: now, agent: "coding", parent: fmt.Sprintf("job:webapp:%d", i)},
		)
		h.buses, h.dbs = append(h.buses, bus), append(h.dbs, db)
	}
	ageDirs(t, tr.home)
	return h
}

// SPEC §10: what a read lists of a home (its scopes and their sessions,
// its jobs and agents) is kept while those dirs are as they were: a commit
// into a bus lists no dir, nor does the periodic read that names every
// dir when none moved; a job or a session come or gone is listed, found
// or dropped. The facts are those a whole read finds. (The dirs are made
// a minute old once; a case that moves one comes after those that list
// none.)
func TestAReadListsTheHomeOnlyWhereItChanged(t *testing.T) {
	h := newListingHome(t)
	src := New()
	facts, k := src.Reread(h.tr.home, time.Now(), nil, nil)
	if n := len(facts.Nodes); n != 4 {
		t.Fatalf("a first read found %d nodes, want 4", n)
	}
	// refresh is every dir the source names, as the periodic read says.
	refresh := func() []string {
		var dirs []string
		for _, p := range src.WatchPaths(h.tr.home) {
			if isDir(p) {
				dirs = append(dirs, p)
			}
		}
		return dirs
	}
	newJob := filepath.Join(h.tr.jobs, "job-9--new", busFile)
	infraOf := func(f sources.Facts, id string) string {
		for _, n := range f.Nodes {
			if n.HeartbeatPath == id {
				return n.InfraDir
			}
		}
		return "-"
	}
	tests := []struct {
		name    string
		write   func()
		changed func() []string
		listed  bool
		check   func(t *testing.T, f sources.Facts)
	}{
		{name: "a commit into one bus", write: func() {
			if _, err := h.dbs[0].Exec(`UPDATE conversations SET state = 'withdrawn' WHERE id = 'dispatch:s0'`); err != nil {
				t.Fatal(err)
			}
		}, changed: func() []string { return []string{h.buses[0] + "-wal"} }},
		{name: "the periodic read, no dir moved", write: func() {}, changed: refresh},
		{name: "a new job dir and its bus: listed, found", write: func() {
			insertConv(t, newBus(t, newJob, busDDL), conv{id: "job:webapp:9", typ: typeJob, created: 1})
		}, changed: func() []string { return []string{filepath.Dir(newJob)} }, listed: true, check: func(t *testing.T, f sources.Facts) {
			if infraOf(f, filepath.Join(filepath.Dir(newJob), ".heartbeat")) == "-" {
				t.Errorf("the new job's row is not found")
			}
		}},
		{name: "a job dir removed: listed, dropped", write: func() {
			h.dbs[1].Close()
			if err := os.RemoveAll(filepath.Dir(h.buses[1])); err != nil {
				t.Fatal(err)
			}
		}, changed: func() []string { return []string{filepath.Dir(h.buses[1])} }, listed: true, check: func(t *testing.T, f sources.Facts) {
			if infraOf(f, h.buses[1]+"#dispatch:s1") != "-" {
				t.Errorf("the removed job's worker is still read")
			}
		}},
		{name: "a worker's session dir made in a scope: listed, found", write: func() {
			mkdirs(t, filepath.Join(h.scope, "s1"))
			if _, err := h.dbs[0].Exec(`UPDATE conversations SET state = 'active' WHERE id = 'dispatch:s0'`); err != nil {
				t.Fatal(err)
			}
		}, changed: func() []string { return []string{h.buses[0] + "-wal"} }, listed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.write()
			l0 := src.lists.Load()
			facts, k = src.Reread(h.tr.home, time.Now(), k, tc.changed())
			if got := src.lists.Load() - l0; (got > 0) != tc.listed {
				t.Errorf("%d dirs listed, want listed: %v", got, tc.listed)
			}
			if tc.check != nil {
				tc.check(t, facts)
			}
			if whole := New().Read(h.tr.home, time.Now()); !reflect.DeepEqual(facts, whole) {
				t.Errorf("a reread's facts differ from a whole read's:\n%s\nwant\n%s", describeFacts(facts), describeFacts(whole))
			}
		})
	}
	if dir := infraOf(facts, h.buses[0]+"#dispatch:s0"); dir != filepath.Join(h.scope, "s0") {
		t.Errorf("the first worker's session dir is %q", dir)
	}
}

// A dir listed within racyWindow of its mtime is listed again at the next
// read, whatever its mtime says then: a second change in the same tick of
// a coarse clock leaves the mtime as it was.
func TestARacyListingIsNotKept(t *testing.T) {
	h := newListingHome(t)
	src := New()
	_, k := src.Reread(h.tr.home, time.Now(), nil, nil)
	// Just made: the scope's sessions dir's mtime is now.
	mkdirs(t, filepath.Join(h.scope, "s1"))
	commit := func() {
		t.Helper()
		if _, err := h.dbs[0].Exec(`INSERT INTO messages VALUES (?, 'dispatch:s0', 'coding', 'hi', 1.0)`, fmt.Sprint(time.Now().UnixNano())); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []bool{true, true} {
		commit()
		l0 := src.lists.Load()
		_, k = src.Reread(h.tr.home, time.Now(), k, []string{h.buses[0] + "-wal"})
		if got := src.lists.Load() - l0; (got > 0) != want {
			t.Errorf("read %d: %d dirs listed, want listed: %v", i, got, want)
		}
	}
	ageDirs(t, h.tr.home)
	commit()
	_, k = src.Reread(h.tr.home, time.Now(), k, []string{h.buses[0] + "-wal"})
	commit()
	l0 := src.lists.Load()
	src.Reread(h.tr.home, time.Now(), k, []string{h.buses[0] + "-wal"})
	if got := src.lists.Load() - l0; got != 0 {
		t.Errorf("%d dirs listed once the dirs are old, want 0", got)
	}
}

// SPEC §10: a bus whose watch path moved though nothing was committed
// since its last read (a read the watcher's look at the mark had already
// made, the periodic read) is not queried: its commit mark, read through
// the files its held connection holds, is the one its last read took. A
// commit since is queried.
func TestABusWhoseMarkDidNotMoveIsNotQueried(t *testing.T) {
	h := newListingHome(t)
	src := New()
	_, k := src.Reread(h.tr.home, time.Now(), nil, nil)
	tests := []struct {
		name    string
		write   func()
		queries int64
	}{
		{name: "a commit", write: func() {
			if _, err := h.dbs[0].Exec(`UPDATE conversations SET state = 'withdrawn' WHERE id = 'dispatch:s0'`); err != nil {
				t.Fatal(err)
			}
		}, queries: 1},
		{name: "nothing committed since", write: func() {}, queries: 0},
		{name: "another commit", write: func() {
			insertMessage(t, h.dbs[0], "m1", "dispatch:s0", "coding", "hi", 1)
		}, queries: 1},
		{name: "nothing committed since, again", write: func() {}, queries: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.write()
			q0 := src.Queries()[h.buses[0]]
			var facts sources.Facts
			facts, k = src.Reread(h.tr.home, time.Now(), k, []string{h.buses[0] + "-wal"})
			if got := src.Queries()[h.buses[0]] - q0; got != tc.queries {
				t.Errorf("queried %d times, want %d", got, tc.queries)
			}
			if whole := New().Read(h.tr.home, time.Now()); !reflect.DeepEqual(facts, whole) {
				t.Errorf("a reread's facts differ from a whole read's:\n%s\nwant\n%s", describeFacts(facts), describeFacts(whole))
			}
		})
	}
}
