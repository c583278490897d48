package ui

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
)

// TestUpdateLaysOutAFleetAsAWholeLayout: a fleet's forest (a few host rows,
// each over many sessions) whose updates renew a host row while sharing
// most of its sessions, as remote.Fleet publishes them: a session's node
// reclassified, a session added or removed, several hosts at once, a host
// renewed with nothing changed; under random filters, sorts, folds and a
// followed node. After each, the rows (the host rows' roll-ups with them),
// the cursor and the summary are exactly those made from scratch.
func TestUpdateLaysOutAFleetAsAWholeLayout(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			g := &forestGen{rng: rng}
			snap := &model.Snapshot{GeneratedAt: clock12, Roots: []string{"/srv"}, Thresholds: model.DefaultThresholds()}
			for h := range 4 {
				host := &model.Node{ID: fmt.Sprintf("h%d", h), Action: model.ActionNone}
				for range 30 {
					s := g.session()
					s.Parent, s.ParentID = host, host.ID
					host.Children = append(host.Children, s)
				}
				slices.SortFunc(host.Children, func(a, b *model.Node) int { return strings.Compare(a.ID, b.ID) })
				snap.Sessions = append(snap.Sessions, host)
			}
			snap.ByID = indexForest(snap.Sessions)
			m := newTestModel(t, 120, 30, Options{Initial: snap})
			for step := range 300 {
				what := ""
				if rng.IntN(3) == 0 {
					what = g.changeView(m) + ", then "
				}
				var did string
				snap, did = g.changeFleet(snap)
				m.Update(updateMsg{update: model.Update{Snapshot: snap}})
				checkLayout(t, m, fmt.Sprintf("step %d (%s%s)", step, what, did))
				if t.Failed() {
					return
				}
			}
		})
	}
}

// changeFleet renews one host row or several, each sharing the sessions
// the change does not touch.
func (g *forestGen) changeFleet(snap *model.Snapshot) (*model.Snapshot, string) {
	next := *snap
	next.Sessions = slices.Clone(snap.Sessions)
	var did []string
	renewals := 1 + g.rng.IntN(2)
	if g.rng.IntN(4) == 0 {
		renewals = 2 * len(next.Sessions) // every host, as a fleet churning is
	}
	for r := range renewals {
		i := g.rng.IntN(len(next.Sessions))
		if renewals > 2 {
			i = r % len(next.Sessions)
		}
		old := next.Sessions[i]
		host := *old
		host.Children = slices.Clone(old.Children)
		switch k := g.rng.IntN(6); {
		case k < 3 && len(host.Children) > 0:
			j := g.rng.IntN(len(host.Children))
			s := copySubtree(host.Children[j], &host)
			var all []*model.Node
			s.Walk(func(n *model.Node) { all = append(all, n) })
			n := all[g.rng.IntN(len(all))]
			g.classify(n)
			host.Children[j] = s
			did = append(did, "reclassified "+n.ID)
		case k == 3:
			s := g.session()
			s.Parent, s.ParentID = &host, host.ID
			host.Children = append(host.Children, s)
			slices.SortFunc(host.Children, func(a, b *model.Node) int { return strings.Compare(a.ID, b.ID) })
			did = append(did, "added session "+s.ID)
		case k == 4 && len(host.Children) > 1:
			j := g.rng.IntN(len(host.Children))
			did = append(did, "removed session "+host.Children[j].ID)
			host.Children = slices.Delete(host.Children, j, j+1)
		default:
			did = append(did, "renewed "+host.ID+" unchanged")
		}
		next.Sessions[i] = &host
	}
	next.ByID = indexForest(next.Sessions)
	return &next, strings.Join(did, ", ")
}

// fleetForest is hosts host rows over sessions sessions of per nodes each.
func fleetForest(hosts, sessions, per int) *model.Snapshot {
	snap := &model.Snapshot{GeneratedAt: clock12, Roots: []string{"/srv"}, Thresholds: model.DefaultThresholds()}
	for h := range hosts {
		host := &model.Node{ID: fmt.Sprintf("h%02d", h), Action: model.ActionNone}
		for s := range sessions {
			sess := &model.Node{ID: fmt.Sprintf("%s/s%05d", host.ID, s), Parent: host, ParentID: host.ID,
				State: model.StateRunning, Action: model.ActionNone}
			for w := range per - 1 {
				sess.Children = append(sess.Children, &model.Node{ID: fmt.Sprintf("%s/w%02d", sess.ID, w), Parent: sess,
					ParentID: sess.ID, State: model.StateRunning, Action: model.ActionNone})
			}
			host.Children = append(host.Children, sess)
		}
		snap.Sessions = append(snap.Sessions, host)
	}
	snap.ByID = indexForest(snap.Sessions)
	return snap
}

