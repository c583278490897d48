package model

import (
	"reflect"
	"slices"
	"testing"
	"time"
	"unsafe"
)

// TestNodeFitsItsSizeClass: SPEC §8 "100,000 nodes: ≤ 300 MiB RSS". The
// live engine holds every node, copies every node of a session it
// classifies again, and a whole forest when a fleet crosses a threshold
// together, while the consumer still holds the previous copy: a node's size
// is paid twice at the peak. Facts few nodes have are behind Node.Rare, so a
// node holds no room for them. Past 512 bytes the allocator puts an 8-byte
// header before an object that holds pointers: a Node of 576 bytes took 640.
// It is 512, the largest size without that header, so a field added to Node
// takes it to 640 again: one that most nodes leave empty belongs in Rare.
func TestNodeFitsItsSizeClass(t *testing.T) {
	const sizeClass = 512 // and no header
	if got := unsafe.Sizeof(Node{}); got > sizeClass {
		t.Errorf("a Node is %d bytes, past the %d-byte size class", got, sizeClass)
	}
}

// The rare facts are never written where a copy of the node holds them
// too (a published snapshot may share them): EditRare edits a copy, an
// append in it copies the list, and a Rare left with nothing is dropped.
func TestEditRareLeavesCopiesAlone(t *testing.T) {
	problem := Problem{Path: "/r/a/.heartbeat", Error: "parse heartbeat: truncated"}
	tests := []struct {
		name     string
		rare     *Rare
		edit     func(r *Rare)
		wantNil  bool
		wantFlag []Flag
	}{
		{"a fact added to a node with none", nil,
			func(r *Rare) { r.ScanFlags = append(r.ScanFlags, FlagConflict) }, false, []Flag{FlagConflict}},
		{"a fact appended to a list with room to grow", &Rare{ScanFlags: make([]Flag, 1, 8)},
			func(r *Rare) { r.ScanFlags = append(r.ScanFlags, FlagCycle) }, false, []Flag{"", FlagCycle}},
		{"the last fact taken away", &Rare{ScanFlags: []Flag{FlagUnreadable}},
			func(r *Rare) { r.ScanFlags = nil }, true, nil},
		{"one fact of two taken away", &Rare{ScanFlags: []Flag{FlagUnreadable}, Problems: []Problem{problem}},
			func(r *Rare) { r.ScanFlags = nil }, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			published := &Node{ID: "a", Rare: tt.rare}
			var flags []Flag // the published list, its spare room too
			if tt.rare != nil {
				flags = slices.Clone(tt.rare.ScanFlags[:cap(tt.rare.ScanFlags)])
			}
			copied := *published
			copied.EditRare(tt.edit)
			if published.Rare != tt.rare {
				t.Errorf("the published node holds other rare facts: %+v", published.Rare)
			}
			if tt.rare != nil && !slices.Equal(tt.rare.ScanFlags[:cap(tt.rare.ScanFlags)], flags) {
				t.Errorf("the published node's list was written: %v, was %v", tt.rare.ScanFlags[:cap(tt.rare.ScanFlags)], flags)
			}
			if (copied.Rare == nil) != tt.wantNil {
				t.Fatalf("rare facts %+v, want nil %v", copied.Rare, tt.wantNil)
			}
			if got := copied.ScanFlags(); !slices.Equal(got, tt.wantFlag) {
				t.Errorf("scan flags %v, want %v", got, tt.wantFlag)
			}
		})
	}
}

// Each rare fact reads zero on a node without a Rare, and a node given
// that fact alone keeps it: EditRare drops only a Rare that holds nothing.
func TestEachRareFactReadsZeroWithoutRareAndIsKeptAlone(t *testing.T) {
	mtime := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		set  func(r *Rare)
		read func(n *Node) any
		zero func(n *Node) bool
	}{
		{"legacy pid", func(r *Rare) { r.LegacyPID = 7 },
			func(n *Node) any { return n.LegacyPID() }, func(n *Node) bool { return n.LegacyPID() == 0 }},
		{"heartbeat raw", func(r *Rare) { r.HeartbeatRaw = []byte(`{"pid":7}`) },
			func(n *Node) any { return string(n.HeartbeatRaw()) }, func(n *Node) bool { return n.HeartbeatRaw() == nil }},
		{"resume pending", func(r *Rare) { r.ResumePending = &ResumePending{PID: 7} },
			func(n *Node) any { return *n.ResumePending() }, func(n *Node) bool { return n.ResumePending() == nil }},
		{"resume mtime", func(r *Rare) { r.ResumeMtime = mtime },
			func(n *Node) any { return n.ResumeMtime() }, func(n *Node) bool { return n.ResumeMtime().IsZero() }},
		{"problems", func(r *Rare) { r.Problems = []Problem{{Path: "/r/a", Error: "e"}} },
			func(n *Node) any { return n.Problems()[0] }, func(n *Node) bool { return n.Problems() == nil }},
		{"scan flags", func(r *Rare) { r.ScanFlags = []Flag{FlagCycle} },
			func(n *Node) any { return n.ScanFlags()[0] }, func(n *Node) bool { return n.ScanFlags() == nil }},
		{"other parents", func(r *Rare) { r.OtherParents = []string{"b"} },
			func(n *Node) any { return n.OtherParents()[0] }, func(n *Node) bool { return n.OtherParents() == nil }},
		{"refused children", func(r *Rare) { r.RefusedChildren = []string{"c"} },
			func(n *Node) any { return n.RefusedChildren()[0] }, func(n *Node) bool { return n.RefusedChildren() == nil }},
		{"source fields", func(r *Rare) { r.SourceFields = []Field{{Name: "row", Value: "1"}} },
			func(n *Node) any { return n.SourceFields()[0] }, func(n *Node) bool { return n.SourceFields() == nil }},
		{"registry compacting", func(r *Rare) { r.RegistryCompacting = "/r/a/.children.compacting" },
			func(n *Node) any { return n.RegistryCompacting() }, func(n *Node) bool { return n.RegistryCompacting() == "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if bare := (&Node{ID: "a"}); !tt.zero(bare) {
				t.Errorf("a node without a Rare reads %v", tt.read(bare))
			}
			var want Rare
			tt.set(&want)
			n := &Node{ID: "a"}
			n.EditRare(tt.set)
			if n.Rare == nil {
				t.Fatal("the Rare holding this fact alone was dropped")
			}
			if got, wantNode := tt.read(n), (&Node{Rare: &want}); !reflect.DeepEqual(got, tt.read(wantNode)) || tt.zero(n) {
				t.Errorf("read %v, want %v", got, tt.read(wantNode))
			}
		})
	}
}
