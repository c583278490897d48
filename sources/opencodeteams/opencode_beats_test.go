package opencodeteams

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/opencode"
)

// opencodeDBWith writes OpenCode's database, as OpenCode creates it, with
// one session of that id last updated at updated.
func opencodeDBWith(t *testing.T, id string, updated time.Time) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "opencode", "opencode.db")
	db := storefixtures.NewDB(t, path, storefixtures.OpencodeDDL)
	if _, err := db.Exec("INSERT INTO project (id) VALUES ('p1')"); err != nil {
		t.Fatal(err)
	}
	ms := updated.UnixMilli()
	if _, err := db.Exec(`INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)
		VALUES (?, 'p1', 'brave-fox', '/home/dev/acme-api', 'builder-1', '1.1.0', ?, ?)`, id, ms-60000, ms); err != nil {
		t.Fatal(err)
	}
	return path
}

// The bonus of docs/sources.md, opencode-teams: an agent's sessionId names
// its OpenCode session, whose time_updated (written by a real SQLite
// writer) is a beat the agent's record does not give: newer, it is the
// node's beat and activity; older, or a session OpenCode does not hold,
// changes nothing; no database is no problem, one that cannot be read is
// a problem naming it; records alone ask nothing.
func TestOpencodeSessionIsTheAgentsBeat(t *testing.T) {
	rec := agentRecord()
	session := rec["sessionId"].(string)
	recordBeat := mustTime(rec["heartbeatTs"].(string))
	recent := time.Now().Add(-5 * time.Second).Truncate(time.Millisecond)
	cases := []struct {
		name        string
		db          func(t *testing.T) string
		recordsOnly bool
		wantBeat    time.Time
		wantField   bool
		wantProblem string
	}{
		{"its session updated since its record: the beat", func(t *testing.T) string { return opencodeDBWith(t, session, recent) },
			false, recent, true, ""},
		{"its session older than its record: the record's", func(t *testing.T) string {
			return opencodeDBWith(t, session, recordBeat.Add(-time.Hour))
		}, false, recordBeat, true, ""},
		{"a session OpenCode does not hold: the record's", func(t *testing.T) string { return opencodeDBWith(t, "ses_other", recent) },
			false, recordBeat, false, ""},
		{"no database there: the record's, no problem", func(t *testing.T) string { return filepath.Join(t.TempDir(), "opencode.db") },
			false, recordBeat, false, ""},
		{"a database that is no database: a problem naming it", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "opencode.db")
			if err := os.WriteFile(p, []byte("not sqlite at all, not even close to a header"), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, false, recordBeat, false, "give no beat"},
		{"records alone: not asked", func(t *testing.T) string { return opencodeDBWith(t, session, recent) },
			true, recordBeat, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := newStore(t, rec)
			db := c.db(t)
			src := Source{Lookup: &Lookup{OpencodeDB: db, SocketDir: t.TempDir(), RecordsOnly: c.recordsOnly}}
			facts := src.Read(store, time.Now())
			var n *model.Node
			for _, m := range facts.Nodes {
				if strings.HasSuffix(m.HeartbeatPath, rec["id"].(string)+".json") {
					n = m
				}
			}
			if n == nil {
				t.Fatalf("no agent node: %v", facts.Problems)
			}
			if !n.BeatMtime.Equal(c.wantBeat) {
				t.Errorf("beat %s, want %s", n.BeatMtime, c.wantBeat)
			}
			if got := field(n, "session updated") != "<absent>"; got != c.wantField {
				t.Errorf("session updated field shown %v, want %v", got, c.wantField)
			}
			problem := ""
			for _, p := range facts.Problems {
				if p.Path == db {
					problem = p.Error
				}
			}
			if c.wantProblem == "" && problem != "" || c.wantProblem != "" && !strings.Contains(problem, c.wantProblem) {
				t.Errorf("problem naming %s: %q, want %q", db, problem, c.wantProblem)
			}
		})
	}
}

// The default place is OpenCode's own data directory's database.
func TestOpencodeDBDefaultIsOpenCodes(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/srv/data")
	if got, want := (*Lookup)(nil).opencodeDB(), filepath.Join(opencode.DefaultStore(os.Getenv, ""), "opencode.db"); got != want {
		t.Errorf("opencodeDB %s, want %s", got, want)
	}
}

