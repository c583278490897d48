package scanner

import (
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/teaparty"
)

// openAsTeaParty opens the bus at path for writing as TeaParty's
// SqliteMessageBus does (teaparty/messaging/conversations.py): Python's
// sqlite3.connect, whose busy timeout is 5 s, then `PRAGMA journal_mode=WAL`
// and nothing else: synchronous stays SQLite's default, FULL, so that every
// commit syncs the -wal before it is marked committed in the -shm.
func openAsTeaParty(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: path, RawQuery: "_pragma=busy_timeout(5000)"}).String())
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`PRAGMA journal_mode=WAL`); err != nil {
		t.Fatal(err)
	}
	var sync int
	if err := db.QueryRow(`PRAGMA synchronous`).Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if sync != 2 {
		t.Fatalf("the writer's synchronous is %d, want SQLite's default FULL (2)", sync)
	}
	return db
}

// workerPID is the pid the worker's node names, 0 when it has none.
func workerPID(s *model.Snapshot) int {
	for _, n := range s.Nodes() {
		if n.Source == string(sources.TeaParty) && filepath.Base(n.ID) == turnWorker {
			return n.PID()
		}
	}
	return 0
}

// SPEC §9, §10: a commit to a bus is published, every one, within a
// second, with only the events the writer's own writes cause (no poll): a
// writer at TeaParty's settings writes the -wal, syncs it, and only then
// marks the commit in the -shm, which no event announces. A read woken by
// the -wal that ran before the mark saw the old row; the store must not
// count as read until a read saw what the -wal holds.
func TestWatchStoreSeesEveryCommitOfAWALWriter(t *testing.T) {
	const updates, within = 200, time.Second
	j := newTurnJob(t)
	writer := openAsTeaParty(t, j.bus)
	w := watchStore(t, j.home, teaparty.New())
	if pid := workerPID(w.Snapshot()); pid != 0 {
		t.Fatalf("before the updates the worker names pid %d, want none", pid)
	}
	var missed []string
	for i := 1; i <= updates; i++ {
		pid := 100000 + i
		started := float64(time.Now().UnixNano()) / 1e9
		if _, err := writer.Exec(`UPDATE conversations SET pid = ?, pid_started = ? WHERE id = ?`, pid, started, turnWorker); err != nil {
			t.Fatal(err)
		}
		if !seenWithin(w, within, func(s *model.Snapshot) bool { return workerPID(s) == pid }) {
			missed = append(missed, fmt.Sprintf("update %d (pid %d; snapshot says %d)", i, pid, workerPID(w.Snapshot())))
			if len(missed) == 5 {
				break
			}
		}
	}
	if len(missed) > 0 {
		t.Errorf("updates not seen within %v (of %d, stopped at 5): %v", within, updates, missed)
	}
}

// seenWithin reports whether an update satisfying cond arrives within d.
func seenWithin(w *Watcher, d time.Duration, cond func(*model.Snapshot) bool) bool {
	if cond(w.Snapshot()) {
		return true
	}
	deadline := time.After(d)
	for {
		select {
		case u, ok := <-w.Updates():
			if !ok {
				return false
			}
			if cond(u.Snapshot) {
				return true
			}
		case <-deadline:
			return false
		}
	}
}
