package scanner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/opencodeteams"
	"github.com/fsnotify/fsnotify"
)

// agentsStore is an opencode-teams store of team alpha's agents, each
// file rewritten as the plugin does (a temp file renamed over).
type agentsStore struct {
	store string
	n     int
}

func newAgentsStore(t *testing.T, n int) *agentsStore {
	t.Helper()
	s := &agentsStore{store: filepath.Join(t.TempDir(), ".opencode", "opencode-teams"), n: n}
	s.team(t, "alpha")
	for i := range n {
		s.write(t, i, time.Now().Add(-time.Minute))
	}
	return s
}

// team writes the config of the team name, led by lead-<name>.
func (s *agentsStore) team(t *testing.T, name string) {
	t.Helper()
	at := time.Now().UTC().Format(time.RFC3339Nano)
	b, err := json.Marshal(map[string]any{"name": name, "created": at, "leader": "lead-" + name, "dispatchRules": []any{}, "dispatchLog": []any{},
		"members": []map[string]any{{"agentId": "lead-" + name, "agentName": "Leader", "agentType": "leader", "joinedAt": at}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(s.store, "teams", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// write rewrites agent i's file with the beat given.
func (s *agentsStore) write(t *testing.T, i int, beat time.Time) {
	t.Helper()
	id := fmt.Sprintf("a%04d", i)
	b, err := json.Marshal(map[string]any{"id": id, "name": "agent-" + id, "teamName": "alpha", "role": "worker", "model": "m",
		"sessionId": "ses_" + id, "serverPort": 28799, "cwd": s.store, "color": "#45B7D1", "status": "active", "isActive": true,
		"createdAt": beat.UTC().Format(time.RFC3339Nano), "heartbeatTs": beat.UTC().Format(time.RFC3339Nano),
		"updatedAt": beat.UTC().Format(time.RFC3339Nano), "consecutiveMisses": 0, "sessionRotationCount": 0})
	if err != nil {
		t.Fatal(err)
	}
	agents := filepath.Join(s.store, "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(agents, "."+id+".json.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(agents, id+".json")); err != nil {
		t.Fatal(err)
	}
}

// beatOf is agent i's beat in s, zero when it holds no such agent.
func (s *agentsStore) beatOf(snap *model.Snapshot, i int) time.Time {
	key := filepath.Join(s.store, "agents", fmt.Sprintf("a%04d.json", i))
	for _, n := range snap.Nodes() {
		if n.HeartbeatPath == key {
			return n.BeatMtime
		}
	}
	return time.Time{}
}

// countedTeams is opencode-teams counting the watcher's asks for its watch
// paths.
type countedTeams struct {
	opencodeteams.Source
	asks *atomic.Int64
}

func (c countedTeams) WatchPaths(path string) []string {
	c.asks.Add(1)
	return c.Source.WatchPaths(path)
}

// watchAgents follows s with no poll and no refresh in the test's time:
// only the writes' events bring a read.
func watchAgents(t *testing.T, s *agentsStore) (*Watcher, *atomic.Int64) {
	t.Helper()
	asks := &atomic.Int64{}
	src := countedTeams{Source: opencodeteams.Source{Lookup: &opencodeteams.Lookup{RecordsOnly: true,
		OpencodeDB: filepath.Join(t.TempDir(), "opencode.db")}}, asks: asks}
	w, err := NewWatcher(Options{Roots: []string{s.store}, Sources: []sources.Source{src}},
		WatchOptions{FallbackPoll: time.Hour, StoreRefresh: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	runWatcher(t, w)
	await(t, w, "every agent", func(snap *model.Snapshot) bool { return !s.beatOf(snap, s.n-1).IsZero() })
	// The first write is read with whatever the start saw move (the
	// agents dir's signature, taken before the first read, may be a
	// timestamp's grain off): the whole store, maybe its watch paths.
	first := time.Now().Truncate(time.Millisecond)
	s.write(t, s.n-1, first)
	await(t, w, "the last agent's write", func(snap *model.Snapshot) bool { return s.beatOf(snap, s.n-1).Equal(first) })
	return w, asks
}

// SPEC §10: an agent file written as opencode-teams writes it (a temp file
// renamed over) is a file in a watched dir, never a watch path: the
// source is not asked for its watch paths again (which lists teams/ and
// servers/); a team's dir made later is, and is followed.
func TestWatchStoreAsksForWatchPathsOnlyWhenADirAppears(t *testing.T) {
	s := newAgentsStore(t, 20)
	w, asks := watchAgents(t, s)
	before := asks.Load()
	for i := range 10 {
		beat := time.Now().Truncate(time.Millisecond)
		s.write(t, i, beat)
		await(t, w, fmt.Sprintf("agent %d's write", i), func(snap *model.Snapshot) bool { return s.beatOf(snap, i).Equal(beat) })
	}
	if got := asks.Load() - before; got != 0 {
		t.Errorf("10 agent files written: the source was asked for its watch paths %d times, want 0", got)
	}

	// A team made after the watcher began: its dir, then its config in it.
	if err := os.MkdirAll(filepath.Join(s.store, "teams", "beta"), 0o755); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for asks.Load() == before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if asks.Load() == before {
		t.Fatalf("a team's dir made: the source was not asked for its watch paths")
	}
	s.team(t, "beta")
	// The config's write shows only through the new dir's watch (no poll,
	// no refresh): its leader's node.
	await(t, w, "team beta's leader", func(snap *model.Snapshot) bool {
		for _, n := range snap.Nodes() {
			if n.Source == string(sources.OpencodeTeams) && n.Heartbeat.Team == "beta" {
				return true
			}
		}
		return false
	})
}

// markedStore is a store watched through dir, naming db and its -wal, as
// markStores finds it after a read.
func markedStore(t *testing.T) (*Watcher, *store, string) {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "records.db")
	for _, p := range []string{db, db + "-wal"} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st := &store{facts: storeFacts{root: Root{Path: dir, Source: recordStore{}}}, paths: map[string]pathSig{},
		names: map[string]map[string]bool{dir: {"records.db": true, "records.db-wal": true}}, changed: map[string]bool{}}
	for _, p := range []string{db, db + "-wal"} {
		st.paths[p] = st.sig(p)
	}
	st.sigs = 0
	w := &Watcher{}
	w.stores.byDir = map[string][]*store{dir: {st}}
	w.stores.toRead, w.stores.paced = map[*store]bool{}, map[*store]bool{}
	return w, st, db
}

// SPEC §10: a write of a watch path marks its store with no stat (it moved
// the content; only our own reader's Chmod of the -wal, which moves
// nothing, needs its signature compared).
func TestMarkStoresStatsOnlyWhatMayNotHaveMoved(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		op     fsnotify.Op
		marked bool
		stats  int
	}{
		{"a commit: the -wal written", "records.db-wal", fsnotify.Write, true, 0},
		{"the database written", "records.db", fsnotify.Write, true, 0},
		{"our reader's chmod of the -wal", "records.db-wal", fsnotify.Chmod, false, 1},
		{"the -wal made again", "records.db-wal", fsnotify.Create, false, 1},
		{"a file the store does not name", "notes.txt", fsnotify.Write, false, 0},
		{"the -shm", "records.db-shm", fsnotify.Write, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, st, db := markedStore(t)
			w.markStores(filepath.Join(filepath.Dir(db), tc.file), tc.op)
			if got := w.stores.toRead[st]; got != tc.marked {
				t.Errorf("marked %v, want %v", got, tc.marked)
			}
			if st.sigs != tc.stats {
				t.Errorf("%d stats, want %d", st.sigs, tc.stats)
			}
		})
	}
}

// storeNodes is how many nodes of stores read again the watcher has
// stamped or compared since it began.
func storeNodes(w *Watcher) int {
	w.stats.mu.Lock()
	defer w.stats.mu.Unlock()
	return w.stats.storeNodes
}

// SPEC §10: a write of one agent's file among many costs the watcher that
// agent's node: the source says which node it put in place
// (sources.Facts.Changed), and the watcher stamps and compares that one,
// not the store's every node (copied and compared twice, before).
func TestWatchStoreTouchesOnlyTheNodeAWritePutInPlace(t *testing.T) {
	const agents = 200
	s := newAgentsStore(t, agents)
	w, _ := watchAgents(t, s)
	for i := range 5 {
		before, reads := storeNodes(w), storeReads(w, s.store)
		beat := time.Now().Truncate(time.Millisecond)
		s.write(t, i, beat)
		await(t, w, fmt.Sprintf("agent %d's write", i), func(snap *model.Snapshot) bool { return s.beatOf(snap, i).Equal(beat) })
		// A read of the temp file's event puts nothing in place; the
		// rename's puts one node: stamped once, compared once.
		if got := storeNodes(w) - before; got < 1 || got > 2 {
			t.Errorf("agent %d written (%d reads): the watcher touched %d nodes of %d, want 1 or 2", i, storeReads(w, s.store)-reads, got, agents+1)
		}
	}
}
