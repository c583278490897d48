//go:build !unix

package sqlitestore

// readable leaves the question to SQLite's own open where access(2) is
// not there to ask.
func readable(string) error { return nil }
