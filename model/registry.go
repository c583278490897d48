package model

import (
	"slices"
	"time"
)

// Registry is what the last read of a node's `.children` found: its lines,
// and the file's mtime and size as they were read. Only a lead has one, so
// a node holds it behind a pointer (Node.Registry, nil for the others) and
// the common node is 48 bytes smaller (see Node).
//
// A Registry, once a node holds it, is never written, nor are its lines:
// copies of the node share it. SetRegistry gives a node a new one.
type Registry struct {
	Lines []RegistryLine
	Mtime time.Time
	Size  int64
}

// SetRegistry gives n the registry read as lines, from a file of that
// mtime and size: a new Registry (none when all three are zero), since the
// one n holds may be shared by a published copy of n. The lines are kept
// with no room to grow, so an append to them copies them.
func (n *Node) SetRegistry(lines []RegistryLine, mtime time.Time, size int64) {
	if lines == nil && mtime.IsZero() && size == 0 {
		n.Registry = nil
		return
	}
	n.Registry = &Registry{Lines: slices.Clip(lines), Mtime: mtime, Size: size}
}

// noRegistry is what a node without a Registry reads. Never written.
var noRegistry Registry

// registry is what the accessors read: n's Registry, or noRegistry.
func (n *Node) registry() *Registry {
	if n.Registry == nil {
		return &noRegistry
	}
	return n.Registry
}

// RegistryLines are the lines of the node's `.children` as last read, nil
// when it has none or none was read.
func (n *Node) RegistryLines() []RegistryLine {
	return n.registry().Lines
}

// RegistryMtime is the mtime of the node's `.children` when it was read,
// zero when none was.
func (n *Node) RegistryMtime() time.Time {
	return n.registry().Mtime
}

// RegistrySize is the size of the node's `.children` when it was read, 0
// when none was.
func (n *Node) RegistrySize() int64 {
	return n.registry().Size
}
