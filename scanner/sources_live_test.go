package scanner

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/middle"
	"github.com/dispatchtop/dispatchtop/sources/teaparty"
	"github.com/fsnotify/fsnotify"
)

// watchStore watches one database store with polling an hour apart: only
// an fsnotify event on the database or its -wal can bring a change.
func watchStore(t *testing.T, root string, src sources.Source) *Watcher {
	t.Helper()
	w, err := NewWatcher(Options{Roots: []string{root}, Sources: []sources.Source{src}},
		WatchOptions{FallbackPoll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	runWatcher(t, w)
	return w
}

// theNode is the one node of a store's snapshot whose source is kind.
func theNode(s *model.Snapshot, kind sources.Kind) *model.Node {
	var found *model.Node
	for _, n := range s.Nodes() {
		if n.Source == string(kind) {
			found = n
		}
	}
	return found
}

// statusIs waits for the store's node to carry status.
func statusIs(kind sources.Kind, status string) func(*model.Snapshot) bool {
	return func(s *model.Snapshot) bool {
		n := theNode(s, kind)
		return n != nil && n.Status() == status
	}
}

// SPEC §10: a row of a database store that changes is published by the
// watcher from the event on the database's -wal, as a heartbeat's is.
func TestWatchDatabaseStoresPublishARowChange(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name   string
		kind   sources.Kind
		src    sources.Source
		build  func(t *testing.T) (root string, db *sql.DB)
		change string
		before string
		after  string
	}{
		{
			name: "middle", kind: sources.Middle, src: middle.New(),
			build: func(t *testing.T) (string, *sql.DB) {
				home := filepath.Join(t.TempDir(), ".middle")
				db := storefixtures.NewDB(t, filepath.Join(home, "db.sqlite3"), storefixtures.MiddleMigrations)
				if _, err := db.Exec(`INSERT INTO workflows (id, kind, repo, adapter, state, created_at, updated_at, last_heartbeat)
					VALUES ('wf-1', 'implementation', 'acme/api', 'claude', 'running', ?, ?, ?)`,
					now.UnixMilli(), now.UnixMilli(), now.UnixMilli()); err != nil {
					t.Fatal(err)
				}
				return home, db
			},
			change: `UPDATE workflows SET state = 'completed' WHERE id = 'wf-1'`,
			before: model.StatusRunning, after: model.StatusCompleted,
		},
		{
			name: "teaparty", kind: sources.TeaParty, src: teaparty.New(),
			build: func(t *testing.T) (string, *sql.DB) {
				home := filepath.Join(t.TempDir(), "webapp", ".teaparty")
				bus := filepath.Join(home, "jobs", "job-20260507-101500--add-dark-mode", "messages.db")
				db := storefixtures.NewDB(t, bus, storefixtures.TeaPartyBusDDL)
				if _, err := db.Exec(`INSERT INTO conversations (id, type, state, created_at, agent_name)
					VALUES ('job:webapp:20260507-101500', 'job', 'active', ?, 'webapp-lead')`,
					float64(now.UnixNano())/1e9); err != nil {
					t.Fatal(err)
				}
				return home, db
			},
			change: `UPDATE conversations SET state = 'withdrawn' WHERE id = 'job:webapp:20260507-101500'`,
			before: model.StatusStarting, after: model.StatusWithdrawn,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, db := tc.build(t)
			w := watchStore(t, root, tc.src)
			if n := theNode(w.Snapshot(), tc.kind); n == nil || n.Status() != tc.before {
				t.Fatalf("before the change: node %+v, want status %s (problems %v)", n, tc.before, w.Snapshot().Problems)
			}
			if _, err := db.Exec(tc.change); err != nil {
				t.Fatal(err)
			}
			await(t, w, "the row's new status "+tc.after, statusIs(tc.kind, tc.after))
			if n := theNode(w.Snapshot(), tc.kind); n.State != model.StateFinished {
				t.Errorf("after the change: %s (%s), want finished", n.State, n.Reason)
			}
		})
	}
}

