package sqlitestore

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
