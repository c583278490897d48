package model

// partIndex is the id index of a snapshot made of other snapshots' forests
// (IndexParts): a fleet of hosts, each host a top-level node over its own
// snapshot's sessions. A node is looked up in its part's index, so a
// snapshot of the whole costs its top-level nodes, never an index of every
// node: a part renewed brings an index of its own.
type partIndex struct {
	parts []*Snapshot
	of    func(id string) int // the part an id is of, or -1
	count int
}

// IndexParts indexes s by parts: s.Sessions[i] is a node of its own over
// parts[i]'s sessions (its Children), and of names the part of any id
// below it (-1: none). Node, NodeCount and Nodes answer from the parts, and
// ByID is nil from then on. The parts are read, never changed, and must
// not change after: a part is a published snapshot.
func (s *Snapshot) IndexParts(parts []*Snapshot, of func(id string) int) {
	p := &partIndex{parts: parts, of: of, count: len(s.Sessions)}
	for _, part := range parts {
		p.count += part.NodeCount()
	}
	s.ByID, s.index = nil, &nodeIndex{parts: p}
}

// node is the node with id in s, indexed by p.
func (p *partIndex) node(s *Snapshot, id string) *Node {
	i := p.of(id)
	if i < 0 || i >= len(s.Sessions) {
		return nil
	}
	if top := s.Sessions[i]; top.ID == id {
		return top
	}
	if i >= len(p.parts) {
		return nil
	}
	return p.parts[i].Node(id)
}
