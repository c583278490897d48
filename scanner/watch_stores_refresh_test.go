package scanner

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/middle"
	"github.com/dispatchtop/dispatchtop/sources/teaparty"
)

// SPEC §10: a sign of life that lies outside a store's watch paths — a
// TeaParty worker's stream.jsonl, written on every event of its turn while
// its bus may stay quiet for minutes — reaches the live engine within the
// store refresh, though nothing else of the store moves; otherwise a
// worker busy in a long tool call would read stalled, then a kill
// candidate. The refresh maps the bus's rows again without querying it.
func TestWatchStoreRefreshSeesAStreamWrittenWhileItsBusIsQuiet(t *testing.T) {
	j := newTurnJob(t)
	j.startTurn(t, os.Getpid())
	old := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	if err := os.Chtimes(j.stream, old, old); err != nil {
		t.Fatal(err)
	}
	src := teaparty.New()
	w, err := NewWatcher(Options{Roots: []string{j.home}, Sources: []sources.Source{src}},
		WatchOptions{FallbackPoll: time.Hour, StoreRefresh: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runWatcher(t, w)
	workerBeat := func(s *model.Snapshot) time.Time {
		for _, n := range s.Nodes() {
			if n.HeartbeatPath == j.bus+"#"+turnWorker {
				return n.BeatMtime
			}
		}
		return time.Time{}
	}
	var before time.Time
	await(t, w, "the worker", func(s *model.Snapshot) bool { before = workerBeat(s); return !before.IsZero() })
	queried := src.Queries()[j.bus]

	// Later than anything the first read saw (the row's creation, the
	// stream's first write).
	time.Sleep(50 * time.Millisecond)
	fresh := time.Now()
	if !fresh.After(before) {
		t.Fatalf("the worker's beat %v is not in the past", before)
	}
	if err := os.Chtimes(j.stream, fresh, fresh); err != nil {
		t.Fatal(err)
	}
	await(t, w, "the worker's stream written, its bus quiet", func(s *model.Snapshot) bool { return workerBeat(s).Equal(fresh) })
	// The sleep above is no wait for the refresh: the refresh is what
	// brings it (FallbackPoll is an hour, and nothing else moved).
	if got := src.Queries()[j.bus]; got != queried {
		t.Errorf("the refresh queried the quiet bus %d times: it maps its rows again, it asks nothing", got-queried)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(j.bus), "messages.db-journal")); err == nil {
		t.Errorf("the store was written")
	}
}

// SPEC §10: a store read again only where it moved (middle's rows past a
// watermark) still sees, within the store refresh, a sign of life outside
// its watch paths: a middle row's transcript, which its agent appends to
// while the row stays as it was. The refresh reads such a store whole.
func TestWatchStoreRefreshSeesATranscriptWrittenWhileTheTableIsQuiet(t *testing.T) {
	home := filepath.Join(t.TempDir(), ".middle")
	transcript := filepath.Join(t.TempDir(), "transcript.jsonl")
	line := func(at time.Time) []byte {
		return []byte(`{"type":"assistant","timestamp":"` + at.UTC().Format(time.RFC3339Nano) + `"}` + "\n")
	}
	started := time.Now().Add(-10 * time.Minute).Truncate(time.Millisecond)
	if err := os.WriteFile(transcript, line(started), 0o644); err != nil {
		t.Fatal(err)
	}
	db := storefixtures.NewDB(t, filepath.Join(home, "db.sqlite3"), storefixtures.MiddleMigrations)
	if _, err := db.Exec(`INSERT INTO workflows (id, kind, repo, adapter, state, created_at, updated_at, transcript_path)
		VALUES ('wf-1', 'implementation', 'acme/api', 'claude', 'running', ?, ?, ?)`, started.UnixMilli(), started.UnixMilli(), transcript); err != nil {
		t.Fatal(err)
	}
	src := middle.New()
	src.PaneLookup = func() (map[string]middle.Session, error) { return map[string]middle.Session{}, nil }
	w, err := NewWatcher(Options{Roots: []string{home}, Sources: []sources.Source{src}},
		WatchOptions{FallbackPoll: time.Hour, StoreRefresh: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runWatcher(t, w)
	beat := func(s *model.Snapshot) time.Time {
		if n := theNode(s, sources.Middle); n != nil {
			return n.BeatMtime
		}
		return time.Time{}
	}
	await(t, w, "the row", func(s *model.Snapshot) bool { return beat(s).Equal(started) })
	fresh := time.Now().Truncate(time.Millisecond)
	f, err := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(line(fresh)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	await(t, w, "the transcript written, the table quiet", func(s *model.Snapshot) bool { return beat(s).Equal(fresh) })
}

// A store's source is asked for its watch paths again only when an entry
// it was not asked about shows in a dir it named (a new job's dir, a new
// bus): a commit moves a watch path of its own (a bus's -wal), which asks
// nothing, though the path lies in a dir the source named too; an entry
// gone by the read (a temp file renamed over another) asks nothing; nor
// does a file, in a store whose watch paths are dirs alone.
func TestStoreDirMovedOnlyForAnEntryItDidNotName(t *testing.T) {
	job := filepath.Join(t.TempDir(), "jobs", "job-1")
	for _, p := range []string{filepath.Join(job, "worker"), filepath.Join(job, "tasks")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(job, "worker"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"tasks", "stream.jsonl"} {
		if err := os.WriteFile(filepath.Join(job, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		source  sources.Source
		changed []string
		unnamed []string
		moved   bool
	}{
		{"a commit: the bus's -wal", recordStore{}, []string{filepath.Join(job, "messages.db-wal")}, nil, false},
		{"the bus itself", recordStore{}, []string{filepath.Join(job, "messages.db")}, nil, false},
		{"a new file in the job's dir", recordStore{}, []string{filepath.Join(job, "tasks")}, nil, true},
		{"a file asked about already", recordStore{}, []string{filepath.Join(job, "stream.jsonl")}, []string{filepath.Join(job, "stream.jsonl")}, false},
		{"a temp file gone", recordStore{}, []string{filepath.Join(job, ".tasks.tmp")}, nil, false},
		{"a new file, the store watched by its dirs", dirsOnlyStore{}, []string{filepath.Join(job, "tasks")}, nil, false},
		{"a new dir, the store watched by its dirs", dirsOnlyStore{}, []string{filepath.Join(job, "worker")}, nil, true},
		{"the job's dir itself", recordStore{}, []string{job}, nil, true},
		{"nothing", recordStore{}, nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &store{
				facts: storeFacts{root: Root{Path: job, Source: tc.source}},
				paths: map[string]pathSig{job: {}, filepath.Join(job, "messages.db"): {}, filepath.Join(job, "messages.db-wal"): {}},
				names: map[string]map[string]bool{job: nil},
			}
			st.changed = map[string]bool{}
			for _, p := range tc.changed {
				st.changed[p] = true
			}
			st.unnamed = map[string]bool{}
			for _, p := range tc.unnamed {
				st.unnamed[p] = true
			}
			if got := st.dirMoved(); got != tc.moved {
				t.Errorf("dirMoved %v, want %v", got, tc.moved)
			}
		})
	}
}

// dirsOnlyStore is recordStore watched by its dirs alone.
type dirsOnlyStore struct{ recordStore }

func (dirsOnlyStore) WatchesDirsOnly() {}
