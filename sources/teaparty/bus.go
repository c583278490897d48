package teaparty

// Reading one bus: its `conversations` rows, each waiting row's question and
// each conversation's newest message, in one short transaction.

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources/internal/sqlitestore"
)

// requiredColumns are those of TeaParty's CREATE TABLE: a table without
// them is not its bus. The later columns it adds in place by ALTER TABLE
// may be missing from a database no TeaParty has opened since; they read
// as the defaults those ALTERs give.
var requiredColumns = []string{"id", "type", "state", "created_at"}

// messageColumns are those of TeaParty's messages table, which it creates
// with them all on every open of a bus and has never altered: a table
// without them is not its bus, whether or not a read needs its messages.
var messageColumns = []string{"id", "conversation", "sender", "content", "timestamp"}

var columns = []sqlitestore.Column{
	{Name: "id", Type: "TEXT", Default: "''"},
	{Name: "type", Type: "TEXT", Default: "''"},
	{Name: "state", Type: "TEXT", Default: "''"},
	{Name: "created_at", Type: "REAL", Default: "0.0"},
	{Name: "awaiting_input", Type: "INTEGER", Default: "0"},
	{Name: "agent_name", Type: "TEXT", Default: "''"},
	{Name: "parent_conversation_id", Type: "TEXT", Default: "''"},
	{Name: "request_id", Type: "TEXT", Default: "''"},
	{Name: "project_slug", Type: "TEXT", Default: "''"},
	{Name: "worktree_path", Type: "TEXT", Default: "''"},
	{Name: "pid", Type: "INTEGER", Default: "0"},
	{Name: "pid_started", Type: "REAL", Default: "0.0"},
}

// row is one conversation as the bus holds it.
type row struct {
	id, typ, state     string
	createdAt          float64
	awaitingInput      bool
	agent, parent      string
	requestID, project string
	worktree           string
	pid                int
	pidStarted         float64
	question           *model.Blocked // awaiting_input: the last message not from a human
	pidFrom            string         // the database the pid was read from, when not the row's
	lastMessage        float64        // the newest message of the conversation (epoch seconds)
	bus                *bus           // shared by the rows of a bus
	// key is the row's key (see key), made once a read, before the rows
	// are mapped: its children's ParentHeartbeat share it, not a copy each.
	key string
}

// currentQuery reads the conversations of a bus with every column read,
// as is every bus a current TeaParty has opened (it adds the missing ones
// on every open): one statement, asked with no look at the schema first.
// It checks the rest of what TeaParty made, at no cost per row (its
// subqueries name no column of the row, so SQLite runs each once): the
// messages table has its columns, or the statement fails, as one naming a
// column a bus lacks does; conversations and messages are tables, or it
// reads no row. A statement that fails, or reads none, is then told by
// the schema from a bus of another schema, or an empty one.
var currentQuery = func() string {
	all := map[string]bool{}
	for _, c := range columns {
		all[c.Name] = true
	}
	return `SELECT ` + sqlitestore.Select(all, columns) + `, ` + nullColumns(all) + ` FROM ` + table +
		` WHERE (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('` + table + `', '` + messagesTable + `')) = 2` +
		` AND NOT EXISTS (SELECT [` + strings.Join(messageColumns, `], [`) + `] FROM ` + messagesTable + ` WHERE 0)` +
		` ORDER BY id`
}()

// nullColumns are the last two columns of a conversations query: the
// name of the row's first column that is NULL, and the row's rowid, both
// NULL when no column is (a NULL scans with no allocation; a rowid would
// cost one a row). TeaParty declares them all NOT NULL; one that is costs
// its row at most (see nullAt). have are the columns the store has (the
// id always).
func nullColumns(have map[string]bool) string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, c := range columns {
		if have[c.Name] {
			b.WriteString(" WHEN [" + c.Name + "] IS NULL THEN '" + c.Name + "'")
		}
	}
	first := b.String() + " END"
	// Named short: the driver copies every column's name once a query.
	return first + " AS first_null, CASE WHEN " + first + " IS NOT NULL THEN rowid END AS null_rowid"
}

// nullAt is the problem of a NULL a read met in one row: the row is read
// with the column's default, or skipped when nothing can name it, and the
// rest of the bus is read on.
func nullAt(path, table string, rowid int64, column string) model.Problem {
	return model.Problem{Path: path, Error: fmt.Sprintf("read %s: table %s, row %d: %s is NULL", path, table, rowid, column)}
}

