package scanner

// Nodes and forests: whether new facts keep the edges (sameEdges),
// patching facts into a node, and copying the published sessions with the
// facts that changed since, so that classification and the consumer never
// share a node that the engine writes.

import (
	"slices"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// sameEdges reports whether replacing a node's facts a by b leaves every
// edge of the forest as it was.
func sameEdges(a, b *model.Node) bool {
	if a.HasHeartbeat != b.HasHeartbeat || a.Legacy != b.Legacy || a.DeclaredParent() != b.DeclaredParent() ||
		a.HeartbeatPath != b.HeartbeatPath || a.HasRegistry != b.HasRegistry ||
		len(a.RegistryLines()) != len(b.RegistryLines()) || a.HasScanFlag(model.FlagUnreadable) != b.HasScanFlag(model.FlagUnreadable) {
		return false
	}
	// The snapshot's problem list is assembled by BuildForest.
	if (a.Heartbeat == nil) != (b.Heartbeat == nil) || !slices.Equal(a.Problems(), b.Problems()) {
		return false
	}
	// `parent_heartbeat: ""` and no field at all both read as "": only the
	// first is a session lead that no registry adopts.
	if a.Heartbeat != nil && a.Heartbeat.SessionLead() != b.Heartbeat.SessionLead() {
		return false
	}
	al, bl := a.RegistryLines(), b.RegistryLines()
	for i := range al {
		if !sameLine(al[i], bl[i]) {
			return false
		}
	}
	return true
}

// sameLine reports whether two registry lines say the same: their bytes
// when both kept them, else (the watcher keeps none) what they parse to.
func sameLine(a, b model.RegistryLine) bool {
	if a.Torn != b.Torn || a.Err != b.Err || (a.Entry == nil) != (b.Entry == nil) {
		return false
	}
	if a.Raw != nil && b.Raw != nil {
		return string(a.Raw) == string(b.Raw)
	}
	if a.Entry == nil {
		return true
	}
	x, y := *a.Entry, *b.Entry
	if (x.TaskID == nil) != (y.TaskID == nil) || x.TaskID != nil && *x.TaskID != *y.TaskID {
		return false
	}
	x.TaskID, y.TaskID = nil, nil
	return x == y
}

// patchFacts replaces the facts of a node by those of facts (a node as
// ReadNodeDir returns it, or a copy of one), keeping its tree fields and
// tree flags, so parent and children pointers stay valid. Classification
// is left to the caller to reset.
func patchFacts(t, facts *model.Node) {
	tree := *t
	*t = *facts
	t.ID, t.Parent, t.Children, t.ParentID = tree.ID, tree.Parent, tree.Children, tree.ParentID
	t.Entry = tree.Entry
	others, refused := tree.OtherParents(), tree.RefusedChildren()
	flags := treeFlags(tree.ScanFlags(), facts.HasScanFlag(model.FlagUnreadable))
	if len(others) > 0 || len(refused) > 0 || !slices.Equal(flags, t.ScanFlags()) {
		t.EditRare(func(r *model.Rare) { r.OtherParents, r.RefusedChildren, r.ScanFlags = others, refused, flags })
	}
}

// treeFlags are the tree's scan flags of flags (all but unreadable), with
// unreadable when the facts have it; flags itself when that is what it
// holds (no node's flags are written in place).
func treeFlags(flags []model.Flag, unreadable bool) []model.Flag {
	if slices.Contains(flags, model.FlagUnreadable) == unreadable {
		return flags
	}
	var out []model.Flag
	if unreadable {
		out = append(out, model.FlagUnreadable)
	}
	for _, f := range flags {
		if f != model.FlagUnreadable {
			out = append(out, f)
		}
	}
	return out
}

// resetClassification clears what classification and the publish set on a
// node (liveness's fields, the owner, a source's thresholds), so that a
// node copied from a published snapshot is classified from its facts alone.
func resetClassification(n *model.Node) {
	n.State, n.Flags, n.Reason, n.ReasonAge = "", nil, "", model.ReasonAge{}
	n.Action, n.Process = "", model.ProcessNotProbed
	n.SetOrphanedSince(time.Time{})
	n.Owner, n.Thresholds = nil, nil
}

// renewSession copies a session of the previous snapshot into fresh nodes,
// unclassified: each node takes the facts its record holds now (those that
// changed since, patched in; see liveNode) and the record the copy, so that classification and the consumer never share a
// node that the engine writes. The nodes' slices are shared: neither side
// mutates them in place.
func (w *Watcher) renewSession(s *model.Node) *model.Node {
	count, kids := 0, 0
	s.Walk(func(n *model.Node) { count++; kids += len(n.Children) })
	c := &cloner{w: w, arr: make([]model.Node, count), kids: make([]*model.Node, kids)}
	return c.clone(s, nil)
}

// cloner hands out nodes and child slices from two preallocated arrays.
type cloner struct {
	w    *Watcher
	arr  []model.Node
	kids []*model.Node
}

func (c *cloner) clone(src, parent *model.Node) *model.Node {
	n := &c.arr[0]
	c.arr = c.arr[1:]
	*n = *src
	ln := c.w.liveNodeOf(src)
	if ln != nil && ln.own {
		patchFacts(n, ln.n)
	}
	if isStoreNode(src) {
		if facts := c.w.stores.patch[src.HeartbeatPath]; facts != nil {
			patchFacts(n, facts)
		}
	}
	resetClassification(n)
	n.Parent = parent
	if k := len(src.Children); k > 0 {
		n.Children = c.kids[:k:k]
		c.kids = c.kids[k:]
		for i, ch := range src.Children {
			n.Children[i] = c.clone(ch, n)
		}
	}
	if ln != nil {
		ln.n, ln.own = n, false
	}
	return n
}
