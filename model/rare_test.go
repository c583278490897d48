package model

import (
	"reflect"
	"slices"
	"testing"
	"time"
	"unsafe"
)

// TestFactsFitTheirSizeClasses: SPEC §8 "100,000 nodes: ≤ 300 MiB RSS".
// The live engine holds every node, copies every node of a session it
// classifies again, and a whole forest when a fleet crosses a threshold
// together, while the consumer still holds the previous copy: a node's size
// is paid twice at the peak. What most nodes leave empty is behind a
// pointer, made only when a file names it:
//   - Node: see TestNodeFitsThe384ByteSizeClass.
//   - CfaState (nearly every node): the history, which only a scan that
//     keeps the files' bytes keeps, and what older writers also wrote are
//     behind CfaDetail. It was 136 bytes, in the 144-byte class.
//   - Heartbeat (every node): what some writers add to the five fields
//     every writer writes is behind HeartbeatOptional. It was 128 bytes.
//   - RegistryLine (every registered node's line in its parent's
//     registry): a line's number and its torn mark share a word. It was 64.
func TestFactsFitTheirSizeClasses(t *testing.T) {
	tests := []struct {
		name      string
		size      uintptr
		sizeClass uintptr
	}{
		{"CfaState", unsafe.Sizeof(CfaState{}), 48},
		{"Heartbeat", unsafe.Sizeof(Heartbeat{}), 80},
		{"RegistryLine", unsafe.Sizeof(RegistryLine{}), 56},
	}
	for _, tt := range tests {
		if tt.size > tt.sizeClass {
			t.Errorf("a %s is %d bytes, past the %d-byte size class", tt.name, tt.size, tt.sizeClass)
		}
	}
}

// TestNodeFitsThe384ByteSizeClass: SPEC §8, the viewer of 20 hosts ×
// 10,000 nodes holds ≤ 2 KiB of RSS a remote node while 1 % of them
// change every second, and 100,000 local nodes fit in ≤ 300 MiB. A node's
// size is most of a viewer's live heap a node, and, since every change
// copies the nodes of its session, most of what it allocates, hence of its
// collector's CPU. The facts few nodes have are behind pointers (Rare, the
// registry's, the recorded owner), a reason's moving age holds its moment
// in 12 bytes (Instant), and what a node can make when asked (its
// registry's path) takes no room: 384 bytes, where it was 472 (in the
// 480-byte class). A field added past 384 bytes takes it to the 416-byte
// class; one most nodes leave empty belongs behind a pointer. Past 512
// bytes the allocator puts an 8-byte header before an object that holds
// pointers: a Node of 576 bytes took 640.
func TestNodeFitsThe384ByteSizeClass(t *testing.T) {
	tests := []struct {
		name      string
		size      uintptr
		sizeClass uintptr
	}{
		{"Node", unsafe.Sizeof(Node{}), 384},
		// Every node holds one: an Instant and two int32s pack with its
		// flag in three words.
		{"ReasonAge", unsafe.Sizeof(ReasonAge{}), 24},
	}
	for _, tt := range tests {
		if tt.size > tt.sizeClass {
			t.Errorf("a %s is %d bytes, past %d", tt.name, tt.size, tt.sizeClass)
		}
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
		{"orphaned since", func(r *Rare) { r.OrphanedSince = mtime },
			func(n *Node) any { return n.OrphanedSince() }, func(n *Node) bool { return n.OrphanedSince().IsZero() }},
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

// A classification sets every node's OrphanedSince, most of them to zero:
// a node without it makes no Rare for a zero, and one that holds the value
// given keeps its Rare (a published copy may share it); a change is made on
// a copy, and a Rare left with nothing is dropped.
func TestSetOrphanedSinceEditsOnlyAChange(t *testing.T) {
	since := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
	problem := []Problem{{Path: "/r/a/.heartbeat", Error: "e"}}
	tests := []struct {
		name     string
		rare     *Rare
		set      time.Time
		wantSame bool // the node keeps the very Rare it had
		wantNil  bool
	}{
		{"zero on a node without a Rare", nil, time.Time{}, true, true},
		{"zero on a node with other facts", &Rare{Problems: problem}, time.Time{}, true, false},
		{"the same time again", &Rare{OrphanedSince: since}, since, true, false},
		{"a time on a node without a Rare", nil, since, false, false},
		{"zero on an orphaned node with no other fact", &Rare{OrphanedSince: since}, time.Time{}, false, true},
		{"zero on an orphaned node with other facts", &Rare{OrphanedSince: since, Problems: problem}, time.Time{}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before Rare
			if tt.rare != nil {
				before = *tt.rare
			}
			n := &Node{ID: "a", Rare: tt.rare}
			n.SetOrphanedSince(tt.set)
			if got := n.OrphanedSince(); got != tt.set {
				t.Errorf("orphaned since %v, want %v", got, tt.set)
			}
			if (n.Rare == tt.rare) != tt.wantSame {
				t.Errorf("kept its Rare: %v, want %v", n.Rare == tt.rare, tt.wantSame)
			}
			if (n.Rare == nil) != tt.wantNil {
				t.Errorf("Rare %+v, want nil: %v", n.Rare, tt.wantNil)
			}
			if tt.rare != nil && !reflect.DeepEqual(*tt.rare, before) {
				t.Errorf("the Rare it had was written: %+v, was %+v", *tt.rare, before)
			}
		})
	}
}

// A node's registry path is made from its infra dir when asked: the file
// the scanner reads (protocol.RegistryFile, which the scanner's tests hold
// it to), "" when it has none.
func TestRegistryPathIsMadeFromTheInfraDir(t *testing.T) {
	tests := []struct {
		name string
		n    Node
		want string
	}{
		{"none", Node{InfraDir: "/r/a"}, ""},
		{"one", Node{InfraDir: "/r/a", HasRegistry: true}, "/r/a/.children"},
		{"at a root", Node{InfraDir: "/", HasRegistry: true}, "/.children"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.n.RegistryPath(); got != tt.want {
				t.Errorf("registry path %q, want %q", got, tt.want)
			}
		})
	}
}