// read reads the conversations of one bus in one short transaction. The
// bus's schema is read only when a statement names what the bus lacks (an
// older bus, a partial one, a database that is no bus): it then says what
// to read instead, or what is missing. nulls are the rows a NULL cost.
//
// A read that keeps what it read for the next (held) runs on the bus's
// held connection (sqlitestore.Held): the next commit's read costs its
// queries, not an open and a prepare. mark is then the bus's commit mark
// taken before the read ("": not known; see sqlitestore.Snapshot); and a
// bus whose mark is still since, nothing committed since, is not read
// (moved false).
func (s *Source) read(b bus, held bool, since string) (out []*row, nulls []model.Problem, mark string, moved bool, err error) {
	if !held {
		snap, err := sqlitestore.Open(b.path, s.BusyTimeout)
		if err != nil {
			return nil, nil, "", true, err
		}
		defer snap.Close()
		out, nulls, err = s.readSnapshot(snap, b)
		return out, nulls, "", true, err
	}
	moved, err = s.held.ReadIfMoved(b.path, s.BusyTimeout, since, func(snap *sqlitestore.Snapshot) error {
		out, nulls, err = s.readSnapshot(snap, b)
		mark = snap.Mark
		return err
	})
	if err != nil {
		return nil, nil, "", true, err
	}
	return out, nulls, mark, moved, nil
}

