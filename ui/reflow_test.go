package ui

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// TestUpdateLaysOutTheRowsAWholeLayoutWould: after each of a long run of
// random updates (a node's state, flags, action or beat changed, a node
// added, removed or moved to another parent, a session added or removed),
// each renewing the sessions it touches and sharing the rest as the
// watcher does, under random filters, sorts, folds and a followed node,
// the rows, the cursor and the summary are exactly those of a layout and
// a count made from scratch.
func TestUpdateLaysOutTheRowsAWholeLayoutWould(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			g := &forestGen{rng: rng}
			snap := g.forest(12)
			m := newTestModel(t, 120, 30, Options{Initial: snap})
			for step := range 400 {
				what := g.changeView(m)
				snap, what = g.change(snap), what+", then "+g.last
				m.Update(updateMsg{update: model.Update{Snapshot: snap}})
				checkLayout(t, m, fmt.Sprintf("step %d (%s)", step, what))
				if t.Failed() {
					return
				}
			}
		})
	}
}

// checkLayout compares the model's rows, cursor and summary with those
// made from scratch.
func checkLayout(t *testing.T, m *Model, at string) {
	t.Helper()
	o := flatOptions{collapsed: m.collapsed, query: m.query, state: m.state, sort: m.sort}
	if m.following != "" {
		o.pin = m.snap.Node(m.following)
		if o.pin != nil {
			o.pinPath = ancestorsOf(m.snap, o.pin)
		}
	}
	want := flatten(m.snap.Sessions, o)
	if len(m.rows) != len(want) {
		t.Fatalf("%s: %d rows, a whole layout has %d", at, len(m.rows), len(want))
	}
	for i := range want {
		if got := m.rows[i]; !sameRow(got, want[i]) {
			t.Fatalf("%s: row %d is %s, a whole layout has %s", at, i, rowString(got), rowString(want[i]))
		}
	}
	if len(m.rows) > 0 && (m.cursor < 0 || m.cursor >= len(m.rows) || m.rows[m.cursor].node.ID != m.selected) {
		t.Fatalf("%s: the cursor (row %d) is not on the selected node %q", at, m.cursor, m.selected)
	}
	for _, r := range m.rows[len(m.rows):cap(m.rows)] {
		if r.node != nil {
			t.Fatalf("%s: a row past the end keeps node %s alive", at, r.node.ID)
		}
	}
	for _, r := range m.flat.spare[:cap(m.flat.spare)] {
		if r.node != nil {
			t.Fatalf("%s: the spare rows keep node %s alive", at, r.node.ID)
		}
	}
	for i, r := range m.rows {
		if j, ok := m.rowOf(r.node.ID); !ok || j != i {
			t.Fatalf("%s: rowOf(%q) = %d, %v; the node is on row %d", at, r.node.ID, j, ok, i)
		}
	}
	if want := m.snap.Summarize(); !reflect.DeepEqual(m.sum, want) {
		t.Fatalf("%s: summary %+v, a count from scratch gives %+v", at, m.sum, want)
	}
}

func sameRow(a, b row) bool {
	if (a.roll == nil) != (b.roll == nil) || a.roll != nil && *a.roll != *b.roll {
		return false
	}
	a.roll, b.roll = nil, nil
	return a == b
}

func rowString(r row) string {
	roll := "-"
	if r.roll != nil {
		roll = r.roll.String()
	}
	return fmt.Sprintf("{%s depth %d last %v parent %d kids %v collapsed %v match %v roll %s}",
		r.node.ID, r.depth, r.last, r.parent, r.hasKids, r.collapsed, r.match, roll)
}

// forestGen makes random forests and random changes of them.
type forestGen struct {
	rng  *rand.Rand
	ids  int    // ids handed out
	last string // what the last change did
}

var (
	genStates  = []model.State{model.StateRunning, model.StateDead, model.StateFinished, model.StateMissing}
	genFlags   = []model.Flag{model.FlagStalled, model.FlagKillCandidate, model.FlagQuiet, model.FlagOrphaned, model.FlagBlocked}
	genActions = []model.Action{model.ActionNone, model.ActionKill, model.ActionResume, model.ActionWait, model.ActionAnswer}
)

func (g *forestGen) classify(n *model.Node) {
	n.State = genStates[g.rng.IntN(len(genStates))]
	n.Flags = nil
	for _, f := range genFlags {
		if g.rng.IntN(5) == 0 {
			n.Flags = append(n.Flags, f)
		}
	}
	n.Action = genActions[g.rng.IntN(len(genActions))]
	n.BeatMtime = clock12.Add(-time.Duration(g.rng.IntN(600)) * time.Second)
	if g.rng.IntN(8) == 0 {
		n.BeatMtime = time.Time{}
	}
}

func (g *forestGen) node(id string, parent *model.Node) *model.Node {
	n := &model.Node{ID: id, Parent: parent}
	if parent != nil {
		n.ParentID = parent.ID
		parent.Children = append(parent.Children, n)
		slices.SortFunc(parent.Children, func(a, b *model.Node) int { return strings.Compare(a.ID, b.ID) })
	}
	g.classify(n)
	return n
}

