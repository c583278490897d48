package ui

import (
	"cmp"
	"slices"
	"strings"

	"github.com/dispatchtop/dispatchtop/model"
)

// stateFilter is the `f` cycle of SPEC §6.
type stateFilter int

const (
	filterAll stateFilter = iota
	filterProblems
	filterRunning
	filterDead
	filterFinished
	filterMissing
	filterCount
)

func (f stateFilter) String() string {
	return [...]string{"all", "problems", "running", "dead", "finished", "missing"}[f]
}

func (f stateFilter) match(n *model.Node) bool {
	switch f {
	case filterProblems:
		return isProblem(n)
	case filterRunning:
		return n.State == model.StateRunning
	case filterDead:
		return n.State == model.StateDead
	case filterFinished:
		return n.State == model.StateFinished
	case filterMissing:
		return n.State == model.StateMissing
	}
	return true
}

// row is one line of the tree as flattened for display.
type row struct {
	node      *model.Node
	depth     int  // 0 for a session
	last      bool // the last of its siblings as shown
	parent    int  // row index of the parent, -1 for a session
	hasKids   bool
	collapsed bool
	match     bool // false for an ancestor shown only for context
	// roll is what lies beneath a collapsed row or a session row; nil on
	// other rows and leaves.
	roll *rollup
}

// guide draws the tree guides of rows[i]: built only for rows on screen.
func guide(rows []row, i int) string {
	r := rows[i]
	if r.depth == 0 {
		return ""
	}
	segs := make([]string, r.depth)
	if r.last {
		segs[r.depth-1] = "└─"
	} else {
		segs[r.depth-1] = "├─"
	}
	for d, p := r.depth-2, r.parent; d >= 0 && p >= 0; d, p = d-1, rows[p].parent {
		if rows[p].last {
			segs[d] = "  "
		} else {
			segs[d] = "│ "
		}
	}
	return strings.Join(segs, "")
}

// flatOptions say what the flattened tree shows.
type flatOptions struct {
	collapsed map[string]bool
	query     query // the `/` filter; empty matches everything
	state     stateFilter
	pin       *model.Node   // a followed node: always shown, its ancestors expanded
	pinPath   []*model.Node // pin's ancestors
	sort      sortOrder
}

// sortOrder is the `s` cycle: how siblings (and sessions) are ordered.
type sortOrder int

const (
	sortID sortOrder = iota
	sortSeverity
	sortAge
	sortAction
	sortCount
)

func (o sortOrder) String() string {
	return [...]string{"id", "severity", "age", "action"}[o]
}

