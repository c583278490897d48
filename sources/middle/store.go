package middle

// Reading the store: the workflows table in one short transaction, with
// the watchdog's events and the armed signals beside it.

import (
	"database/sql"
	"encoding/json"
	"strconv"
	"time"

	"github.com/dispatchtop/dispatchtop/sources/internal/sqlitestore"
)

// workflow is one row as middle writes it; times are epoch milliseconds.
type workflow struct {
	id, kind, repo, adapter, state string
	epicNumber                     sql.NullInt64
	epicRef                        sql.NullString
	created, updated               int64
	worktree, session, sessionID   sql.NullString
	transcript                     sql.NullString
	controlledBy                   string
	lastHeartbeat, archived        sql.NullInt64
	endReason                      sql.NullString
	// From the other tables, when they are there.
	watchdogReason  string // the latest watchdog.failed event's reason
	orphanFinalized string // the latest daemon.orphan-finalized event's finalState
	gateFailed      string // the latest gate.failed event's gate and exit code
	signal          string // the armed waitfor signal of a parked row
	// key is the row's key (see key), made once a read: the older rounds
	// of its Epic name it as their parent, sharing it, not a copy each.
	key string
}

// read reads the workflows of the store at path in one short transaction.
func (s *Source) read(path string) ([]*workflow, error) {
	r, err := s.readWhole(path, false)
	return r.rows, err
}

// whole is what a whole read of the store found: its rows, ordered by
// created_at and rowid, and what a read after a commit needs to read only
// what moved (the tables the store has, and its mark, when asked).
type whole struct {
	rows []*workflow
	// cols are the workflows table's columns, signalCols the signals
	// table's (nil: no such table); events says whether it has events.
	cols, signalCols map[string]bool
	events           bool
	mark             mark
}

// readWhole reads every row of the store at path, in one short
// transaction; marked, it reads the store's mark in it too.
func (s *Source) readWhole(path string, marked bool) (whole, error) {
	var r whole
	read := func(snap *sqlitestore.Snapshot) (err error) {
		r, err = s.readWholeIn(snap, marked)
		return err
	}
	s.queries.Add(1)
	var err error
	if marked {
		// A read kept for the next runs on the held connection.
		err = s.held.Read(path, s.BusyTimeout, read)
	} else {
		err = readOnce(path, s.BusyTimeout, read)
	}
	if err != nil {
		return whole{}, err
	}
	return r, nil
}

// readOnce runs read in a read of its own of the database at path.
func readOnce(path string, busy time.Duration, read func(*sqlitestore.Snapshot) error) error {
	snap, err := sqlitestore.Open(path, busy)
	if err != nil {
		return err
	}
	defer snap.Close()
	return read(snap)
}

// readWholeIn reads every row of the store in snap.
func (s *Source) readWholeIn(snap *sqlitestore.Snapshot, marked bool) (whole, error) {
	// rowid breaks a tie of created_at as middle's own lookups do.
	schema, rows, err := snap.SelectTable(table, requiredColumns, columns, "created_at, rowid", eventsTable, signalsTable)
	if err != nil {
		return whole{}, err
	}
	r := whole{cols: schema.Columns(table), signalCols: schema.Columns(signalsTable), events: schema.Has(eventsTable)}
	if r.rows, err = s.scan(snap, rows); err != nil {
		return whole{}, err
	}
	byID := make(map[string]*workflow, len(r.rows))
	for _, w := range r.rows {
		byID[w.id] = w
	}
	if r.events {
		if err := readEvents(snap, byID, ""); err != nil {
			return whole{}, err
		}
	}
	if r.signalCols != nil {
		signals, err := readSignals(snap, r.signalCols)
		if err != nil {
			return whole{}, err
		}
		for id, name := range signals {
			if w := byID[id]; w != nil {
				w.signal = name
			}
		}
	}
	if marked {
		if r.mark, err = readMark(snap, r.events); err != nil {
			return whole{}, err
		}
		r.mark.updated = newest(r.rows)
	}
	return r, nil
}

