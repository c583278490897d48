// Package sqlitestore opens the SQLite stores other systems write, the one
// way a source reads them: read-only, never blocking the writer, and every
// failure one line that names the file.
//
// The systems keep their databases in WAL mode. A reader opened with
// mode=ro sees the committed content of the -wal as well as the main file
// (immutable=1 would not, and would read a database half-checkpointed);
// it takes no lock a writer waits on, and on close it does not checkpoint,
// so the main file and the -wal are left as they were. SQLite may create
// or update the -shm, the shared index both sides use: that is its own.
// So is the empty -wal it creates to read a database at rest (its writers
// closed, their last close having removed the -wal): it holds nothing, and
// the writer's next open takes it as no log.
package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"modernc.org/sqlite" // the pure-Go driver, registered as "sqlite"

	"github.com/dispatchtop/dispatchtop/protocol"
)

// DefaultBusyTimeout is how long a read waits for a lock before the store
// counts as locked: long enough for a writer's commit or checkpoint, short
// enough that one locked store does not hold up a scan.
const DefaultBusyTimeout = time.Second

// Snapshot is one short read transaction on one store; it holds the
// store's read snapshot until Close and nothing after.
type Snapshot struct {
	Path string
	// Mark is the store's commit mark taken before a held read began
	// (see Held.ReadIfMoved); "" for a read of its own, a first read, or
	// a commit pending then.
	Mark string
	db   *sql.DB
	tx   *sql.Tx
	// held is the held connection the read runs on (see Held), whose
	// statements are prepared once and kept; nil for a read of its own.
	held     *heldConn
	prepares *atomic.Int64
	// queries counts the statements run (Queries).
	queries int
}

// Queries is how many statements the snapshot has run (Query, Schema and
// SelectTable among them): the work a read makes SQLite do, which a
// test holds.
func (s *Snapshot) Queries() int { return s.queries }

// Open begins a read of the database at path. busy is how long SQLite
// waits for a lock before it gives up (0: DefaultBusyTimeout).
func Open(path string, busy time.Duration) (*Snapshot, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := checkFiles(abs); err != nil {
		return nil, err
	}
	db, err := openDB(abs, busy)
	if err != nil {
		return nil, err
	}
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		db.Close()
		return nil, Describe(abs, err)
	}
	return &Snapshot{Path: abs, db: db, tx: tx}, nil
}