// readSnapshot reads the conversations of one bus in the read snap.
func (s *Source) readSnapshot(snap *sqlitestore.Snapshot, b bus) (out []*row, nulls []model.Problem, err error) {
	var schema *sqlitestore.Schema
	schemaOf := func() (sqlitestore.Schema, error) {
		if schema == nil {
			sc, err := snap.Schema(table, messagesTable)
			if err != nil {
				return sqlitestore.Schema{}, err
			}
			schema = &sc
		}
		return *schema, nil
	}
	rows, err := snap.Query(currentQuery)
	if sqlitestore.IsSQLError(err) {
		rows, err = queryAsSchemaSays(snap, schemaOf)
	}
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	// The columns most rows share a value of (a type, a state, an agent,
	// a project) hold one copy of each value, not one a row: the nodes
	// keep them.
	shared := sqlitestore.Shared{}
	// The scan's own targets, declared once: each escapes to the heap,
	// and once a read costs less than once a row.
	var awaiting, pid int64
	var null sql.NullString
	var rowid sql.NullInt64
	for rows.Next() {
		r := &row{bus: &b}
		if err := rows.Scan(&r.id, &r.typ, &r.state, &r.createdAt, &awaiting, &r.agent, &r.parent,
			&r.requestID, &r.project, &r.worktree, &pid, &r.pidStarted, &null, &rowid); err != nil {
			return nil, nil, sqlitestore.Describe(snap.Path, err)
		}
		if null.Valid {
			nulls = append(nulls, nullAt(snap.Path, table, rowid.Int64, null.String))
			if null.String == "id" {
				continue
			}
		}
		shared.Share(&r.typ)
		shared.Share(&r.state)
		shared.Share(&r.agent)
		shared.Share(&r.project)
		r.awaitingInput = awaiting != 0
		r.pid = int(pid)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, sqlitestore.Describe(snap.Path, err)
	}
	rows.Close()
	if len(out) == 0 {
		// No row: an empty bus, or one whose tables are views.
		sc, err := schemaOf()
		if err != nil {
			return nil, nil, err
		}
		if _, err := busColumns(sc); err != nil {
			return nil, nil, err
		}
		return out, nulls, nil
	}
	// The messages are read only for the rows that show them; a bus
	// without messages has no questions and no message times.
	for _, readMessages := range []func(*sqlitestore.Snapshot, []*row, *[]model.Problem) error{readLastMessages, readQuestions} {
		err := readMessages(snap, out, &nulls)
		if sqlitestore.IsSQLError(err) {
			sc, serr := schemaOf()
			if serr != nil {
				return nil, nil, serr
			}
			if !sc.Has(messagesTable) {
				return out, nulls, nil
			}
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return out, nulls, nil
}

// queryAsSchemaSays queries the conversations of a bus that lacks a
// column currentQuery reads: a column TeaParty added later reads as the
// default its ALTER gives; a bus without the table or one of the columns
// of its CREATE TABLE is an unknown schema (see busColumns).
func queryAsSchemaSays(snap *sqlitestore.Snapshot, schemaOf func() (sqlitestore.Schema, error)) (*sql.Rows, error) {
	schema, err := schemaOf()
	if err != nil {
		return nil, err
	}
	cols, err := busColumns(schema)
	if err != nil {
		return nil, err
	}
	return snap.Query(`SELECT ` + sqlitestore.Select(cols, columns) + `, ` + nullColumns(cols) + ` FROM ` + table + ` ORDER BY id`)
}

// busColumns are the columns of a bus's conversations table, or why the
// store is no TeaParty bus: no conversations table, one without a column
// of its CREATE TABLE, a messages table without one of its, or either a
// view (TeaParty's open of such a bus fails: its ALTERs and its CREATE
// INDEX refuse a view, and it writes none). A bus without messages is an
// older one, whose rows have no messages to show.
func busColumns(schema sqlitestore.Schema) (map[string]bool, error) {
	cols, err := schema.Require(table, requiredColumns)
	if err != nil {
		return nil, err
	}
	if schema.Has(messagesTable) || schema.IsView(messagesTable) {
		if _, err := schema.Require(messagesTable, messageColumns); err != nil {
			return nil, err
		}
	}
	return cols, nil
}

// readQuestions fills the question of every row awaiting input: the last
// message of its conversation not sent by the human (TeaParty's
// check_message_bus_request reads the same), through one statement
// prepared for the first of them. A NULL in the message taken is added to
// nulls; the question then lacks what it lacks.
func readQuestions(snap *sqlitestore.Snapshot, rows []*row, nulls *[]model.Problem) error {
	var stmt *sql.Stmt
	for _, r := range rows {
		if !r.awaitingInput && !(r.typ == typeProxy && live(r.state)) {
			continue
		}
		if stmt == nil {
			var err error
			stmt, err = snap.Prepare(`SELECT rowid, substr(CAST(content AS TEXT), 1, ?), CAST(timestamp AS REAL), sender IS NULL FROM messages
				WHERE conversation = ? AND IFNULL(sender, '') <> 'human' ORDER BY timestamp DESC LIMIT 1`)
			if err != nil {
				return err
			}
			defer stmt.Close()
		}
		res, err := stmt.Query(maxQuestion, r.id)
		if err != nil {
			return sqlitestore.Describe(snap.Path, err)
		}
		q := &model.Blocked{Path: snap.Path + "#" + r.id}
		for res.Next() {
			var rowid int64
			var content sql.NullString
			var ts sql.NullFloat64
			var noSender bool
			if err := res.Scan(&rowid, &content, &ts, &noSender); err != nil {
				res.Close()
				return sqlitestore.Describe(snap.Path, err)
			}
			q.Question, q.Since = content.String, epochSeconds(ts.Float64)
			for _, c := range []struct {
				name string
				null bool
			}{{"content", !content.Valid}, {"timestamp", !ts.Valid}, {"sender", noSender}} {
				if c.null {
					*nulls = append(*nulls, nullAt(snap.Path, messagesTable, rowid, c.name))
					break
				}
			}
		}
		res.Close()
		r.question = q
	}
	return nil
}

// readLastMessages takes the time of each chat conversation's newest
// message: a conversation's turns leave no stream of their own in the bus.
// A bus without chat conversations (a job's) is not asked. Messages of no
// conversation (a NULL) are added to nulls, by the first of them.
func readLastMessages(snap *sqlitestore.Snapshot, rows []*row, nulls *[]model.Problem) error {
	if !slices.ContainsFunc(rows, chat) {
		return nil
	}
	res, err := snap.Query(`SELECT CAST(conversation AS TEXT), MAX(IFNULL(CAST(timestamp AS REAL), 0.0)), MIN(rowid) FROM messages GROUP BY conversation`)
	if err != nil {
		return err
	}
	defer res.Close()
	last := map[string]float64{}
	for res.Next() {
		var conv sql.NullString
		var ts float64
		var first int64
		if err := res.Scan(&conv, &ts, &first); err != nil {
			return sqlitestore.Describe(snap.Path, err)
		}
		if !conv.Valid {
			*nulls = append(*nulls, nullAt(snap.Path, messagesTable, first, "conversation"))
			continue
		}
		last[conv.String] = ts
	}
	if err := res.Err(); err != nil {
		return sqlitestore.Describe(snap.Path, err)
	}
	for _, r := range rows {
		r.lastMessage = last[r.id]
	}
	return nil
}

// epochSeconds converts TeaParty's REAL epoch seconds to a time.
func epochSeconds(s float64) time.Time {
	if !(s > 0) {
		return time.Time{}
	}
	return model.TimeOfEpochSeconds(s) // never wrapped
}
