// Package scanner reads the roots: it discovers nodes under them, reads
// their files (named and parsed by protocol), builds the forest from the
// three edge sources (SPEC §2), and keeps it current with fsnotify or
// polling.
package scanner
