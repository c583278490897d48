package scanner

import (
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

// twinStore is recordStore whose records whose id starts with "twin" its
// reader flags conflict, as chatroom flags two agents recorded with one
// pid: a verdict of the read, not of the tree.
type twinStore struct{ recordStore }

func (s twinStore) Read(path string, now time.Time) sources.Facts {
	facts := s.recordStore.Read(path, now)
	for _, n := range facts.Nodes {
		if len(n.ID) >= 4 && n.ID[:4] == "twin" {
			n.EditRare(func(r *model.Rare) { r.ScanFlags = append(r.ScanFlags, model.FlagConflict) })
		}
	}
	return facts
}

// SPEC §10, docs/sources.md (chatroom: two entries with one pid): a flag
// a source's read sets on its node is shown, in a scan and in every
// snapshot of the live engine, however often the forest is built again.
func TestSourceReadFlagsSurviveTheTree(t *testing.T) {
	store := newRecordStore(t)
	writeRecords(t, store, []record{selfRecord("twin-a", "", "running"), selfRecord("twin-b", "", "running"), selfRecord("solo", "", "running")})
	opts := Options{Roots: []string{store}, Sources: []sources.Source{twinStore{}}}
	conflicted := func(s *model.Snapshot) map[string]bool {
		got := map[string]bool{}
		for _, n := range s.Nodes() {
			got[n.ID] = n.HasFlag(model.FlagConflict)
		}
		return got
	}
	want := map[string]bool{"twin-a": true, "twin-b": true, "solo": false}
	check := func(what string, s *model.Snapshot) {
		t.Helper()
		got := conflicted(s)
		for id, w := range want {
			if got[id] != w {
				t.Errorf("%s: %s conflict = %v, want %v (all: %v)", what, id, got[id], w, got)
			}
		}
	}
	snap, err := Scan(opts)
	if err != nil {
		t.Fatal(err)
	}
	check("scan", snap)

	w, err := NewWatcher(opts, WatchOptions{FallbackPoll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	runWatcher(t, w)
	check("watcher's first snapshot", w.Snapshot())
	// A change of the store builds the forest again from a new read.
	recs := []record{selfRecord("twin-a", "", "running"), selfRecord("twin-b", "", "running"), selfRecord("solo", "", "completed")}
	writeRecords(t, store, recs)
	await(t, w, "solo completed", func(s *model.Snapshot) bool {
		n := s.Node("solo")
		return n != nil && n.State == model.StateFinished
	})
	check("after a change", w.Snapshot())
}
