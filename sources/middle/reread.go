package middle

// Reading again after a commit (sources.Rereader): middle updates its rows
// in place and bumps updated_at on every write of a row
// (workflow-record.ts updateWorkflow, the watchdog's beat), so a commit's
// rows are those past the last read's newest updated_at: they are read,
// the others kept with their nodes. What a watermark cannot see is told by
// the store's mark (mark): a row inserted or deleted, the retention's
// archive stamp (which leaves updated_at as it was), an event deleted, a
// clock stepped back; any of these reads the table whole.

import (
	"errors"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/internal/sqlitestore"
)

var _ sources.Rereader = (*Source)(nil)

// updatedAt is the column a read past the watermark compares, read as the
// whole read reads it.
const updatedAt = `IFNULL(CAST([updated_at] AS INTEGER), 0)`

// errNoRow is a query of one row that answered none.
var errNoRow = errors.New("no row")

// mark is what says, in one look at the store, whether a read past the
// watermark can see everything that moved since the last read.
type mark struct {
	rows      int64   // the workflows' count
	rowids    float64 // the sum of their rowids: one deleted and one inserted moves it
	archived  int64   // the rows stamped archived (an update that keeps updated_at)
	updated   int64   // the newest updated_at: the watermark
	events    int64   // the events' count (0 without the table)
	lastEvent int64   // the newest event's rowid
}

// readMark reads the store's mark; cols are the workflows' columns, events
// whether the store has its events table.
func readMark(snap *sqlitestore.Snapshot, cols map[string]bool, events bool) (mark, error) {
	archived := "0"
	if cols["archived_at"] {
		archived = "count([archived_at])"
	}
	q := `SELECT count(*), total(rowid), ` + archived + `, IFNULL(max(` + updatedAt + `), 0) FROM ` + table
	if events {
		q = `SELECT * FROM (` + q + `), (SELECT count(*), IFNULL(max(rowid), 0) FROM ` + eventsTable + `)`
	} else {
		q = `SELECT *, 0, 0 FROM (` + q + `)`
	}
	var m mark
	if err := scanOne(snap, q, &m.rows, &m.rowids, &m.archived, &m.updated, &m.events, &m.lastEvent); err != nil {
		return mark{}, err
	}
	return m, nil
}

// scanOne runs a query of one row into dest.
func scanOne(snap *sqlitestore.Snapshot, q string, dest ...any) error {
	rows, err := snap.Query(q)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return sqlitestore.Describe(snap.Path, err)
		}
		return sqlitestore.Describe(snap.Path, errNoRow)
	}
	if err := rows.Scan(dest...); err != nil {
		return sqlitestore.Describe(snap.Path, err)
	}
	return rows.Err()
}

// kept is what a read keeps for the next: the whole read's tables and
// mark, the rows as read, and per row its parent's key, its pane and its
// node.
type kept struct {
	path    string
	whole   whole
	index   map[string]int // a row's index, by id
	parents []string
	panes   []pane
	nodes   []*model.Node
}

// Reread reads the store again (sources.Rereader): told that its
// database or -wal moved, it reads the rows past the watermark, the
// events past the last one read (all of a row that has one: the latest
// wins) and the armed signals, and maps again only the rows whose facts
// may have moved (their row, their Epic's newest round, their pane). Told
// nothing (a refresh, lost events), it reads the store whole, as a read
// whose mark moved does.
func (s *Source) Reread(root string, now time.Time, k sources.Kept, changed []string) (sources.Facts, sources.Kept) {
	path := dbPath(root)
	last, _ := k.(*kept)
	if last != nil && last.path != path {
		last = nil
	}
	if last != nil && changed != nil && len(changed) == 0 {
		return last.facts(), last
	}
	if last != nil && changed != nil {
		if next, ok, err := s.readPast(last); err != nil {
			return sources.Facts{Problems: []model.Problem{{Path: path, Error: err.Error()}}}, nil
		} else if ok {
			return next.facts(), next
		}
	}
	r, err := s.readWhole(path, true)
	if err != nil {
		return sources.Facts{Problems: []model.Problem{{Path: path, Error: err.Error()}}}, nil
	}
	next := &kept{path: path, whole: r}
	next.index = make(map[string]int, len(r.rows))
	for i, w := range r.rows {
		w.key = key(path, w)
		next.index[w.id] = i
	}
	next.mapRows(s, nil)
	return next.facts(), next
}

// readPast reads what moved since last in one short transaction: false
// when the store's mark says a read past the watermark would miss some of
// it (the caller reads the store whole).
func (s *Source) readPast(last *kept) (next *kept, ok bool, err error) {
	s.queries.Add(1)
	err = s.held.Read(last.path, s.BusyTimeout, func(snap *sqlitestore.Snapshot) error {
		next, ok, err = s.readPastIn(snap, last)
		return err
	})
	return next, ok, err
}

