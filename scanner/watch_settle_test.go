package scanner

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

// tornStore is a store the way SQLite's WAL mode shows itself to a reader:
// a writer appends a transaction's frames to the -wal (the watch path: its
// mtime moves, an event comes) and only then publishes them in the index
// (the -shm, which readers go by and no one watches). Its Read answers from
// the index alone and counts the reads.
type tornStore struct{ reads atomic.Int64 }

const (
	tornKind  sources.Kind = "torn"
	tornWAL                = "store-wal"
	tornIndex              = "index"
)

func (*tornStore) Kind() sources.Kind { return tornKind }
func (*tornStore) Detect(path string) bool {
	_, err := os.Stat(filepath.Join(path, tornWAL))
	return err == nil
}
func (*tornStore) WatchPaths(path string) []string { return []string{filepath.Join(path, tornWAL)} }
func (*tornStore) Thresholds() model.Thresholds    { return model.DefaultThresholds() }
func (s *tornStore) Read(path string, now time.Time) sources.Facts {
	defer s.reads.Add(1)
	status, err := os.ReadFile(filepath.Join(path, tornIndex))
	if err != nil {
		return sources.Facts{Problems: []model.Problem{{Path: path, Error: err.Error()}}}
	}
	return sources.Facts{Nodes: []*model.Node{{Source: string(tornKind), ID: "w", HeartbeatPath: path + "#w",
		HasHeartbeat: true, BeatMtime: now, Heartbeat: &model.Heartbeat{Status: string(status), Role: "agent"}}}}
}

// SPEC §10: a store change is never lost to a writer preempted between
// its -wal write and its commit's index: the read the -wal's event brought
// saw nothing new, and no event is to come. On a loaded single core this
// left a TeaParty worker on its last turn's pid for good (the live turns
// test). A read that starts right after a watch path was written is
// suspect, and the store is read again at a tick.
func TestWatchStoreReadsAgainAfterAReadThatRacedAWrite(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(tornIndex, model.StatusRunning)
	write(tornWAL, "frame 1")
	src := &tornStore{}
	w := watchStore(t, string(tornKind)+":"+dir, src)
	await(t, w, "the first read", statusIs(tornKind, model.StatusRunning))

	// The frames, and the read their event brings, which sees the old index.
	before := src.reads.Load()
	write(tornWAL, "frame 1, frame 2")
	for deadline := time.Now().Add(5 * time.Second); src.reads.Load() == before; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the -wal's write brought no read")
		}
	}
	// Then the commit, in the index: no watch path moves.
	write(tornIndex, model.StatusCompleted)
	awaitWithin(t, w, 3*DefaultTick, "the committed status", statusIs(tornKind, model.StatusCompleted))
}
