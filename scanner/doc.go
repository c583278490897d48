// Package scanner is the only reader of the disk: it discovers nodes under
// the roots, parses their files, builds the forest from the three edge
// sources (SPEC §2), and keeps it current with fsnotify or polling.
package scanner
