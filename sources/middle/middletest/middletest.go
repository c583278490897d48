// Package middletest builds middle's database as middle itself migrates
// it: the reader's tests and the benchmarks write through it, so that
// every one of them reads the real schema.
package middletest

import (
	"database/sql"

	_ "modernc.org/sqlite" // the pure-Go driver, registered as "sqlite"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
)

// Migrations are middle's, those that shape the tables the reader reads,
// in the order middle applies them (packages/dispatcher/src/db/migrations/
// at commit cf356bae8056e4cac8c278ef24f6e1887d0d8868); openDb sets WAL
// first.
var Migrations = storefixtures.MiddleMigrations

// Open opens the database at path (its dir created if needed) for writing,
// through one connection, and runs ddl on it: Migrations for a database as
// middle creates it, nil for one that exists, a part of them for an older
// or a broken one.
func Open(path string, ddl []string) (*sql.DB, error) { return storefixtures.Open(path, ddl) }
