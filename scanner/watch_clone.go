package scanner

// Pure functions over nodes and forests: whether new facts keep the edges
// (sameEdges), patching facts into a built node, and cloning a built forest
// so that classification and the consumer never share a node with the
// engine.

import (
	"slices"

	"github.com/dispatchtop/dispatchtop/model"
)

// sameEdges reports whether replacing a node's facts a by b leaves every
// edge of the forest as it was.
func sameEdges(a, b *model.Node) bool {
	if a.HasHeartbeat != b.HasHeartbeat || a.Legacy != b.Legacy || a.DeclaredParent != b.DeclaredParent ||
		a.HeartbeatPath != b.HeartbeatPath || a.RegistryPath != b.RegistryPath ||
		len(a.Registry) != len(b.Registry) || a.HasScanFlag(model.FlagUnreadable) != b.HasScanFlag(model.FlagUnreadable) {
		return false
	}
	// The snapshot's problem list is assembled by BuildForest.
	if (a.Heartbeat == nil) != (b.Heartbeat == nil) || !slices.Equal(a.Problems, b.Problems) {
		return false
	}
	// `parent_heartbeat: ""` and no field at all both read as "": only the
	// first is a session lead that no registry adopts.
	if a.Heartbeat != nil && a.Heartbeat.SessionLead() != b.Heartbeat.SessionLead() {
		return false
	}
	for i := range a.Registry {
		if string(a.Registry[i].Raw) != string(b.Registry[i].Raw) || a.Registry[i].Torn != b.Registry[i].Torn {
			return false
		}
	}
	return true
}

// patchFacts replaces the facts of a built node, keeping its tree fields,
// so parent and children pointers stay valid.
func patchFacts(t, facts *model.Node) {
	c := CopyFacts(facts)
	c.ID, c.Parent, c.Children, c.ParentID = t.ID, t.Parent, t.Children, t.ParentID
	c.Entry, c.OtherParents, c.RefusedChildren = t.Entry, t.OtherParents, t.RefusedChildren
	for _, f := range t.ScanFlags {
		if f != model.FlagUnreadable && !c.HasScanFlag(f) {
			c.ScanFlags = append(c.ScanFlags, f)
		}
	}
	*t = *c
}

// cloneForest copies every node of a built forest into fresh structs, so
// classification and the consumer never share a node with the engine. The
// nodes' slices are shared: neither side mutates them in place.
func cloneForest(t *model.Snapshot) *model.Snapshot {
	count, kids := 0, 0
	for _, s := range t.Sessions {
		s.Walk(func(n *model.Node) { count++; kids += len(n.Children) })
	}
	c := &cloner{arr: make([]model.Node, count), kids: make([]*model.Node, kids),
		byID: make(map[string]*model.Node, count)}
	snap := *t
	snap.Sessions = make([]*model.Node, len(t.Sessions))
	for k, s := range t.Sessions {
		snap.Sessions[k] = c.clone(s, nil)
	}
	snap.ByID = c.byID
	snap.Problems = slices.Clip(t.Problems)
	return &snap
}

// cloneSession copies one session tree, entering its nodes in byID.
func cloneSession(s *model.Node, byID map[string]*model.Node) *model.Node {
	count, kids := 0, 0
	s.Walk(func(n *model.Node) { count++; kids += len(n.Children) })
	c := &cloner{arr: make([]model.Node, count), kids: make([]*model.Node, kids), byID: byID}
	return c.clone(s, nil)
}

// cloner hands out nodes and child slices from two preallocated arrays.
type cloner struct {
	arr  []model.Node
	kids []*model.Node
	byID map[string]*model.Node
}

func (c *cloner) clone(src, parent *model.Node) *model.Node {
	n := &c.arr[0]
	c.arr = c.arr[1:]
	*n = *src
	n.Parent = parent
	n.Flags = nil
	n.ScanFlags = slices.Clip(src.ScanFlags)
	n.Problems = slices.Clip(src.Problems)
	n.Registry = slices.Clip(src.Registry)
	if k := len(src.Children); k > 0 {
		n.Children = c.kids[:k:k]
		c.kids = c.kids[k:]
		for i, ch := range src.Children {
			n.Children[i] = c.clone(ch, n)
		}
	}
	c.byID[n.ID] = n
	return n
}
