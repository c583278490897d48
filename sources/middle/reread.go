package middle

// Reading again after a commit (sources.Rereader): middle updates its rows
// in place and bumps updated_at on every write of a row
// (workflow-record.ts updateWorkflow, the watchdog's beat), so a commit's
// rows are those past the last read's newest updated_at: they are read,
// the others kept with their nodes. What a watermark cannot see is told,
// where it is cheap to tell, by the store's mark (mark): a row inserted or
// deleted, an event inserted or deleted; these read the table whole, as a
// read past the watermark that finds no row at it does (a clock stepped
// back). The mark reads no row: counts and newest rowids are the b-trees'
// own. What it leaves to the refresh (a whole read every 15 s): the
// retention's archive stamp, which leaves updated_at as it was, and a row
// deleted while another is inserted under its rowid with an updated_at
// older than the watermark (middle stamps a new row with its own time).
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
	rows      int64 // the workflows' count
	lastRow   int64 // their newest rowid
	updated   int64 // the newest updated_at: the watermark (of the rows read, not of the mark's query)
	events    int64 // the events' count (0 without the table)
	lastEvent int64 // the newest event's rowid
}

// markQuery is the mark's query: counts and newest rowids, which SQLite
// answers from each table's b-tree without reading a row (a count(*) of a
// table alone, a max(rowid)); the watermark is taken of the rows read.
func markQuery(events bool) string {
	q := `SELECT (SELECT count(*) FROM ` + table + `), IFNULL((SELECT max(rowid) FROM ` + table + `), 0)`
	if events {
		return q + `, (SELECT count(*) FROM ` + eventsTable + `), IFNULL((SELECT max(rowid) FROM ` + eventsTable + `), 0)`
	}
	return q + `, 0, 0`
}

// readMark reads the store's mark (but its watermark); events says
// whether the store has its events table.
func readMark(snap *sqlitestore.Snapshot, events bool) (mark, error) {
	var m mark
	if err := scanOne(snap, markQuery(events), &m.rows, &m.lastRow, &m.events, &m.lastEvent); err != nil {
		return mark{}, err
	}
	return m, nil
}

// newest is the newest updated_at of rows (0 of none).
func newest(rows []*workflow) int64 {
	var n int64
	for _, w := range rows {
		n = max(n, w.updated)
	}
	return n
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
	m, err := readMark(snap, lw.events)
	if sqlitestore.IsSQLError(err) {
		return nil, false, nil // the schema moved
	}
	if err != nil {
		return nil, false, err
	}
	lm := lw.mark
	if m.rows != lm.rows || m.lastRow != lm.lastRow || m.lastEvent < lm.lastEvent {
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
	// The rows at the last watermark are read again, so some row is
	// found at it or past it unless one went back in time.
	if m.updated = newest(moved); len(moved) == 0 {
		return nil, false, nil
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
