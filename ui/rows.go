package ui

import (
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
}

// nameWidth is the cells the row's name cell needs: guides, marker, glyph,
// space, label. Runes approximate cells; only the widest row matters, so
// nothing is built here (flatten runs over every node).
func (r row) nameWidth() int {
	return 2*r.depth + 3 + labelWidth(r.node)
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

// stateWidth is len(stateWords(n)) without building the string.
func stateWidth(n *model.Node) int {
	w := len(n.State)
	for _, f := range n.Flags {
		w += 1 + len(f)
	}
	return w
}

// flatOptions say what the flattened tree shows.
type flatOptions struct {
	collapsed map[string]bool
	query     query // the `/` filter; empty matches everything
	state     stateFilter
	pin       *model.Node // a followed node: always shown, its ancestors expanded
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
	var keep map[*model.Node]bool
	if o.filtering() {
		keep = map[*model.Node]bool{}
		var mark func(n *model.Node) bool
		mark = func(n *model.Node) bool {
			any := o.matches(n) || n == o.pin
			for _, c := range n.Children {
				if mark(c) {
					any = true
				}
			}
			if any {
				keep[n] = true
			}
			return any
		}
		for _, s := range sessions {
			mark(s)
		}
	}
	onPath := map[string]bool{} // ancestors of the pinned node stay open
	if o.pin != nil {
		for p := o.pin.Parent; p != nil; p = p.Parent {
			onPath[p.ID] = true
		}
	}
	visible := func(n *model.Node) bool { return keep == nil || keep[n] }
	rows := make([]row, 0, 64)
	var walk func(n *model.Node, depth, parent int, last bool)
	walk = func(n *model.Node, depth, parent int, last bool) {
		kids := n.Children
		if keep != nil {
			kids = kids[:0:0]
			for _, c := range n.Children {
				if visible(c) {
					kids = append(kids, c)
				}
			}
		}
		collapsed := o.collapsed[n.ID] && !onPath[n.ID]
		self := len(rows)
		rows = append(rows, row{
			node: n, depth: depth, last: last, parent: parent,
			hasKids: len(kids) > 0, collapsed: collapsed && len(kids) > 0,
			match: keep == nil || o.matches(n),
		})
		if collapsed {
			return
		}
		for i, c := range kids {
			walk(c, depth+1, self, i == len(kids)-1)
		}
	}
	for _, s := range sessions {
		if visible(s) {
			walk(s, 0, -1, true)
		}
	}
	return rows
}
