package scanner

import (
	"database/sql"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/middle"
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

// SPEC §10: a write in one bus re-reads that bus only, and an unchanged
// database is not queried: the watcher tells its source which watch paths
// moved, and the source queries the buses they belong to, no other.
func TestWatchStoreRereadsOnlyTheBusWritten(t *testing.T) {
	const jobs = 5
	home := filepath.Join(t.TempDir(), "webapp", ".teaparty")
	var buses []string
	var writers []*sql.DB
	now := float64(time.Now().UnixNano()) / 1e9
	for i := range jobs {
		bus := filepath.Join(home, "jobs", fmt.Sprintf("job-%d--work", i), "messages.db")
		storefixtures.NewDB(t, bus, storefixtures.TeaPartyBusDDL).Close()
		w := openAsTeaParty(t, bus)
		if _, err := w.Exec(`INSERT INTO conversations (id, type, state, created_at, agent_name, parent_conversation_id)
			VALUES (?, 'dispatch', 'active', ?, 'coding', ?)`, fmt.Sprintf("dispatch:w%d", i), now, fmt.Sprintf("job:webapp:%d", i)); err != nil {
			t.Fatal(err)
		}
		buses, writers = append(buses, bus), append(writers, w)
	}
	src := teaparty.New()
	w := watchStore(t, home, src)
	quiet := func(what string) map[string]int64 {
		t.Helper()
		// The reads a write caused are done when the counts hold still.
		last := src.Queries()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
			time.Sleep(200 * time.Millisecond)
			now := src.Queries()
			if maps.Equal(now, last) {
				return now
			}
			last = now
		}
		t.Fatalf("%s: the source is still querying after 5 s: %v", what, last)
		return nil
	}
	before := quiet("after the first read")
	for i := range buses {
		if before[buses[i]] == 0 {
			t.Fatalf("the first read did not query %s: %v", buses[i], before)
		}
	}
	const written = 2
	stateIs := func(s *model.Snapshot) bool {
		for _, n := range s.Nodes() {
			if n.HeartbeatPath == buses[written]+"#dispatch:w2" {
				return n.Status() == model.StatusWithdrawn
			}
		}
		return false
	}
	if _, err := writers[written].Exec(`UPDATE conversations SET state = 'withdrawn' WHERE id = 'dispatch:w2'`); err != nil {
		t.Fatal(err)
	}
	await(t, w, "the written bus's row", stateIs)
	after := quiet("after the write")
	for i, bus := range buses {
		got := after[bus] - before[bus]
		switch {
		case i == written && got == 0:
			t.Errorf("the bus written was not queried again")
		case i != written && got != 0:
			t.Errorf("bus %d, not written, was queried %d times more", i, got)
		}
	}
	if after[buses[written]]-before[buses[written]] > 3 {
		t.Errorf("the bus written was queried %d times for one write", after[buses[written]]-before[buses[written]])
	}
}

// rebuilds is how many times the watcher has built its forest.
func rebuilds(w *Watcher) int {
	w.stats.mu.Lock()
	defer w.stats.mu.Unlock()
	return w.stats.rebuilds
}

