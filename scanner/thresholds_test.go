package scanner

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

// slowStore is recordStore with thresholds of its own: its system counts a
// record stale after an hour.
type slowStore struct{ recordStore }

func (slowStore) Thresholds() model.Thresholds {
	th := model.DefaultThresholds()
	th.Beat, th.Stale, th.KillAfter = 10*time.Minute, time.Hour, 2*time.Hour
	return th
}

// SPEC §10: a source's node is judged by the source's thresholds, each
// value the operator gave put over them; a native node by the global ones.
func TestSourceNodesAreJudgedByTheirSourcesThresholds(t *testing.T) {
	global := model.DefaultThresholds()
	global.Stale = 3 * time.Minute // what --stale 3m (or stale = "3m") says
	tests := []struct {
		name       string
		given      GivenThresholds
		wantStale  time.Duration
		wantState  model.State
		wantFlag   model.Flag
		wantNoFlag model.Flag
	}{
		{"the source's stale: quiet at 20 minutes", GivenThresholds{}, time.Hour, model.StateRunning, model.FlagQuiet, model.FlagStalled},
		{"the operator's stale over it: stalled", GivenThresholds{Stale: true}, 3 * time.Minute, model.StateRunning, model.FlagStalled, model.FlagQuiet},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := newRecordStore(t)
			quiet := selfRecord("boss", "", "running")
			quiet.Beat -= 20 * 60
			writeRecords(t, store, []record{quiet})
			native := t.TempDir()
			node(t, native, "lead", "")
			snap, err := Scan(Options{Roots: []string{native, store}, Sources: []sources.Source{slowStore{}},
				Thresholds: global, ThresholdsGiven: tc.given})
			if err != nil {
				t.Fatal(err)
			}
			n := mustNode(t, snap, filepath.Base(store)+"/boss")
			if n.Thresholds == nil || n.Thresholds.Stale != tc.wantStale || n.Thresholds.Beat != 10*time.Minute {
				t.Fatalf("thresholds %+v, want stale %s and the source's beat", n.Thresholds, tc.wantStale)
			}
			if n.State != tc.wantState || !n.HasFlag(tc.wantFlag) || n.HasFlag(tc.wantNoFlag) {
				t.Errorf("%s %v (%s), want %s with %s, without %s", n.State, n.Flags, n.Reason, tc.wantState, tc.wantFlag, tc.wantNoFlag)
			}
			if lead := mustNode(t, snap, filepath.Base(native)+"/lead"); lead.Thresholds != nil {
				t.Errorf("native lead has thresholds %+v, want the global ones (nil)", lead.Thresholds)
			}
		})
	}
}

// SPEC §10: the live engine re-classifies a node just past its own
// edges: a source's beat of 10 minutes is due then, not at the global 30 s.
func TestNextDueIsTheNodesOwnEdge(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	own := slowStore{}.Thresholds()
	n := &model.Node{ID: "boss", BeatMtime: now.Add(-time.Minute), Thresholds: &own}
	got := nextDue(n, now, model.DefaultThresholds())
	if want := n.BeatMtime.Add(own.Beat + time.Nanosecond); !got.Equal(want) {
		t.Errorf("next due %s, want %s (one source beat past the mtime)", got.Sub(now), want.Sub(now))
	}
}

// The watcher judges a source's node by the same thresholds as a scan.
func TestWatcherGivesSourceNodesTheirThresholds(t *testing.T) {
	store := newRecordStore(t)
	quiet := selfRecord("boss", "", "running")
	quiet.Beat -= 20 * 60
	writeRecords(t, store, []record{quiet})
	w, err := NewWatcher(Options{Roots: []string{store}, Sources: []sources.Source{slowStore{}}},
		WatchOptions{FallbackPoll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	n := mustNode(t, w.Snapshot(), "boss")
	if n.Thresholds == nil || n.Thresholds.Stale != time.Hour || !n.HasFlag(model.FlagQuiet) || n.HasFlag(model.FlagStalled) {
		t.Errorf("thresholds %+v, flags %v (%s): want the source's stale, quiet", n.Thresholds, n.Flags, n.Reason)
	}
}

// SPEC §8 memory: a source's thresholds are made once per watcher, and a
// renewed session's nodes share them: a renewal allocates none (a fleet's
// transition renews every session).
func TestRenewedSessionsShareTheirSourcesThresholds(t *testing.T) {
	store := newRecordStore(t)
	writeRecords(t, store, []record{selfRecord("boss", "", "running")})
	w, err := NewWatcher(Options{Roots: []string{store}, Sources: []sources.Source{slowStore{}}},
		WatchOptions{Tick: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	first := mustNode(t, w.Snapshot(), "boss").Thresholds
	if first == nil {
		t.Fatal("boss has no thresholds of its source")
	}
	runWatcher(t, w)
	writeRecords(t, store, []record{selfRecord("boss", "", "paused")})
	await(t, w, "boss paused", func(s *model.Snapshot) bool {
		n := s.Node("boss")
		return n != nil && n.HasFlag(model.FlagPaused)
	})
	if got := mustNode(t, w.Snapshot(), "boss").Thresholds; got != first {
		t.Errorf("the renewed boss has thresholds %p (%+v), the first snapshot's were %p: made again per renewal", got, got, first)
	}
}