// renewHost is snap with host h's row renewed over the same sessions but
// session s, copied with its first worker's state flipped.
func renewHost(snap *model.Snapshot, h, s int) *model.Snapshot {
	next := *snap
	next.Sessions = slices.Clone(snap.Sessions)
	host := *snap.Sessions[h]
	host.Children = slices.Clone(host.Children)
	sess := copySubtree(host.Children[s], &host)
	if w := sess.Children[0]; w.State == model.StateRunning {
		w.State = model.StateFinished
	} else {
		w.State = model.StateRunning
	}
	host.Children[s] = sess
	next.Sessions[h] = &host
	return &next
}

// BenchmarkFleetHostRenewal10k: the ui's share of one host's change in a
// fleet view of 4 hosts × 10,000 nodes (remote.Fleet renews the host's row
// and one of its sessions, shares the rest): the update, without the
// frame.
func BenchmarkFleetHostRenewal10k(b *testing.B) {
	snap := fleetForest(4, 1000, 10)
	m := newTestModel(b, 160, 50, Options{Initial: snap})
	k := 0
	for b.Loop() {
		k++
		snap = renewHost(snap, k%4, k%1000)
		m.Update(updateMsg{update: model.Update{Snapshot: snap}})
	}
}

// SPEC §8, the fleet view under churn: a host row renewed over sessions it
// shares but one costs the ui that session's rows, not the host's 10,000,
// whether one host is renewed or every host at once (a fleet churning):
// the rows written or copied are counted. A session that grows moves the
// rows after it, which the host's rows are copied for. A layout in place
// holds no second array of rows for the next that moves them.
func TestRenewingASessionOfAHostWritesItsRowsAlone(t *testing.T) {
	grow := func(snap *model.Snapshot, h, s int) *model.Snapshot {
		next := renewHost(snap, h, s)
		sess := next.Sessions[h].Children[s]
		sess.Children = append(sess.Children, &model.Node{ID: sess.ID + "/new", Parent: sess, ParentID: sess.ID,
			State: model.StateRunning, Action: model.ActionNone})
		return next
	}
	const hosts, sessions, per = 4, 1000, 10
	tests := []struct {
		name   string
		change func(snap *model.Snapshot, k int) *model.Snapshot
		most   int // rows written or copied by one update
	}{
		{"one session of one host", func(snap *model.Snapshot, k int) *model.Snapshot {
			return renewHost(snap, 2, (7*k)%sessions)
		}, 1 + per},
		{"one session of every host at once", func(snap *model.Snapshot, k int) *model.Snapshot {
			for h := range hosts {
				snap = renewHost(snap, h, (7*k+h)%sessions)
			}
			return snap
		}, hosts * (1 + per)},
		{"a session that grows", func(snap *model.Snapshot, k int) *model.Snapshot {
			return grow(snap, 1, (7*k)%sessions)
		}, hosts*sessions*per + 5*hosts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := fleetForest(hosts, sessions, per)
			m := newTestModel(t, 160, 50, Options{Initial: snap})
			// A layout that moved rows first: it keeps an array for the next.
			snap = grow(snap, 0, sessions-1)
			snap.ByID = indexForest(snap.Sessions)
			m.Update(updateMsg{update: model.Update{Snapshot: snap}})
			for k := range 5 {
				snap = tt.change(snap, k)
				snap.ByID = indexForest(snap.Sessions)
				before := m.flat.nested.written
				m.Update(updateMsg{update: model.Update{Snapshot: snap}})
				checkLayout(t, m, fmt.Sprintf("update %d", k))
				if got := m.flat.nested.written - before; got > tt.most {
					t.Errorf("update %d wrote or copied %d rows, want at most %d", k, got, tt.most)
				}
				if inPlace := tt.most < hosts*sessions; inPlace && m.flat.spare != nil {
					t.Errorf("update %d in place holds a second array of %d rows", k, cap(m.flat.spare))
				}
			}
		})
	}
}

// BenchmarkFleetChurnUpdate is the ui's share of a second of SPEC §8's
// fleet churn, a fifth of it an op: 20 hosts × 1,000 sessions of 10 nodes,
// every host renewed with 20 of its sessions (a node of each flipped),
// the update and its frame. %core is ns/op × 5 as a share of a second.
func BenchmarkFleetChurnUpdate(b *testing.B) {
	const hosts, sessions, renewed = 20, 1000, 20
	snap := fleetForest(hosts, sessions, 10)
	m := newTestModel(b, 120, 40, Options{Initial: snap})
	b.ReportAllocs()
	k := 0
	for b.Loop() {
		b.StopTimer()
		for h := range hosts {
			for range renewed {
				k++
				snap = renewHost(snap, h, (k*7919)%sessions)
			}
		}
		snap.ByID = nil
		snap.IndexSessions()
		b.StartTimer()
		m.Update(updateMsg{update: model.Update{Snapshot: snap}})
		_ = m.View()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)*5/1e7, "%core")
}