// readPastIn is readPast in snap.
func (s *Source) readPastIn(snap *sqlitestore.Snapshot, last *kept) (*kept, bool, error) {
	lw := last.whole
	m, err := readMark(snap, lw.cols, lw.events)
	if sqlitestore.IsSQLError(err) {
		return nil, false, nil // the schema moved
	}
	if err != nil {
		return nil, false, err
	}
	lm := lw.mark
	if m.rows != lm.rows || m.rowids != lm.rowids || m.archived != lm.archived || m.updated < lm.updated || m.lastEvent < lm.lastEvent {
		return nil, false, nil
	}
	res, err := snap.Query(`SELECT `+sqlitestore.Select(lw.cols, columns)+` FROM `+table+` WHERE `+updatedAt+` >= ? ORDER BY created_at, rowid`, lm.updated)
	if err != nil {
		return nil, false, err
	}
	moved, err := s.scan(snap, res)
	if err != nil {
		return nil, false, err
	}
	next := &kept{path: last.path, whole: lw, index: last.index, parents: last.parents, panes: last.panes, nodes: last.nodes}
	next.whole.mark = m
	next.whole.rows = append([]*workflow(nil), lw.rows...)
	// copyOf is the next read's own copy of row i, made once.
	copied := map[int]bool{}
	copyOf := func(i int) *workflow {
		if !copied[i] {
			c := *next.whole.rows[i]
			next.whole.rows[i], copied[i] = &c, true
		}
		return next.whole.rows[i]
	}
	for _, w := range moved {
		i, ok := last.index[w.id]
		if !ok || lw.rows[i].created != w.created {
			return nil, false, nil // an id rewritten, a row moved in the order
		}
		o := lw.rows[i]
		w.watchdogReason, w.orphanFinalized, w.gateFailed, w.signal, w.key = o.watchdogReason, o.orphanFinalized, o.gateFailed, o.signal, o.key
		if *w != *o {
			next.whole.rows[i], copied[i] = w, true
		}
	}
	if lw.events && m.events != lm.events {
		// Events past the last read, of rows that must read all theirs
		// again; any other count than theirs added means some were deleted.
		var added int64
		ids := map[string]bool{}
		res, err := snap.Query(`SELECT workflow_id, type IN ('watchdog.failed', 'daemon.orphan-finalized', 'gate.failed') FROM `+eventsTable+` WHERE rowid > ?`, lm.lastEvent)
		if err != nil {
			return nil, false, err
		}
		for res.Next() {
			var id string
			var counts bool
			if err := res.Scan(&id, &counts); err != nil {
				res.Close()
				return nil, false, sqlitestore.Describe(snap.Path, err)
			}
			added++
			if _, ok := last.index[id]; ok && counts {
				ids[id] = true
			}
		}
		res.Close()
		if err := res.Err(); err != nil {
			return nil, false, sqlitestore.Describe(snap.Path, err)
		}
		if m.events != lm.events+added {
			return nil, false, nil
		}
		if len(ids) > 0 {
			byID := map[string]*workflow{}
			args := make([]any, 0, len(ids))
			for id := range ids {
				w := copyOf(last.index[id])
				w.watchdogReason, w.orphanFinalized, w.gateFailed = "", "", ""
				byID[id] = w
				args = append(args, id)
			}
			if err := readEvents(snap, byID, ` AND workflow_id IN (`+strings.Repeat(", ?", len(args))[2:]+`)`, args...); err != nil {
				return nil, false, err
			}
		}
	}
	if lw.signalCols != nil {
		signals, err := readSignals(snap, lw.signalCols)
		if err != nil {
			return nil, false, err
		}
		for i, w := range next.whole.rows {
			if signals[w.id] != w.signal {
				copyOf(i).signal = signals[w.id]
			}
		}
	}
	for i := range copied {
		if *next.whole.rows[i] == *lw.rows[i] {
			next.whole.rows[i] = lw.rows[i] // read again, the same
		}
	}
	next.mapRows(s, last)
	return next, true, nil
}

// mapRows makes the nodes of the rows: every one (last nil), or those
// whose row, parent or pane is not last's.
func (k *kept) mapRows(s *Source, last *kept) {
	rows := k.whole.rows
	parents := make([]string, len(rows))
	for i, newest := range newestRounds(rows) {
		if newest != nil && newest != rows[i] {
			parents[i] = newest.key
		}
	}
	panes := make([]pane, len(rows))
	if byRow := s.panes(rows); len(byRow) > 0 {
		for i, w := range rows {
			panes[i] = byRow[w]
		}
	}
	nodes := make([]*model.Node, len(rows))
	for i, w := range rows {
		if last != nil && w == last.whole.rows[i] && parents[i] == last.parents[i] && panes[i] == last.panes[i] {
			nodes[i] = last.nodes[i]
			continue
		}
		nodes[i] = node(k.path, w, parents[i], panes[i])
	}
	k.parents, k.panes, k.nodes = parents, panes, nodes
}

// facts are the kept nodes.
func (k *kept) facts() sources.Facts {
	return sources.Facts{Nodes: append([]*model.Node(nil), k.nodes...)}
}