// SPEC §10: a store's watch paths are asked again after each read: a job
// TeaParty starts after the watcher did — a new bus in a new dir — is
// followed too, and a change of its row is published from its -wal.
func TestWatchStoreFollowsABusCreatedAfterItStarted(t *testing.T) {
	now := time.Now()
	home := filepath.Join(t.TempDir(), "webapp", ".teaparty")
	first := storefixtures.NewDB(t, filepath.Join(home, "jobs", "job-1--first", "messages.db"), storefixtures.TeaPartyBusDDL)
	if _, err := first.Exec(`INSERT INTO conversations (id, type, state, created_at) VALUES ('job:webapp:1', 'job', 'active', ?)`,
		float64(now.UnixNano())/1e9); err != nil {
		t.Fatal(err)
	}
	w := watchStore(t, home, teaparty.New())
	second := storefixtures.NewDB(t, filepath.Join(home, "jobs", "job-2--second", "messages.db"), storefixtures.TeaPartyBusDDL)
	if _, err := second.Exec(`INSERT INTO conversations (id, type, state, created_at) VALUES ('job:webapp:2', 'job', 'active', ?)`,
		float64(now.UnixNano())/1e9); err != nil {
		t.Fatal(err)
	}
	jobIs := func(dir, status string) func(*model.Snapshot) bool {
		return func(s *model.Snapshot) bool {
			for _, n := range s.Nodes() {
				if n.InfraDir == filepath.Join(home, "jobs", dir) && n.Status() == status {
					return true
				}
			}
			return false
		}
	}
	await(t, w, "the second job", jobIs("job-2--second", model.StatusStarting))
	if _, err := second.Exec(`UPDATE conversations SET state = 'withdrawn' WHERE id = 'job:webapp:2'`); err != nil {
		t.Fatal(err)
	}
	await(t, w, "the second job withdrawn", jobIs("job-2--second", model.StatusWithdrawn))
}

// A read-only reader opening a bus sets the -wal's mode to the database's
// (an attribute change, a Chmod event) and the -shm is SQLite's own: were
// either a change, every read would cause the next and a store, once
// changed, would be read again and again. Only a watch path whose content
// moved (size, mtime, inode) marks its store; a new file beside it does.
func TestWatchStoreIsNotMarkedByItsOwnReads(t *testing.T) {
	home := filepath.Join(t.TempDir(), "webapp", ".teaparty")
	bus := filepath.Join(home, "jobs", "job-1--first", "messages.db")
	db := storefixtures.NewDB(t, bus, storefixtures.TeaPartyBusDDL)
	insert := func(id string) {
		if _, err := db.Exec(`INSERT INTO conversations (id, type, state, created_at) VALUES (?, 'job', 'active', ?)`,
			id, float64(time.Now().UnixNano())/1e9); err != nil {
			t.Fatal(err)
		}
	}
	insert("job:webapp:1")
	w, err := NewWatcher(Options{Roots: []string{home}, Sources: []sources.Source{teaparty.New()}},
		WatchOptions{FallbackPoll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	teaparty.New().Read(home, time.Now()) // what every read does to the files
	for _, p := range []string{bus + "-wal", bus + "-shm", bus} {
		w.markStores(p, fsnotify.Chmod)
	}
	if len(w.stores.toRead) != 0 {
		t.Errorf("a read of the store marked it to be read again")
	}
	insert("job:webapp:2")
	w.markStores(bus+"-wal", fsnotify.Write)
	if len(w.stores.toRead) != 1 {
		t.Errorf("a row written to the -wal did not mark the store")
	}
	clear(w.stores.toRead)
	w.markStores(filepath.Join(home, "jobs", "job-1--first", ".plan-stream.jsonl"), fsnotify.Create)
	if len(w.stores.toRead) != 1 {
		t.Errorf("a new file in a job dir did not mark the store")
	}
}
