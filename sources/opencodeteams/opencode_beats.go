package opencodeteams

import (
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/internal/sqlitestore"
)

// An agent's sessionId names its session in the OpenCode server it is
// attached to, and OpenCode bumps that session's time_updated
// (Date.now(), ms) on every update of it (docs/sources.md, OpenCode): a
// beat the agent's own record, rewritten only at activation and when it
// calls the heartbeat tool, does not give. The database is OpenCode's at
// its default place, or the one Lookup names; read-only, one query a
// read, and only when some agent names a session.

// opencodeDBFile is OpenCode's database in its data directory.
const opencodeDBFile = "opencode.db"

// opencodeDB is the OpenCode database the agents' sessions are looked up
// in: Lookup's, else $XDG_DATA_HOME/opencode/opencode.db, else
// ~/.local/share/opencode/opencode.db ("" when neither can be told).
func (l *Lookup) opencodeDB() string {
	if l != nil && l.OpencodeDB != "" {
		return l.OpencodeDB
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "opencode", opencodeDBFile)
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "share", "opencode", opencodeDBFile)
}

// sessionBeats gives each agent whose session OpenCode's database holds
// that session's time_updated as its beat, when newer than its record's.
// No database there is no problem (OpenCode may keep it elsewhere, or run
// on another host); one that cannot be read is, naming it.
//
// A node is given its beat on a copy, which replaces it in nodes: the node
// itself may be the last read's, kept, and a read that gave it the beat
// in place gave it another "session updated" field at every read. last
// are the copies the last read made, by the node they copied and the time
// they were given; a node given the same time again is given that copy.
// It returns this read's.
func (s Source) sessionBeats(nodes []*model.Node, facts *sources.Facts, last map[*model.Node]beaten) map[*model.Node]beaten {
	if s.Lookup != nil && s.Lookup.RecordsOnly {
		return nil
	}
	// The database is looked for before the agents' sessions are
	// gathered: with none there, a read does not go through a thousand
	// agents' fields for nothing.
	db := s.Lookup.opencodeDB()
	if db == "" {
		return nil
	}
	if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	bySession := map[string][]int{}
	for i, n := range nodes {
		if id := sessionOf(n); id != "" {
			bySession[id] = append(bySession[id], i)
		}
	}
	if len(bySession) == 0 {
		return nil
	}
	updated, err := readSessionsUpdated(db, bySession)
	if err != nil {
		facts.Problems = append(facts.Problems, model.Problem{Path: db,
			Error: err.Error() + ": the agents' OpenCode sessions give no beat"})
		return nil
	}
	next := make(map[*model.Node]beaten, len(updated))
	for id, t := range updated {
		for _, i := range bySession[id] {
			base := nodes[i]
			if b, ok := last[base]; ok && b.at.Equal(t) {
				nodes[i], next[base] = b.node, b
				continue
			}
			c := *base
			c.EditRare(func(r *model.Rare) {
				r.SourceFields = append(r.SourceFields, model.Field{Name: "session updated", Value: formatTime(t)})
			})
			if t.After(c.BeatMtime) {
				c.BeatMtime, c.ActivityMtime = t, t
				c.Traits.SignOfLife = model.SignActivity
			}
			nodes[i], next[base] = &c, beaten{at: t, node: &c}
		}
	}
	return next
}

// beaten is a node given its session's beat: the copy, and the time.
type beaten struct {
	at   time.Time
	node *model.Node
}

// sessionOf is the OpenCode session an agent node names ("" none).
func sessionOf(n *model.Node) string {
	if n.Source != string(sources.OpencodeTeams) {
		return ""
	}
	for _, f := range n.SourceFields() {
		if f.Name == "session" {
			return f.Value
		}
	}
	return ""
}

// readSessionsUpdated reads time_updated of the sessions named, in one
// read transaction that never blocks OpenCode's writer.
func readSessionsUpdated(db string, ids map[string][]int) (map[string]time.Time, error) {
	snap, err := sqlitestore.Open(db, 0)
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	args := make([]any, 0, len(ids))
	for id := range ids {
		args = append(args, id)
	}
	rows, err := snap.Query(`SELECT id, time_updated FROM session WHERE id IN (?`+strings.Repeat(",?", len(args)-1)+`)`, args...)
	if err != nil {
		return nil, sqlitestore.Describe(snap.Path, err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var id string
		var ms sql.NullInt64
		if err := rows.Scan(&id, &ms); err != nil {
			return nil, sqlitestore.Describe(snap.Path, err)
		}
		if ms.Valid && ms.Int64 > 0 {
			out[id] = time.UnixMilli(ms.Int64)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, sqlitestore.Describe(snap.Path, err)
	}
	return out, nil
}