// compare orders two siblings; every order falls back to the id, so the
// tree never reorders between two identical snapshots.
func (o sortOrder) compare(a, b *model.Node) int {
	var c int
	switch o {
	case sortSeverity:
		c = cmp.Compare(stateRank(a.State), stateRank(b.State))
		if c == 0 {
			c = cmp.Compare(worstFlagRank(a), worstFlagRank(b))
		}
	case sortAge:
		// The oldest beat first; a node that never beat last.
		switch {
		case a.BeatMtime.IsZero() != b.BeatMtime.IsZero():
			c = 1
			if b.BeatMtime.IsZero() {
				c = -1
			}
		default:
			c = a.BeatMtime.Compare(b.BeatMtime)
		}
	case sortAction:
		c = cmp.Compare(actionRank(a.Action), actionRank(b.Action))
	}
	if c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

func worstFlagRank(n *model.Node) int {
	r := len(flagOrder) + 1
	for _, f := range n.Flags {
		r = min(r, flagRank(f))
	}
	return r
}

// sorted is nodes in order o. Nodes already in order (the usual case for
// the id order) are returned as they are, without a copy.
func (o sortOrder) sorted(nodes []*model.Node) []*model.Node {
	if len(nodes) < 2 || slices.IsSortedFunc(nodes, o.compare) {
		return nodes
	}
	out := slices.Clone(nodes)
	slices.SortStableFunc(out, o.compare)
	return out
}

func (o flatOptions) filtering() bool { return len(o.query) > 0 || o.state != filterAll }

func (o flatOptions) matches(n *model.Node) bool {
	if !o.state.match(n) {
		return false
	}
	return o.query.match(n)
}

// containsFold reports whether s contains the lower-cased needle, ignoring case.
func containsFold(s, lowerNeedle string) bool {
	if len(s) < len(lowerNeedle) {
		return false
	}
	return strings.Contains(strings.ToLower(s), lowerNeedle)
}

// flatten lays the forest out as rows in stable id order. With a filter, a
// node is shown when it matches or a descendant does (ancestors give
// context); collapsed nodes hide their children, except on the way to a
// pinned node.
func flatten(sessions []*model.Node, o flatOptions) []row {
	return flattenInto(make([]row, 0, 64), sessions, o)
}

// flattenInto is flatten appending to dst[:0]: the model's rows are laid
// out again in the array they had, so an update of a 10,000-node tree does
// not allocate them all anew.
func flattenInto(dst []row, sessions []*model.Node, o flatOptions) []row {
	f := newFlattener(o)
	rows := dst[:0]
	for _, s := range o.sort.sorted(sessions) {
		rows = f.top(rows, s)
	}
	return rows
}

// flattener lays out the forest one top-level node at a time: the rows of
// a top-level node depend on its subtree and the options alone, so the
// model can keep those of a subtree an update did not renew (reflowUpdate).
type flattener struct {
	o flatOptions
	// keep holds, while filtering, the nodes of the top-level nodes laid
	// out so far that are shown: those that match, or have a
	// descendant that does (ancestors give context).
	keep map[*model.Node]bool
	// onPath holds the ancestors of the pinned node, which stay open.
	onPath map[string]bool
	rows   []row
}

// ancestorsOf are n's ancestors in snap, its parent first: each once, as
// the ids of a hostile host's nodes may name each other as parents.
func ancestorsOf(snap *model.Snapshot, n *model.Node) []*model.Node {
	var out []*model.Node
	for p := snap.ParentOf(n); p != nil && !slices.Contains(out, p) && p != n; p = snap.ParentOf(p) {
		out = append(out, p)
	}
	return out
}

func newFlattener(o flatOptions) *flattener {
	f := &flattener{o: o}
	if o.filtering() {
		f.keep = map[*model.Node]bool{}
	}
	if o.pin != nil {
		f.onPath = map[string]bool{}
		for _, p := range o.pinPath {
			f.onPath[p.ID] = true
		}
	}
	return f
}

// top appends the rows of the top-level node s to rows; parent indices
// are indices of rows.
func (f *flattener) top(rows []row, s *model.Node) []row {
	if !f.shown(s) {
		return rows
	}
	return f.lay(rows, s)
}

// shown says whether the top-level node s has rows: always, unless a
// filter hides it and all beneath it.
func (f *flattener) shown(s *model.Node) bool {
	// keep grows over the tops of one layout (a node is under one top):
	// clearing it per top would cost its size a top.
	return f.keep == nil || f.mark(s)
}

// lay appends the rows of s, a shown top-level node, to rows.
func (f *flattener) lay(rows []row, s *model.Node) []row {
	f.rows = rows
	f.walk(s, 0, -1, true)
	rows, f.rows = f.rows, nil
	return rows
}

// count is the number of rows lay makes of n's subtree, n shown: the
// order of the children does not change it, so none is sorted.
func (f *flattener) count(n *model.Node) int {
	if f.o.collapsed[n.ID] && !f.onPath[n.ID] {
		return 1
	}
	rows := 1
	for _, c := range n.Children {
		if f.keep == nil || f.keep[c] {
			rows += f.count(c)
		}
	}
	return rows
}

// mark puts n in keep when it or a descendant is shown.
func (f *flattener) mark(n *model.Node) bool {
	any := f.o.matches(n) || n == f.o.pin
	for _, c := range n.Children {
		if f.mark(c) {
			any = true
		}
	}
	if any {
		f.keep[n] = true
	}
	return any
}

func (f *flattener) walk(n *model.Node, depth, parent int, last bool) {
	o := f.o
	kids := o.sort.sorted(n.Children)
	if f.keep != nil {
		visible := kids[:0:0]
		for _, c := range kids {
			if f.keep[c] {
				visible = append(visible, c)
			}
		}
		kids = visible
	}
	collapsed := o.collapsed[n.ID] && !f.onPath[n.ID]
	self := len(f.rows)
	r := row{
		node: n, depth: depth, last: last, parent: parent,
		hasKids: len(kids) > 0, collapsed: collapsed && len(kids) > 0,
		match: f.keep == nil || o.matches(n),
	}
	if len(n.Children) > 0 && (depth == 0 || r.collapsed) {
		// Everything beneath counts, filtered or not: a filter must not
		// hide that a worker under this row is dead.
		roll := rollupOf(n)
		r.roll = &roll
	}
	f.rows = append(f.rows, r)
	if collapsed {
		return
	}
	for i, c := range kids {
		f.walk(c, depth+1, self, i == len(kids)-1)
	}
}
