package model

import "iter"

// nodeIndex is a watcher's snapshot's id index (see IndexSessions): which
// session holds each id, shared by every snapshot until the forest's edges
// change, and the nodes by id of each large session, renewed with it. A
// renewal costs the sessions it renewed, and a snapshot holds no node it
// replaced, so a session's previous copy is the collector's once the
// snapshots that showed it are.
type nodeIndex struct {
	session map[string]int32
	// large holds, by session index, the nodes by id of each session of
	// more than smallSession nodes, nil for the others: a small session is
	// looked through.
	large []map[string]*Node
	// parts, when not nil, stands for the two above: the snapshot is
	// indexed by the snapshots it is made of (IndexParts).
	parts *partIndex
}

// smallSession is the most nodes a session has that Node looks through
// rather than keeping them by id: as quick as a map's lookup, and nothing
// to renew.
const smallSession = 16

// IndexSessions indexes s's nodes by the sessions that hold them: Node,
// NodeCount and Nodes answer from its forest, and ByID is nil from then on.
func (s *Snapshot) IndexSessions() {
	idx := &nodeIndex{session: make(map[string]int32, s.NodeCount()), large: make([]map[string]*Node, len(s.Sessions))}
	for i, sess := range s.Sessions {
		sess.Walk(func(n *Node) { idx.session[n.ID] = int32(i) })
		idx.large[i] = largeSession(sess)
	}
	s.ByID, s.index = nil, idx
}

// RenewSessions indexes s, a copy of an indexed snapshot whose sessions at
// the indexes in renewed were replaced by copies holding the same ids (the
// forest's edges kept): it costs those sessions, not the forest. The
// snapshot it was copied from keeps answering as it did.
func (s *Snapshot) RenewSessions(renewed iter.Seq[int]) {
	if s.index == nil || s.index.parts != nil {
		s.IndexSessions()
		return
	}
	idx := &nodeIndex{session: s.index.session, large: s.index.large}
	copied := false
	for i := range renewed {
		m := largeSession(s.Sessions[i])
		if m == nil && idx.large[i] == nil {
			continue
		}
		if !copied {
			idx.large, copied = append([]map[string]*Node(nil), idx.large...), true
		}
		idx.large[i] = m
	}
	s.ByID, s.index = nil, idx
}

// largeSession is a session's nodes by id, or nil for a small one.
func largeSession(sess *Node) map[string]*Node {
	count := 0
	sess.Walk(func(*Node) { count++ })
	if count <= smallSession {
		return nil
	}
	m := make(map[string]*Node, count)
	sess.Walk(func(n *Node) { m[n.ID] = n })
	return m
}

// nodeInSession is the node with id in sess, looked through.
func nodeInSession(sess *Node, id string) *Node {
	if sess.ID == id {
		return sess
	}
	for _, c := range sess.Children {
		if n := nodeInSession(c, id); n != nil {
			return n
		}
	}
	return nil
}

// NodeCount is how many nodes the snapshot holds.
func (s *Snapshot) NodeCount() int {
	switch {
	case s == nil:
		return 0
	case s.index != nil && s.index.parts != nil:
		return s.index.parts.count
	case s.index != nil:
		return len(s.index.session)
	}
	return len(s.ByID)
}

// Nodes yields every node of the snapshot with its id, in no order.
func (s *Snapshot) Nodes() iter.Seq2[string, *Node] {
	return func(yield func(string, *Node) bool) {
		switch {
		case s == nil:
			return
		case s.index == nil:
			for id, n := range s.ByID {
				if !yield(id, n) {
					return
				}
			}
			return
		}
		for _, sess := range s.Sessions {
			if !yieldTree(sess, yield) {
				return
			}
		}
	}
}

func yieldTree(n *Node, yield func(string, *Node) bool) bool {
	if !yield(n.ID, n) {
		return false
	}
	for _, c := range n.Children {
		if !yieldTree(c, yield) {
			return false
		}
	}
	return true
}
