package ui

import (
	"reflect"
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §8, the fleet view under churn: a summary after an update counts
// the sessions the update renewed beneath each host renewed, not the
// hosts' every node, even when every host was renewed (a fleet churning
// renews all its host rows at each update); and it is the count a whole
// summary makes.
func TestSummaryOfAFleetCountsTheSessionsRenewedBeneathItsHosts(t *testing.T) {
	const hosts, sessions, per = 4, 1000, 10
	for _, tc := range []struct {
		name  string
		renew func(snap *model.Snapshot, k int) *model.Snapshot
		most  int // nodes counted, taken away or added
	}{
		{"one session of one host", func(snap *model.Snapshot, k int) *model.Snapshot {
			return renewHost(snap, 1, (7*k)%sessions)
		}, 2 * (1 + per)},
		{"one session of every host", func(snap *model.Snapshot, k int) *model.Snapshot {
			for h := range hosts {
				snap = renewHost(snap, h, (7*k+h)%sessions)
			}
			return snap
		}, hosts * 2 * (1 + per)},
		{"three sessions of every host", func(snap *model.Snapshot, k int) *model.Snapshot {
			for h := range hosts {
				for s := range 3 {
					snap = renewHost(snap, h, (7*k+h+100*s)%sessions)
				}
			}
			return snap
		}, hosts * (2 + 3*2*per)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := fleetForest(hosts, sessions, per)
			var c tallyCache
			c.summarize(snap.Sessions, 0)
			for k := range 5 {
				snap = tc.renew(snap, k)
				before := c.counted
				got := c.summarize(snap.Sessions, 0)
				if n := c.counted - before; n > tc.most {
					t.Errorf("update %d counted %d nodes, want at most %d", k, n, tc.most)
				}
				if want := snap.Summarize(); !reflect.DeepEqual(got, want) {
					t.Fatalf("update %d: summary %+v, a whole count gives %+v", k, got, want)
				}
			}
		})
	}
}