// openDB opens the database at the absolute path abs read-only, through
// one connection: a read is one transaction, and nothing is pooled past
// what the caller holds.
func openDB(abs string, busy time.Duration) (*sql.DB, error) {
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	// A URI, so that a path holding '?', '#' or '%' is escaped, not parsed.
	dsn := (&url.URL{
		Scheme:   "file",
		Path:     filepath.ToSlash(abs),
		RawQuery: fmt.Sprintf("mode=ro&_pragma=busy_timeout(%d)", busy.Milliseconds()),
	}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", abs, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// checkFiles refuses, before SQLite opens anything, a database that is
// not a regular file, or a -wal or -shm beside it that is not (SPEC §9):
// SQLite opens by path, and a FIFO opened so blocks until a writer comes,
// a device reads forever. The files are looked at, never opened: closing
// a descriptor of a database drops every POSIX lock this process holds on
// it, another read's among them. A database that may not be read says so
// plainly here, not as SQLite's "unable to open database file"; so does
// one of zero bytes with no log beside it (SQLite would read it as an
// empty database, and the read would say only what table it lacks).
func checkFiles(abs string) error {
	var size int64
	for _, p := range []string{abs, abs + "-wal", abs + "-shm"} {
		fi, err := os.Stat(p)
		if p != abs && errors.Is(err, fs.ErrNotExist) {
			continue // SQLite's own to make
		}
		if err != nil {
			return statError(p, err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("read %s: %w (%s)", p, protocol.ErrNotRegular, protocol.TypeName(fi.Mode()))
		}
		if p != abs+"-shm" {
			size += fi.Size()
		}
	}
	if size == 0 {
		return fmt.Errorf("read %s: empty file, not a database yet", abs)
	}
	if err := readable(abs); err != nil {
		return statError(abs, err)
	}
	return nil
}

// statError is a failed look at path as one line that names it once:
// "read /x/messages.db: permission denied".
func statError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("read %s: %w", path, err)
}

// Close ends the read transaction and closes the database (a held read's
// are its Held's to end and close).
func (s *Snapshot) Close() {
	if s.held != nil {
		return
	}
	s.tx.Rollback()
	s.db.Close()
}

// Query runs a read in the snapshot.
func (s *Snapshot) Query(query string, args ...any) (*sql.Rows, error) {
	s.queries++
	if s.held != nil {
		stmt, err := s.held.prepared(query, s.prepares)
		if err != nil {
			return nil, Describe(s.Path, err)
		}
		rows, err := stmt.Query(args...)
		if err != nil {
			return nil, Describe(s.Path, err)
		}
		return rows, nil
	}
	rows, err := s.tx.Query(query, args...)
	if err != nil {
		return nil, Describe(s.Path, err)
	}
	return rows, nil
}

// Prepare prepares a statement in the snapshot, for a query run once per
// row: parsed once, not once a row. The caller closes it.
func (s *Snapshot) Prepare(query string) (*sql.Stmt, error) {
	if s.held != nil {
		stmt, err := s.held.conn.PrepareContext(context.Background(), query)
		if err != nil {
			return nil, Describe(s.Path, err)
		}
		return stmt, nil
	}
	stmt, err := s.tx.Prepare(query)
	if err != nil {
		return nil, Describe(s.Path, err)
	}
	return stmt, nil
}

// Schema is the columns of the tables a read asked for, as one query
// found them (see Snapshot.Schema).
type Schema struct {
	path   string
	tables map[string]map[string]bool
	views  map[string]bool
}

// Schema reads the columns of the named tables in one query, not one
// query per table and per question: each statement costs a read a parse,
// and a TeaParty home is a database per job. A table the store lacks is
// absent from the Schema. Only the named tables are looked at: a table
// the source does not read (a virtual table of a module this build lacks)
// cannot fail the read. A view of a named table's name is no table: it is
// noted (IsView), its columns are not read.
func (s *Snapshot) Schema(tables ...string) (Schema, error) {
	sc := Schema{path: s.Path, tables: map[string]map[string]bool{}, views: map[string]bool{}}
	if len(tables) == 0 {
		return sc, nil
	}
	args := make([]any, len(tables))
	for i, t := range tables {
		args[i] = t
	}
	marks := strings.Repeat(", ?", len(tables))[2:]
	rows, err := s.Query(`SELECT m.name, p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p
		WHERE m.type = 'table' AND m.name IN (`+marks+`)
		UNION ALL SELECT name, NULL FROM sqlite_master WHERE type = 'view' AND name IN (`+marks+`)`, append(args, args...)...)
	if err != nil {
		return Schema{}, err
	}
	defer rows.Close()
	for rows.Next() {
		var table string
		var col sql.NullString
		if err := rows.Scan(&table, &col); err != nil {
			return Schema{}, Describe(s.Path, err)
		}
		if !col.Valid {
			sc.views[table] = true
			continue
		}
		if sc.tables[table] == nil {
			sc.tables[table] = map[string]bool{}
		}
		sc.tables[table][col.String] = true
	}
	if err := rows.Err(); err != nil {
		return Schema{}, Describe(s.Path, err)
	}
	return sc, nil
}

// SelectTable reads the schema of table and of the other tables named
// (also), checks that table has the required columns, and queries every
// column of columns it has (those it lacks read as NULL), ordered by
// orderBy: the one read of a store's main table every SQLite source makes.
// The schema is returned for what the source reads beside it.
func (s *Snapshot) SelectTable(table string, required []string, columns []Column, orderBy string, also ...string) (Schema, *sql.Rows, error) {
	schema, err := s.Schema(append([]string{table}, also...)...)
	if err != nil {
		return Schema{}, nil, err
	}
	cols, err := schema.Require(table, required)
	if err != nil {
		return Schema{}, nil, err
	}
	rows, err := s.Query(SelectQuery(table, cols, columns, orderBy))
	if err != nil {
		return Schema{}, nil, err
	}
	return schema, rows, nil
}

// SelectQuery is SelectTable's statement: columns of table as Select
// gives them, ordered by orderBy ("": in the table's order, which a reader
// that sorts its rows itself asks for; SQLite's sorter costs a thousand
// rows more than their read).
func SelectQuery(table string, have map[string]bool, columns []Column, orderBy string) string {
	query := `SELECT ` + Select(have, columns) + ` FROM ` + table
	if orderBy != "" {
		query += ` ORDER BY ` + orderBy
	}
	return query
}

// Has reports whether the store holds the table.
func (sc Schema) Has(table string) bool { return sc.tables[table] != nil }

// IsView reports whether the name is the store's view, not a table.
func (sc Schema) IsView(name string) bool { return sc.views[name] }

// Columns are the column names of table, nil when the store lacks it.
func (sc Schema) Columns(table string) map[string]bool { return sc.tables[table] }

// Require is the column names of table, or an error naming the file when
// the table is absent, is a view, or lacks one of the required columns (an
// unknown schema).
func (sc Schema) Require(table string, required []string) (map[string]bool, error) {
	cols := sc.tables[table]
	if cols == nil && sc.views[table] {
		return nil, fmt.Errorf("read %s: unknown schema: %q is a view, not a table", sc.path, table)
	}
	if cols == nil {
		return nil, fmt.Errorf("read %s: no table %q", sc.path, table)
	}
	return cols, require(sc.path, table, cols, required)
}

// require returns an error naming the file and the columns of table that
// the store lacks, nil when it has them all.
func require(path, table string, cols map[string]bool, required []string) error {
	var missing []string
	for _, c := range required {
		if !cols[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("read %s: unknown schema: table %q lacks column %s", path, table, strings.Join(missing, ", "))
}

// sqlError is SQLite's result code for an error in the SQL itself.
const sqlError = 1

// tooBig is SQLite's result code for a string or a blob over its length
// limit (SQLITE_TOOBIG).
const tooBig = 18

// IsTooBig reports whether err is SQLite's SQLITE_TOOBIG: a value a query
// made (a row gathered into one string) is over its length limit.
func IsTooBig(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == tooBig
}

// IsSQLError reports whether err is SQLite's error in the SQL itself
// (SQLITE_ERROR): a statement naming a table or a column the store lacks,
// among others. A locked, corrupt or unreadable store is not one, so a
// read that asks again on such an error does not wait on a lock twice.
func IsSQLError(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlError
}

// Describe makes err one line that names the file, keeping the driver's
// own words (which say "file is not a database", "database is locked").
func Describe(path string, err error) error {
	if strings.HasPrefix(err.Error(), "read "+path+":") {
		return err
	}
	return fmt.Errorf("read %s: %w", path, err)
}

// Column is one column a source reads: its name, the type it is read as,
// and what a store without it (an older schema the system migrates in
// place) reads instead.
type Column struct {
	Name, Type, Default string
}

// Select builds the column list of a query. A column the store has is
// cast to its type, so that a value of another type (SQLite stores what it
// is given) reads as that type instead of failing the whole read: a text
// in an INTEGER column reads as 0. A NULL stays NULL unless the column
// has a default. A column the store lacks reads as its default. A name
// is quoted in brackets, never in double quotes: SQLite reads a "name"
// that is no column as a string, and a query naming a column the store
// lacks must fail, not read the name.
func Select(have map[string]bool, cols []Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		switch {
		case !have[c.Name]:
			parts[i] = c.Default
			if parts[i] == "" {
				parts[i] = "NULL"
			}
		case c.Default != "":
			parts[i] = fmt.Sprintf(`IFNULL(CAST([%s] AS %s), %s)`, c.Name, c.Type, c.Default)
		default:
			parts[i] = fmt.Sprintf(`CAST([%s] AS %s)`, c.Name, c.Type)
		}
	}
	return strings.Join(parts, ", ")
}

// Shared holds one copy of each value read of the columns most rows
// share a value of (a type, a state, a repo): a million rows hold a few
// strings, not a million copies, and the nodes made of them keep those.
type Shared map[string]string

// maxShared bounds the values a Shared holds: a column whose values
// differ from row to row would gain nothing and cost a map as large as
// the store.
const maxShared = 4096

// Share replaces *s with the copy Shared holds of its value, keeping *s
// as that copy when it is the first (while it holds fewer than maxShared).
func (sh Shared) Share(s *string) {
	if v, ok := sh[*s]; ok {
		*s = v
		return
	}
	if len(sh) < maxShared {
		sh[*s] = *s
	}
}