// SPEC §10: a store read again whose forest edges held is patched into the
// sessions holding its changed nodes, as a heartbeat's facts are: the
// forest is not built again and every other session is the last
// snapshot's own. A row added links a new node: the forest is built again.
func TestWatchStoreChangeRenewsOnlyItsSession(t *testing.T) {
	home := filepath.Join(t.TempDir(), "webapp", ".teaparty")
	var writers []*sql.DB
	now := float64(time.Now().UnixNano()) / 1e9
	for i := range 3 {
		bus := filepath.Join(home, "jobs", fmt.Sprintf("job-%d--work", i), "messages.db")
		storefixtures.NewDB(t, bus, storefixtures.TeaPartyBusDDL).Close()
		w := openAsTeaParty(t, bus)
		for _, q := range []string{
			fmt.Sprintf(`INSERT INTO conversations (id, type, state, created_at, agent_name) VALUES ('job:webapp:%d', 'job', 'active', %f, 'lead')`, i, now),
			fmt.Sprintf(`INSERT INTO conversations (id, type, state, created_at, agent_name, parent_conversation_id) VALUES ('dispatch:w%d', 'dispatch', 'active', %f, 'coding', 'job:webapp:%d')`, i, now, i),
		} {
			if _, err := w.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		writers = append(writers, w)
	}
	w := watchStore(t, home, teaparty.New())
	before := w.Snapshot()
	if len(before.Sessions) != 3 {
		t.Fatalf("%d sessions, want 3: %s", len(before.Sessions), describe(before))
	}
	built := rebuilds(w)
	workerStatus := func(id, status string) func(*model.Snapshot) bool {
		return func(s *model.Snapshot) bool {
			for _, n := range s.Nodes() {
				if filepath.Base(n.ID) == id {
					return n.Status() == status
				}
			}
			return false
		}
	}
	if _, err := writers[1].Exec(`UPDATE conversations SET state = 'withdrawn' WHERE id = 'dispatch:w1'`); err != nil {
		t.Fatal(err)
	}
	await(t, w, "the worker withdrawn", workerStatus("dispatch:w1", model.StatusWithdrawn))
	after := w.Snapshot()
	if got := rebuilds(w) - built; got != 0 {
		t.Errorf("a row's new state built the forest %d times, want none", got)
	}
	shared := 0
	for i := range after.Sessions {
		if after.Sessions[i] == before.Sessions[i] {
			shared++
		}
	}
	if shared != 2 {
		t.Errorf("%d sessions are the last snapshot's own, want the 2 not written", shared)
	}
	if _, err := writers[0].Exec(`INSERT INTO conversations (id, type, state, created_at, agent_name, parent_conversation_id)
		VALUES ('dispatch:x0', 'dispatch', 'active', ?, 'coding', 'job:webapp:0')`, now); err != nil {
		t.Fatal(err)
	}
	await(t, w, "the new worker", func(s *model.Snapshot) bool {
		for _, n := range s.Nodes() {
			if filepath.Base(n.ID) == "dispatch:x0" {
				return true
			}
		}
		return false
	})
	if rebuilds(w) == built {
		t.Errorf("a row added did not build the forest again")
	}
}

// SPEC §9, §10: with writers committing into every bus of a home at once,
// a commit to any one bus is still seen within a second: the buses read
// again are those whose paths moved, a read deferred for a commit being
// written is made at the settle check, and none is left behind.
func TestWatchStoreSeesEveryCommitAmongBusyBuses(t *testing.T) {
	if testing.Short() {
		t.Skip("writes for a few seconds")
	}
	const jobs, probes, within = 10, 40, time.Second
	home := filepath.Join(t.TempDir(), "webapp", ".teaparty")
	var buses []string
	var writers, probers []*sql.DB
	now := float64(time.Now().UnixNano()) / 1e9
	for i := range jobs {
		bus := filepath.Join(home, "jobs", fmt.Sprintf("job-%d--work", i), "messages.db")
		storefixtures.NewDB(t, bus, storefixtures.TeaPartyBusDDL).Close()
		w := openAsTeaParty(t, bus)
		if _, err := w.Exec(`INSERT INTO conversations (id, type, state, created_at, agent_name, parent_conversation_id)
			VALUES (?, 'dispatch', 'active', ?, 'coding', ?)`, fmt.Sprintf("dispatch:w%d", i), now, fmt.Sprintf("job:webapp:%d", i)); err != nil {
			t.Fatal(err)
		}
		buses, writers, probers = append(buses, bus), append(writers, w), append(probers, openAsTeaParty(t, bus))
	}
	w := watchStore(t, home, teaparty.New())
	// The noise: messages into random buses, as fast as they commit.
	stop := make(chan struct{})
	noise := make(chan error, 1)
	go func() {
		for n := 0; ; n++ {
			select {
			case <-stop:
				noise <- nil
				return
			default:
			}
			i := n % jobs
			if _, err := writers[i].Exec(`INSERT INTO messages VALUES (?, ?, 'coding', 'working', ?)`,
				fmt.Sprintf("m%d", n), fmt.Sprintf("dispatch:w%d", i), float64(time.Now().UnixNano())/1e9); err != nil {
				noise <- err
				return
			}
		}
	}()
	defer func() {
		close(stop)
		if err := <-noise; err != nil {
			t.Errorf("the noise writer: %v", err)
		}
	}()
	pidOf := func(i int) func(*model.Snapshot) (int, bool) {
		return func(s *model.Snapshot) (int, bool) {
			for _, n := range s.Nodes() {
				if n.HeartbeatPath == buses[i]+fmt.Sprintf("#dispatch:w%d", i) {
					return n.PID(), true
				}
			}
			return 0, false
		}
	}
	var missed []string
	for p := 1; p <= probes; p++ {
		i := (p * 7) % jobs
		pid := 200000 + p
		if _, err := probers[i].Exec(`UPDATE conversations SET pid = ? WHERE id = ?`, pid, fmt.Sprintf("dispatch:w%d", i)); err != nil {
			t.Fatal(err)
		}
		if !seenWithin(w, within, func(s *model.Snapshot) bool { got, _ := pidOf(i)(s); return got == pid }) {
			got, _ := pidOf(i)(w.Snapshot())
			missed = append(missed, fmt.Sprintf("probe %d in bus %d (pid %d; snapshot says %d)", p, i, pid, got))
		}
	}
	if len(missed) > 0 {
		t.Errorf("commits not seen within %v among busy buses: %v", within, missed)
	}
}

// SPEC §10: a store read whole (middle: one table) whose edges held renews
// only the sessions of the nodes whose facts moved: one row changed among
// many is one session classified again, the others are the last
// snapshot's own.
func TestWatchStoreReadWholeRenewsOnlyTheRowThatMoved(t *testing.T) {
	const rows = 20
	home := filepath.Join(t.TempDir(), ".middle")
	db := storefixtures.NewDB(t, filepath.Join(home, "db.sqlite3"), storefixtures.MiddleMigrations)
	now := time.Now().UnixMilli()
	for i := range rows {
		if _, err := db.Exec(`INSERT INTO workflows (id, kind, repo, adapter, state, created_at, updated_at, last_heartbeat)
			VALUES (?, 'implementation', 'acme/api', 'claude', 'running', ?, ?, ?)`, fmt.Sprintf("wf-%02d", i), now, now, now); err != nil {
			t.Fatal(err)
		}
	}
	w := watchStore(t, home, middle.New())
	before := w.Snapshot()
	if len(before.Sessions) != rows {
		t.Fatalf("%d sessions, want %d", len(before.Sessions), rows)
	}
	built := rebuilds(w)
	if _, err := db.Exec(`UPDATE workflows SET state = 'completed', updated_at = ? WHERE id = 'wf-07'`, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	await(t, w, "wf-07 completed", func(s *model.Snapshot) bool {
		for _, n := range s.Nodes() {
			if filepath.Base(n.ID) == "wf-07" {
				return n.Status() == model.StatusCompleted
			}
		}
		return false
	})
	after := w.Snapshot()
	shared := 0
	for i := range after.Sessions {
		if after.Sessions[i] == before.Sessions[i] {
			shared++
		}
	}
	if shared != rows-1 || rebuilds(w) != built {
		t.Errorf("%d sessions are the last snapshot's own and the forest was built %d times, want %d and none", shared, rebuilds(w)-built, rows-1)
	}
}