// A node kept from the last read is given its session's beat once: the
// reads that keep it do not add the "session updated" field again, and a
// session updated since is its beat; its facts are a whole read's.
func TestAKeptNodeIsGivenItsSessionsBeatOnce(t *testing.T) {
	rec := with(agentRecord(), "paneId", nil)
	other := with(agentRecord(), "id", "agent-2", "sessionId", "ses_other", "paneId", nil)
	session := rec["sessionId"].(string)
	store := newStore(t, rec, other)
	db := opencodeDBWith(t, session, time.Now().Add(-5*time.Second).Truncate(time.Millisecond))
	src := Source{Lookup: &Lookup{OpencodeDB: db, SocketDir: t.TempDir()}}
	otherFile := filepath.Join(store, agentsDir, "agent-2.json")
	_, k := src.Reread(store, time.Now(), nil, nil)
	for i := range 3 {
		var facts sources.Facts
		facts, k = src.Reread(store, time.Now(), k, []string{otherFile})
		for _, n := range facts.Nodes {
			if !strings.HasSuffix(n.HeartbeatPath, rec["id"].(string)+".json") {
				continue
			}
			count := 0
			for _, f := range n.SourceFields() {
				if f.Name == "session updated" {
					count++
				}
			}
			if count != 1 {
				t.Errorf("read %d: %d session updated fields, want 1", i+2, count)
			}
		}
		if whole := src.Read(store, time.Now()); !sameFacts(facts, whole) {
			t.Errorf("read %d: the facts differ from a whole read's", i+2)
		}
	}
}

// OpenCode's database is queried only when its commit mark moved (or an
// agent names a session not asked yet): a read after an agent's write, or
// a whole read, with the database as it was asks nothing and gives the
// beats it gave; a commit by OpenCode's writer (a real SQLite writer,
// WAL) is queried at the next read, and its beat given. Each read's facts
// are a whole read's.
func TestOpencodeDatabaseIsQueriedOnlyWhenItMoved(t *testing.T) {
	rec := with(agentRecord(), "paneId", nil)
	other := with(agentRecord(), "id", "agent-2", "sessionId", "ses_other", "paneId", nil)
	session := rec["sessionId"].(string)
	store := newStore(t, rec, other)
	first := time.Now().Add(-5 * time.Second).Truncate(time.Millisecond)
	db := opencodeDBWith(t, session, first)
	writer := storefixtures.NewDB(t, db, nil)
	src := Source{Lookup: &Lookup{OpencodeDB: db, SocketDir: t.TempDir()}}
	file := filepath.Join(store, agentsDir, rec["id"].(string)+".json")
	otherFile := filepath.Join(store, agentsDir, "agent-2.json")
	rewrite := func(m map[string]any, path string, set ...any) {
		b, err := json.MarshalIndent(with(m, set...), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, path, b)
	}
	later := first.Add(2 * time.Second)
	tests := []struct {
		name    string
		act     func()
		changed []string
		queries int // asked of the database by this read
		beat    time.Time
	}{
		{name: "the first read", act: func() {}, changed: nil, queries: 1, beat: first},
		{name: "an agent's write, the database as it was", act: func() { rewrite(other, otherFile, "status", "idle") },
			changed: []string{otherFile}, queries: 0, beat: first},
		{name: "the session's own agent written", act: func() { rewrite(rec, file, "status", "idle") },
			changed: []string{file}, queries: 0, beat: first},
		{name: "a whole read, the database as it was", act: func() {}, changed: nil, queries: 0, beat: first},
		{name: "OpenCode commits: queried", act: func() {
			if _, err := writer.Exec(`UPDATE session SET time_updated = ? WHERE id = ?`, later.UnixMilli(), session); err != nil {
				t.Fatal(err)
			}
			rewrite(other, otherFile, "status", "active")
		}, changed: []string{otherFile}, queries: 1, beat: later},
		{name: "then as it was: not", act: func() { rewrite(other, otherFile, "status", "idle") },
			changed: []string{otherFile}, queries: 0, beat: later},
		{name: "an agent naming a session not asked yet: that one asked", act: func() { rewrite(other, otherFile, "sessionId", "ses_new") },
			changed: []string{otherFile}, queries: 1, beat: later},
	}
	var k sources.Kept
	asked := 0
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.act()
			var facts sources.Facts
			facts, k = src.Reread(store, time.Now(), k, tc.changed)
			if got := k.(*kept).beats.queries - asked; got != tc.queries {
				t.Errorf("queries %d, want %d", got, tc.queries)
			}
			asked = k.(*kept).beats.queries
			var n *model.Node
			for _, m := range facts.Nodes {
				if m.HeartbeatPath == file {
					n = m
				}
			}
			if n == nil || !n.BeatMtime.Equal(tc.beat) {
				t.Fatalf("the agent's beat: %v, want %s", n, tc.beat)
			}
			if whole := src.Read(store, time.Now()); !sameFacts(facts, whole) {
				t.Errorf("the facts differ from a whole read's")
			}
		})
	}
}