// scan reads the rows a query of the workflows table's columns answers,
// and closes them.
func (s *Source) scan(snap *sqlitestore.Snapshot, rows *sql.Rows) ([]*workflow, error) {
	defer rows.Close()
	var out []*workflow
	// The columns most rows share a value of hold one copy of each value,
	// not one a row: the nodes keep them.
	shared := sqlitestore.Shared{}
	for rows.Next() {
		w := &workflow{}
		if err := rows.Scan(&w.id, &w.kind, &w.repo, &w.epicNumber, &w.adapter, &w.state, &w.created, &w.updated,
			&w.worktree, &w.session, &w.sessionID, &w.transcript, &w.controlledBy, &w.lastHeartbeat,
			&w.epicRef, &w.archived, &w.endReason); err != nil {
			return nil, sqlitestore.Describe(snap.Path, err)
		}
		for _, s := range []*string{&w.kind, &w.repo, &w.adapter, &w.state, &w.controlledBy} {
			shared.Share(s)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, sqlitestore.Describe(snap.Path, err)
	}
	s.scanned.Add(int64(len(out)))
	return out, nil
}

// readEvents takes, of each row, the latest of the events that say why it
// ended: watchdog.failed's reason (the watchdog writes why it failed a row
// there, not in end_reason), daemon.orphan-finalized's finalState (a
// parked row whose execution was gone at the daemon's restart) and
// gate.failed's gate and exit code (a verify gate that failed on Stop),
// as middle records them (commit 2bbacdc: recovery.ts
// reconcileOrphanedSignals, build-deps.ts runVerifyGates).
func readEvents(snap *sqlitestore.Snapshot, byID map[string]*workflow, and string, args ...any) error {
	rows, err := snap.Query(`SELECT workflow_id, type, payload_json FROM events
		WHERE type IN ('watchdog.failed', 'daemon.orphan-finalized', 'gate.failed')`+and+` ORDER BY ts, id`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, typ string
		var payload sql.NullString
		if err := rows.Scan(&id, &typ, &payload); err != nil {
			return sqlitestore.Describe(snap.Path, err)
		}
		w := byID[id]
		var p struct {
			Reason     string `json:"reason"`
			FinalState string `json:"finalState"`
			GateName   string `json:"gateName"`
			ExitCode   *int   `json:"exitCode"`
		}
		if w == nil || json.Unmarshal([]byte(payload.String), &p) != nil {
			continue
		}
		switch {
		case typ == "watchdog.failed" && p.Reason != "":
			w.watchdogReason = p.Reason
		case typ == "daemon.orphan-finalized" && p.FinalState != "":
			w.orphanFinalized = p.FinalState
		case typ == "gate.failed" && p.GateName != "":
			w.gateFailed = p.GateName
			if p.ExitCode != nil {
				w.gateFailed += " (exit " + strconv.Itoa(*p.ExitCode) + ")"
			}
		}
	}
	return rows.Err()
}

// readSignals takes each parked row's armed signal (not fired): its name
// says what the human is asked for (`epic-<ref>-answered`,
// `blocked:<id>`: a question; `epic-<ref>-review-resolved`: a review).
// cols are the table's columns. It returns them by workflow, the newest
// armed of each.
func readSignals(snap *sqlitestore.Snapshot, cols map[string]bool) (map[string]string, error) {
	query := `SELECT workflow_id, signal_name FROM waitfor_signals`
	if cols["fired_at"] { // migration 002
		query += ` WHERE fired_at IS NULL`
	}
	rows, err := snap.Query(query + ` ORDER BY created_at`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, sqlitestore.Describe(snap.Path, err)
		}
		out[id] = name
	}
	if err := rows.Err(); err != nil {
		return nil, sqlitestore.Describe(snap.Path, err)
	}
	return out, nil
}
