package model

import (
	"fmt"
	"strings"
	"testing"
)

// TestSnapshotIndexedByPartsAnswersAsAWholeMapWould builds a fleet of
// parts (each a snapshot of its own, indexed by a map, by its sessions or
// by nothing at all), the whole indexed by them, and checks Node for every
// id and for ids it lacks, NodeCount and Nodes against a whole map; then a
// part is renewed in a new whole, and the old whole still answers as it
// did.
func TestSnapshotIndexedByPartsAnswersAsAWholeMapWould(t *testing.T) {
	part := func(host string, sessions, per int, indexed bool) *Snapshot {
		s := &Snapshot{ByID: map[string]*Node{}}
		for i := range sessions {
			sess := &Node{ID: fmt.Sprintf("%s/s%d", host, i)}
			s.ByID[sess.ID] = sess
			for k := range per {
				c := &Node{ID: fmt.Sprintf("%s/s%d/w%d", host, i, k), Parent: sess}
				sess.Children = append(sess.Children, c)
				s.ByID[c.ID] = c
			}
			s.Sessions = append(s.Sessions, sess)
		}
		if indexed {
			s.IndexSessions()
		}
		return s
	}
	whole := func(names []string, parts []*Snapshot) *Snapshot {
		s := &Snapshot{}
		for i, name := range names {
			s.Sessions = append(s.Sessions, &Node{ID: name, Children: parts[i].Sessions})
		}
		of := func(id string) int {
			host, _, _ := strings.Cut(id, "/")
			for i, name := range names {
				if name == host {
					return i
				}
			}
			return -1
		}
		s.IndexParts(parts, of)
		return s
	}
	check := func(t *testing.T, s *Snapshot, want map[string]*Node) {
		t.Helper()
		if s.ByID != nil {
			t.Errorf("ByID is kept beside the parts")
		}
		if s.NodeCount() != len(want) {
			t.Errorf("NodeCount %d, want %d", s.NodeCount(), len(want))
		}
		for id, n := range want {
			if got := s.Node(id); got != n {
				t.Errorf("Node(%q) = %v, want %v", id, got, n)
			}
		}
		for _, id := range []string{"", "nohost", "nohost/s0", "a/none", "a/s0/w99", "a/"} {
			if got := s.Node(id); got != nil {
				t.Errorf("Node(%q) = %s, want none", id, got.ID)
			}
		}
		seen := 0
		for id, n := range s.Nodes() {
			if want[id] != n {
				t.Errorf("Nodes yields %q -> %v, want %v", id, n, want[id])
			}
			seen++
		}
		if seen != len(want) {
			t.Errorf("Nodes yields %d, want %d", seen, len(want))
		}
	}
	all := func(s *Snapshot) map[string]*Node {
		m := map[string]*Node{}
		var walk func(*Node)
		walk = func(n *Node) {
			m[n.ID] = n
			for _, c := range n.Children {
				walk(c)
			}
		}
		for _, top := range s.Sessions {
			walk(top)
		}
		return m
	}
	tests := []struct {
		name  string
		parts []*Snapshot
	}{
		{"parts indexed by maps", []*Snapshot{part("a", 3, 2, false), part("b", 1, 0, false)}},
		{"parts indexed by their sessions", []*Snapshot{part("a", 50, 20, true), part("b", 5, 3, true)}},
		{"an empty part", []*Snapshot{part("a", 2, 2, true), {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			names := []string{"a", "b"}
			s := whole(names, tt.parts)
			want := all(s)
			check(t, s, want)
			// Part b renewed: a new whole over the same part a.
			renewed := whole(names, []*Snapshot{tt.parts[0], part("b", 2, 1, true)})
			check(t, renewed, all(renewed))
			check(t, s, want)
		})
	}
}
