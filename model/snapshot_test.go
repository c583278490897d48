package model

import (
	"reflect"
	"testing"
)

// TestTallyIndexesEveryStateAndFlag: Tally's fixed arrays have a slot for
// every state and flag, in the order of States and Flags, so none is lost
// or counted as another when one is added to the lists.
func TestTallyIndexesEveryStateAndFlag(t *testing.T) {
	if len(States) != stateCount || len(Flags) != flagCount {
		t.Fatalf("stateCount, flagCount = %d, %d; States, Flags hold %d, %d", stateCount, flagCount, len(States), len(Flags))
	}
	for i, s := range States {
		if got := stateIndex(s); got != i {
			t.Errorf("stateIndex(%q) = %d, want %d", s, got, i)
		}
	}
	for i, f := range Flags {
		if got := flagIndex(f); got != i {
			t.Errorf("flagIndex(%q) = %d, want %d", f, got, i)
		}
	}
}

// TestSummarizeCountsStatesAndFlags: Summarize counts every node, each
// state and each flag (one outside Flags too), and the tallies of the
// sessions merged give the same summary as the whole forest.
func TestSummarizeCountsStatesAndFlags(t *testing.T) {
	snap := build(
		tnode{id: "A", state: StateRunning, flags: []Flag{FlagStalled, FlagKillCandidate}, kids: []tnode{
			{id: "A/1", state: StateDead},
			{id: "A/2", state: StateMissing, flags: []Flag{FlagOrphaned, "novel"}},
			{id: "A/3"}, // a host row: no state
		}},
		tnode{id: "B", state: StateFinished, flags: []Flag{FlagStalled, FlagBlocked}},
	)
	snap.Problems = []Problem{{Path: "/x", Error: "unreadable"}}
	want := Summary{Nodes: 5, Sessions: 2, Running: 1, Dead: 1, Finished: 1, Missing: 1,
		Stalled: 2, KillCandidate: 1, Blocked: 1, Orphaned: 1, Problems: 1,
		ByFlag: map[Flag]int{FlagStalled: 2, FlagKillCandidate: 1, FlagBlocked: 1, FlagOrphaned: 1, "novel": 1}}
	check := func(name string, got Summary) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %+v, want %+v", name, got, want)
		}
	}
	check("Summarize", snap.Summarize())
	var whole Tally
	for _, s := range snap.Sessions {
		var part Tally
		part.AddTree(s)
		whole.Merge(part)
	}
	check("merged tallies", whole.Summary(len(snap.Sessions), len(snap.Problems)))
}
