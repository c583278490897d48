package model

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

var mergeNow = time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)

// transitions makes n transitions of ids prefix0, prefix1, ...
func transitions(prefix string, n int) []Transition {
	out := make([]Transition, n)
	for i := range out {
		out[i] = Transition{Time: mergeNow, ID: fmt.Sprintf("%s%d", prefix, i), From: StateRunning, To: StateDead}
	}
	return out
}

func transitionIDs(tr []Transition) []string {
	out := make([]string, len(tr))
	for i, t := range tr {
		out[i] = t.ID
	}
	return out
}

// The delivery rules of an update stream (Update's doc): the newest
// snapshot, every transition in order up to the cap, the newest hosts.
func TestMerge(t *testing.T) {
	snapA, snapB := &Snapshot{Roots: []string{"a"}}, &Snapshot{Roots: []string{"b"}}
	hostsUp := []Host{{Name: "host-a", Reachable: true}, {Name: "host-b", Reachable: true}}
	hostsDown := []Host{{Name: "host-a", Reachable: true}, {Name: "host-b", Reachable: false}}
	tests := []struct {
		name         string
		older, newer Update
		wantSnap     *Snapshot
		wantIDs      []string // nil: check the count only
		wantCount    int
		wantHosts    []Host
	}{
		{name: "the newer snapshot and every transition, in order",
			older: Update{Snapshot: snapA, Transitions: transitions("a", 2)}, newer: Update{Snapshot: snapB, Transitions: transitions("b", 2)},
			wantSnap: snapB, wantIDs: []string{"a0", "a1", "b0", "b1"}},
		{name: "a transition-only update keeps the unread snapshot",
			older: Update{Snapshot: snapA}, newer: Update{Transitions: transitions("x", 1)},
			wantSnap: snapA, wantIDs: []string{"x0"}},
		{name: "an update without transitions keeps the unread ones",
			older: Update{Snapshot: snapA, Transitions: transitions("a", 3)}, newer: Update{Snapshot: snapB},
			wantSnap: snapB, wantIDs: []string{"a0", "a1", "a2"}},
		{name: "an update without hosts keeps the unread hosts",
			older: Update{Hosts: hostsDown}, newer: Update{Snapshot: snapB},
			wantSnap: snapB, wantHosts: hostsDown},
		{name: "the newer hosts replace the unread",
			older: Update{Snapshot: snapA, Hosts: hostsDown}, newer: Update{Snapshot: snapB, Hosts: hostsUp},
			wantSnap: snapB, wantHosts: hostsUp},
		{name: "nothing to merge", wantSnap: nil},
		{name: "a slow consumer keeps the newest MaxPendingTransitions",
			older: Update{Transitions: transitions("a", MaxPendingTransitions-2)}, newer: Update{Transitions: transitions("b", 5)},
			wantCount: MaxPendingTransitions},
		{name: "a newer update alone over the cap keeps its newest",
			older: Update{Transitions: transitions("a", 3)}, newer: Update{Transitions: transitions("b", MaxPendingTransitions+1)},
			wantCount: MaxPendingTransitions},
		{name: "an unread update over the cap is cut too",
			older: Update{Transitions: transitions("a", MaxPendingTransitions+4)}, newer: Update{Snapshot: snapB},
			wantSnap: snapB, wantCount: MaxPendingTransitions},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.older.Merge(tt.newer)
			if got.Snapshot != tt.wantSnap {
				t.Errorf("snapshot %v, want %v", got.Snapshot, tt.wantSnap)
			}
			if tt.wantIDs != nil && !slices.Equal(transitionIDs(got.Transitions), tt.wantIDs) {
				t.Errorf("transitions %v, want %v", transitionIDs(got.Transitions), tt.wantIDs)
			}
			if tt.wantCount > 0 {
				all := append(slices.Clone(tt.older.Transitions), tt.newer.Transitions...)
				want := transitionIDs(all[len(all)-tt.wantCount:])
				if !slices.Equal(transitionIDs(got.Transitions), want) {
					t.Errorf("kept %d transitions (%s..), want the newest %d (%s..)", len(got.Transitions),
						got.Transitions[0].ID, tt.wantCount, want[0])
				}
			}
			if tt.wantHosts != nil && !slices.Equal(got.Hosts, tt.wantHosts) {
				t.Errorf("hosts %+v, want %+v", got.Hosts, tt.wantHosts)
			}
		})
	}
}

// Merge reads both updates and writes neither: the older one's spare
// capacity is not appended into.
func TestMergeChangesNeitherUpdate(t *testing.T) {
	backing := make([]Transition, 1, 8)
	backing[0] = Transition{ID: "old"}
	older := Update{Transitions: backing}
	newer := Update{Transitions: transitions("new", 2)}
	merged := older.Merge(newer)
	if got := transitionIDs(merged.Transitions); !slices.Equal(got, []string{"old", "new0", "new1"}) {
		t.Fatalf("merged %v", got)
	}
	if spare := backing[:2][1]; spare.ID != "" {
		t.Errorf("merge wrote into the older update's array: %+v", spare)
	}
	merged.Transitions[0].ID = "changed"
	if backing[0].ID != "old" || newer.Transitions[0].ID != "new0" {
		t.Error("the merged update shares its transitions with an input it was combined from")
	}
}

// Publish never waits for the consumer: an unread update is merged into
// the next, so the newest snapshot and every transition reach it.
func TestPublishMergesAnUnreadUpdate(t *testing.T) {
	snaps := []*Snapshot{{Roots: []string{"1"}}, {Roots: []string{"2"}}, {Roots: []string{"3"}}}
	out := make(chan Update, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i, s := range snaps {
			Publish(out, Update{Snapshot: s, Transitions: transitions(fmt.Sprint(i, "-"), 1)})
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Publish blocked on a consumer that reads nothing")
	}
	u := <-out
	if u.Snapshot != snaps[2] {
		t.Errorf("delivered snapshot %v, want the newest", u.Snapshot.Roots)
	}
	if got := transitionIDs(u.Transitions); !slices.Equal(got, []string{"0-0", "1-0", "2-0"}) {
		t.Errorf("transitions %v, want every one in order", got)
	}
	select {
	case extra := <-out:
		t.Errorf("a second update is queued: %+v", extra)
	default:
	}
}

// An update read in time is delivered as it was published.
func TestPublishWithNothingUnread(t *testing.T) {
	out := make(chan Update, 1)
	snap := &Snapshot{}
	Publish(out, Update{Snapshot: snap, Transitions: transitions("a", 2)})
	u := <-out
	if u.Snapshot != snap || !slices.Equal(transitionIDs(u.Transitions), []string{"a0", "a1"}) {
		t.Errorf("got %+v", u)
	}
}
