package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
)

// newStore writes a database at rest (its writer closed) holding what ddl
// makes, and returns its path.
func newStore(t *testing.T, ddl ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "store.db")
	db, err := storefixtures.Open(path, append([]string{`PRAGMA journal_mode=WAL`}, ddl...))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func open(t *testing.T, path string) *Snapshot {
	t.Helper()
	snap, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(snap.Close)
	return snap
}

// Schema answers, in one query, what a read asks of the tables it names:
// which the store has and their columns, as the table stands after the
// ALTERs a system runs in place.
func TestSchemaIsTheColumnsOfTheNamedTablesTheStoreHas(t *testing.T) {
	path := newStore(t,
		`CREATE TABLE rows (id TEXT PRIMARY KEY, state TEXT)`,
		`ALTER TABLE rows ADD COLUMN pid INTEGER NOT NULL DEFAULT 0`,
		`CREATE TABLE other (x INTEGER)`,
		`CREATE VIEW rows_view AS SELECT id FROM rows`)
	schema, err := open(t, path).Schema("rows", "absent", "rows_view")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		table string
		has   bool
		cols  []string
	}{
		{"rows", true, []string{"id", "pid", "state"}},
		{"absent", false, nil},
		{"rows_view", false, nil}, // a view is not a table
		{"other", false, nil},     // not asked for
	}
	for _, tt := range tests {
		t.Run(tt.table, func(t *testing.T) {
			if got := schema.Has(tt.table); got != tt.has {
				t.Fatalf("Has(%q) = %v, want %v", tt.table, got, tt.has)
			}
			if got := slices.Sorted(maps.Keys(schema.Columns(tt.table))); !slices.Equal(got, tt.cols) {
				t.Fatalf("Columns(%q) = %v, want %v", tt.table, got, tt.cols)
			}
		})
	}
}

// A table the read needs that is absent, or lacks a column the system's
// own CREATE TABLE has, is an error naming the file: an unknown schema.
func TestSchemaRequireNamesTheFileTheTableAndTheMissingColumns(t *testing.T) {
	path := newStore(t, `CREATE TABLE rows (id TEXT PRIMARY KEY, state TEXT)`)
	snap := open(t, path)
	schema, err := snap.Schema("rows", "absent")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, table string
		required    []string
		want        string // "" for no error
	}{
		{"all there", "rows", []string{"id", "state"}, ""},
		{"columns missing", "rows", []string{"id", "pid", "created_at"}, `read ` + snap.Path + `: unknown schema: table "rows" lacks column pid, created_at`},
		{"table missing", "absent", []string{"id"}, `read ` + snap.Path + `: no table "absent"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cols, err := schema.Require(tt.table, tt.required)
			if tt.want == "" {
				if err != nil || !cols["id"] {
					t.Fatalf("Require = %v, %v; want the columns and no error", cols, err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Require error = %v, want %q", err, tt.want)
			}
		})
	}
}

// Only the named tables are looked at: a table the read does not need,
// here a virtual table of a module this build lacks (which SQLite cannot
// describe), does not fail the read of the others.
func TestSchemaIgnoresATableItWasNotAskedFor(t *testing.T) {
	path := newStore(t,
		`CREATE TABLE rows (id TEXT PRIMARY KEY)`,
		`PRAGMA writable_schema = ON`,
		`INSERT INTO sqlite_master (type, name, tbl_name, rootpage, sql) VALUES ('table', 'search', 'search', 0, 'CREATE VIRTUAL TABLE search USING nosuchmodule(body)')`)
	snap := open(t, path)
	if _, err := snap.Query(`SELECT name FROM pragma_table_info('search')`); err == nil || !strings.Contains(err.Error(), "nosuchmodule") {
		t.Fatalf("describing the virtual table: %v, want an error naming its module (the fixture is not what the test needs)", err)
	}
	schema, err := snap.Schema("rows")
	if err != nil {
		t.Fatalf("Schema(rows): %v", err)
	}
	if !schema.Columns("rows")["id"] {
		t.Fatalf("Schema(rows) = %v, want rows' column id", schema.Columns("rows"))
	}
}

// A query built by Select that names a column the store lacks fails: it
// never reads the name as a string, as SQLite reads a double-quoted name
// that is no column. A read that asks first and asks its schema only on
// failure depends on it.
func TestSelectNeverReadsAColumnNameAsAString(t *testing.T) {
	path := newStore(t, `CREATE TABLE rows (id TEXT PRIMARY KEY)`, `INSERT INTO rows VALUES ('a')`)
	cols := []Column{{Name: "id", Type: "TEXT"}, {Name: "state", Type: "TEXT", Default: "''"}}
	for _, have := range []map[string]bool{{"id": true, "state": true}, {"state": true}} {
		rows, err := open(t, path).Query(`SELECT ` + Select(have, cols) + ` FROM rows`)
		if err == nil {
			var got []string
			for rows.Next() {
				var id, state any
				rows.Scan(&id, &state)
				got = append(got, fmt.Sprint(id, state))
			}
			rows.Close()
			t.Fatalf("Select(%v) on a table without state read %v, want an error", have, got)
		}
		if !IsSQLError(err) || !strings.Contains(err.Error(), "no such column: state") {
			t.Fatalf("Select(%v): %v, want SQLite's no such column", have, err)
		}
	}
}

// IsSQLError tells a statement naming what the store lacks, which a read
// answers by asking the schema, from a store that cannot be read, which
// asking again would only wait on again.
func TestIsSQLErrorIsAStatementsErrorNotAStores(t *testing.T) {
	good := newStore(t, `CREATE TABLE rows (id TEXT PRIMARY KEY)`)
	notADatabase := filepath.Join(t.TempDir(), "not.db")
	if err := os.WriteFile(notADatabase, []byte(strings.Repeat("not sqlite ", 512)), 0o644); err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(t.TempDir(), "locked.db")
	writer, err := storefixtures.Open(locked, []string{`PRAGMA journal_mode=DELETE`, `CREATE TABLE rows (id TEXT PRIMARY KEY)`})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { writer.Close() })
	conn, err := writer.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.ExecContext(context.Background(), `ROLLBACK`); conn.Close() })
	if _, err := conn.ExecContext(context.Background(), `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, query string
		want              bool
	}{
		{"a column the store lacks", good, `SELECT [state] FROM rows`, true},
		{"a table the store lacks", good, `SELECT id FROM absent`, true},
		{"a file that is no database", notADatabase, `SELECT id FROM rows`, false},
		{"a store a writer locks", locked, `SELECT id FROM rows`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap, err := Open(tt.path, 50*time.Millisecond)
			if err == nil {
				defer snap.Close()
				var rows *sql.Rows
				rows, err = snap.Query(tt.query)
				if err == nil {
					rows.Close()
				}
			}
			if err == nil {
				t.Fatalf("%s: no error", tt.query)
			}
			if got := IsSQLError(err); got != tt.want {
				t.Fatalf("IsSQLError(%v) = %v, want %v", err, got, tt.want)
			}
		})
	}
	if IsSQLError(nil) || IsSQLError(errors.New("no such column: x")) {
		t.Fatal("IsSQLError is true of an error that is not SQLite's")
	}
}

