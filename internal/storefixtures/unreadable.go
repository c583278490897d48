package storefixtures

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Unreadable is a store of one of the four systems that cannot be read,
// as the tests of SPEC §10 build it: detected by its layout, its read a
// problem naming File and Cause.
type Unreadable struct {
	Kind  string // the source's KIND, as a `KIND:PATH` root names it
	What  string // what is wrong with it
	Cause string // what the problem says of it
	// Denied: the file is of mode 000; only a process that is not root is
	// refused it (the test runs the binary as another user, or skips).
	Denied bool
	// Build makes the store under dir and returns the root to give and the
	// file its problem names.
	Build func(dir string) (root, file string, err error)
}

// UnreadableStores are every kind of unreadable store for each source:
// corrupt SQLite, a missing table, zero bytes, a directory where a file
// goes, torn JSON, and no permission.
func UnreadableStores() []Unreadable {
	corrupt := func(path string) error {
		return os.WriteFile(path, []byte("SQLite format 3\x00"+strings.Repeat("\xff", 4096)), 0o644)
	}
	empty := func(path string) error { return os.WriteFile(path, nil, 0o644) }
	directory := func(path string) error { return os.MkdirAll(path, 0o755) }
	torn := func(path string) error { return os.WriteFile(path, []byte(`{"id": "a1", "status": "act`), 0o644) }
	denied := func(write func(string) error) func(string) error {
		return func(path string) error {
			if err := write(path); err != nil {
				return err
			}
			return os.Chmod(path, 0)
		}
	}
	sqliteWith := func(ddl []string) func(string) error {
		return func(path string) error {
			db, err := Open(path, ddl)
			if err != nil {
				return err
			}
			return db.Close()
		}
	}
	// Where each source's store lives and which file of it is planted.
	layouts := []struct {
		kind      string
		root      string // relative to dir
		file      string // relative to the root
		kinds     []Unreadable
		fileMaker map[string]func(string) error
	}{
		{kind: "middle", root: ".middle", file: "db.sqlite3", kinds: []Unreadable{
			{What: "corrupt SQLite", Cause: "file is not a database"},
			{What: "no workflows table", Cause: `no table "workflows"`},
			{What: "zero bytes", Cause: "empty file"},
			{What: "a directory", Cause: "not a regular file (directory)"},
			{What: "no permission", Cause: "permission denied", Denied: true},
		}, fileMaker: map[string]func(string) error{
			"corrupt SQLite": corrupt, "no workflows table": sqliteWith([]string{`PRAGMA journal_mode = WAL`, `CREATE TABLE schema_version (version INTEGER PRIMARY KEY)`}),
			"zero bytes": empty, "a directory": directory, "no permission": denied(sqliteWith(MiddleMigrations)),
		}},
		{kind: "teaparty", root: ".teaparty", file: "jobs/job-20260507-101500--fix/messages.db", kinds: []Unreadable{
			{What: "corrupt SQLite", Cause: "file is not a database"},
			{What: "no conversations table", Cause: `no table "conversations"`},
			{What: "zero bytes", Cause: "empty file"},
			{What: "a directory", Cause: "not a regular file (directory)"},
			{What: "no permission", Cause: "permission denied", Denied: true},
		}, fileMaker: map[string]func(string) error{
			"corrupt SQLite": corrupt, "no conversations table": sqliteWith(TeaPartyBusDDL[:3]),
			"zero bytes": empty, "a directory": directory, "no permission": denied(sqliteWith(TeaPartyBusDDL)),
		}},
		{kind: "opencode-teams", root: ".opencode/opencode-teams", file: "agents/a1.json", kinds: []Unreadable{
			{What: "torn JSON", Cause: "unexpected end of JSON input"},
			{What: "zero bytes", Cause: "unexpected end of JSON input"},
			{What: "a directory", Cause: "not a regular file (directory)"},
			{What: "no permission", Cause: "permission denied", Denied: true},
		}, fileMaker: map[string]func(string) error{
			"torn JSON": torn, "zero bytes": empty, "a directory": directory, "no permission": denied(torn),
		}},
		{kind: "chatroom", root: ".chatroom", file: "machine.json", kinds: []Unreadable{
			{What: "torn JSON", Cause: "unexpected end of JSON input"},
			{What: "zero bytes", Cause: "unexpected end of JSON input"},
			{What: "a directory", Cause: "not a regular file (directory)"},
			{What: "no permission", Cause: "permission denied", Denied: true},
		}, fileMaker: map[string]func(string) error{
			"torn JSON": torn, "zero bytes": empty, "a directory": directory, "no permission": denied(torn),
		}},
	}
	var out []Unreadable
	for _, l := range layouts {
		for _, u := range l.kinds {
			u.Kind = l.kind
			makeFile, rootRel, fileRel := l.fileMaker[u.What], l.root, l.file
			u.Build = func(dir string) (string, string, error) {
				root := filepath.Join(dir, filepath.FromSlash(rootRel))
				file := filepath.Join(root, filepath.FromSlash(fileRel))
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					return "", "", err
				}
				return root, file, makeFile(file)
			}
			out = append(out, u)
		}
	}
	return out
}

// EachUnreadable runs each of UnreadableStores as a subtest of t twice:
// the store found by its layout, and named `KIND:PATH`. as is the root
// argument to give for the root a Build returned.
func EachUnreadable(t *testing.T, run func(t *testing.T, u Unreadable, as func(root string) string)) {
	for _, u := range UnreadableStores() {
		for _, prefixed := range []bool{false, true} {
			name := u.Kind + "/" + u.What
			if prefixed {
				name += "/KIND:"
			}
			t.Run(name, func(t *testing.T) {
				run(t, u, func(root string) string {
					if prefixed {
						return u.Kind + ":" + root
					}
					return root
				})
			})
		}
	}
}
