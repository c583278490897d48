// Package sysat opens and stats a file relative to an open directory, as
// golang.org/x/sys/unix does, without copying the name to the heap: a scan
// opens or stats tens of thousands of names, and each copy was an
// allocation, and with the collector held back in a snapshot run, fresh
// memory the kernel had to fault in.
package sysat

// maxStackName is the longest name copied to the stack; a longer one (a
// path, rarely) is copied to the heap as unix copies it.
const maxStackName = 255
