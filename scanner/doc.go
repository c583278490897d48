// Package scanner reads the roots: it discovers nodes under them, reads
// their files (named and parsed by protocol), builds the forest from the
// three edge sources (SPEC §2), and keeps it current with fsnotify or
// polling. Every root is read through the seam of package sources: the
// native file protocol is one source (Native); a root of another source
// yields its store's node facts, linked into the same forest and judged by
// the same classifier (native.go, watch_stores.go).
package scanner