// A value shared is the copy Shared first held: equal strings read from
// different rows become one.
func TestSharedKeepsOneCopyOfAValue(t *testing.T) {
	sh := Shared{}
	first := strings.Clone("active")
	second := strings.Clone("active")
	other := strings.Clone("closed")
	sh.Share(&first)
	sh.Share(&second)
	sh.Share(&other)
	if second != "active" || unsafe.StringData(second) != unsafe.StringData(first) {
		t.Errorf("the second %q is not the first's copy", second)
	}
	if other != "closed" || unsafe.StringData(other) == unsafe.StringData(first) {
		t.Errorf("another value %q became the first's", other)
	}
}

// A column whose values differ row to row does not grow Shared past
// maxShared.
func TestSharedHoldsAtMostItsBound(t *testing.T) {
	sh := Shared{}
	for i := range 2 * maxShared {
		v := fmt.Sprint(i)
		sh.Share(&v)
	}
	if len(sh) != maxShared {
		t.Errorf("holds %d values, want %d", len(sh), maxShared)
	}
}

// IsTooBig tells a value over SQLite's length limit (a read that gathers
// a table into one string may make one), which a reader can read another
// way, from a statement's error or a store's.
func TestIsTooBigIsAValueOverTheLengthLimit(t *testing.T) {
	good := newStore(t, `CREATE TABLE rows (id TEXT PRIMARY KEY)`)
	tests := []struct {
		name, query string
		want        bool
	}{
		{"a blob of 2 GB", `SELECT zeroblob(2000000000)`, true},
		{"a column the store lacks", `SELECT [state] FROM rows`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap, err := Open(good, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			rows, err := snap.Query(tt.query)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			if err == nil {
				t.Fatalf("%s: no error", tt.query)
			}
			if got := IsTooBig(err); got != tt.want {
				t.Errorf("IsTooBig(%v) = %v, want %v", err, got, tt.want)
			}
		})
	}
	if IsTooBig(nil) || IsTooBig(errors.New("string or blob too big")) {
		t.Error("IsTooBig is true of an error that is not SQLite's")
	}
}