// session is a new session of up to a dozen nodes.
func (g *forestGen) session() *model.Node {
	g.ids++
	root := g.node(fmt.Sprintf("s%04d", g.ids), nil)
	nodes := []*model.Node{root}
	for range g.rng.IntN(12) {
		p := nodes[g.rng.IntN(len(nodes))]
		g.ids++
		nodes = append(nodes, g.node(fmt.Sprintf("%s/%d", p.ID, g.ids), p))
	}
	return root
}

func (g *forestGen) forest(sessions int) *model.Snapshot {
	snap := &model.Snapshot{GeneratedAt: clock12, Roots: []string{"/srv"}, Thresholds: model.DefaultThresholds()}
	for range sessions {
		snap.Sessions = append(snap.Sessions, g.session())
	}
	snap.ByID = indexForest(snap.Sessions)
	return snap
}

// change is snap after one random change, sharing every session it does
// not touch.
func (g *forestGen) change(snap *model.Snapshot) *model.Snapshot {
	next := *snap
	next.Sessions = slices.Clone(snap.Sessions)
	renew := func() (int, *model.Node) {
		i := g.rng.IntN(len(next.Sessions))
		next.Sessions[i] = copySubtree(next.Sessions[i], nil)
		return i, next.Sessions[i]
	}
	pick := func(root *model.Node) *model.Node {
		var all []*model.Node
		root.Walk(func(n *model.Node) { all = append(all, n) })
		return all[g.rng.IntN(len(all))]
	}
	detach := func(n *model.Node) {
		p := n.Parent
		p.Children = slices.DeleteFunc(slices.Clone(p.Children), func(c *model.Node) bool { return c == n })
	}
	switch k := g.rng.IntN(10); {
	case k < 3 || len(next.Sessions) < 2:
		_, s := renew()
		n := pick(s)
		g.classify(n)
		g.last = "reclassified " + n.ID
	case k == 3:
		_, s := renew()
		p := pick(s)
		g.ids++
		g.last = "added " + g.node(fmt.Sprintf("%s/%d", p.ID, g.ids), p).ID
	case k == 4:
		_, s := renew()
		if n := pick(s); n.Parent != nil {
			detach(n)
			g.last = "removed " + n.ID
		} else {
			g.last = "renewed " + s.ID + " unchanged"
		}
	case k == 5:
		// Moved to a parent in another session: both are renewed.
		i, from := renew()
		j := (i + 1 + g.rng.IntN(len(next.Sessions)-1)) % len(next.Sessions)
		next.Sessions[j] = copySubtree(next.Sessions[j], nil)
		n, to := pick(from), pick(next.Sessions[j])
		if n.Parent == nil {
			g.last = "renewed " + from.ID + " unchanged"
			break
		}
		detach(n)
		n.Parent, n.ParentID = to, to.ID
		to.Children = append(slices.Clone(to.Children), n)
		slices.SortFunc(to.Children, func(a, b *model.Node) int { return strings.Compare(a.ID, b.ID) })
		g.last = "moved " + n.ID + " under " + to.ID
	case k == 6:
		s := g.session()
		next.Sessions = append(next.Sessions, s)
		g.last = "added session " + s.ID
	case k == 7 && len(next.Sessions) > 4:
		i := g.rng.IntN(len(next.Sessions))
		g.last = "removed session " + next.Sessions[i].ID
		next.Sessions = slices.Delete(next.Sessions, i, i+1)
	case k == 8:
		// Several sessions touched in one update, as a burst merges them.
		for range 3 {
			_, s := renew()
			n := pick(s)
			n.BeatMtime = n.BeatMtime.Add(time.Duration(g.rng.IntN(120)) * time.Second)
		}
		g.last = "touched three sessions"
	default:
		g.last = "shared every session"
	}
	next.ByID = indexForest(next.Sessions)
	return &next
}

// changeView changes, now and then, what the tree shows, as the keys do.
func (g *forestGen) changeView(m *Model) string {
	pickID := func() string {
		ids := make([]string, 0, len(m.snap.ByID))
		for id := range m.snap.ByID {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return ids[g.rng.IntN(len(ids))]
	}
	switch g.rng.IntN(24) {
	case 0:
		m.sort = sortOrder(g.rng.IntN(int(sortCount)))
		m.reflow()
		return "sort " + m.sort.String()
	case 1:
		m.state = stateFilter(g.rng.IntN(int(filterCount)))
		m.reflow()
		return "filter " + m.state.String()
	case 2:
		q := []string{"", "", "s00", "/1", "state:dead", "flag:stalled", "run"}[g.rng.IntN(7)]
		m.setFilter(q)
		return "query " + q
	case 3, 4:
		id := pickID()
		m.collapsed[id] = !m.collapsed[id]
		m.reflow()
		return "fold " + id
	case 5:
		if g.rng.IntN(2) == 0 {
			m.following = ""
			m.reflow()
			return "follow nothing"
		}
		m.following = pickID()
		m.reflow()
		return "follow " + m.following
	case 6:
		if len(m.rows) > 0 {
			m.moveTo(g.rng.IntN(len(m.rows)))
		}
		return "move"
	}
	return "same view"
}
