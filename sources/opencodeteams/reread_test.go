package opencodeteams

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
)

// A write of one agent's file reads that file again, not the store: the
// other agents keep their nodes, and so does the team's leader, whose
// config did not move (a file written but not named as moved is not read,
// which is how the test knows), and the facts are those a whole read
// finds. Told that the agents dir moved (the poll, a refresh), every file
// is read again; told nothing moved, nothing is; told a team's config
// moved, its leader is made again.
func TestRereadReadsOnlyTheAgentFilesThatMoved(t *testing.T) {
	var agents []map[string]any
	for i := range 50 {
		agents = append(agents, with(agentRecord(), "id", fmt.Sprintf("agent-%02d", i), "paneId", nil))
	}
	store := newStore(t, agents...)
	dir := filepath.Join(store, agentsDir)
	config := filepath.Join(store, teamsDir, "alpha", teamConfigFile)
	file := func(i int) string { return filepath.Join(dir, fmt.Sprintf("agent-%02d.json", i)) }
	write := func(i int, set ...any) {
		b, err := json.MarshalIndent(with(agents[i], set...), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(dir, fmt.Sprintf(".agent-%02d.json.tmp", i))
		writeFile(t, tmp, b)
		if err := os.Rename(tmp, file(i)); err != nil {
			t.Fatal(err)
		}
	}
	facts, k := recordsOnly.Reread(store, fixtureNow, nil, nil)
	tests := []struct {
		name    string
		write   func()
		changed []string
		renewed []string // the agents whose nodes are new
		whole   bool     // the facts are a whole read's
	}{
		{name: "nothing moved", write: func() {}, changed: []string{}, whole: true},
		{name: "one agent's beat", write: func() { write(7, "heartbeatTs", "2026-02-11T10:04:59.000Z") },
			changed: []string{file(7), filepath.Join(dir, ".agent-07.json.tmp")}, renewed: []string{"agent-07"}, whole: true},
		{name: "two written, one named", write: func() {
			write(8, "status", "terminated")
			write(9, "status", "terminated")
		}, changed: []string{file(8)}, renewed: []string{"agent-08"}},
		{name: "the agents dir moved: every file", write: func() {}, changed: []string{dir}, renewed: []string{"agent-09"}, whole: true},
		{name: "a file removed", write: func() {
			if err := os.Remove(file(3)); err != nil {
				t.Fatal(err)
			}
		}, changed: []string{file(3)}, whole: true},
		{name: "a file broken", write: func() { writeFile(t, file(4), []byte(`{"id": 4`)) },
			changed: []string{file(4)}, whole: true},
		{name: "a team's config written, not named as moved: not read", write: func() {
			writeFile(t, config, []byte(strings.Replace(teamConfigJSON, `"leader":"lead-1",`, `"leader":"lead-1","description":"orders",`, 1)))
		}, changed: []string{file(10)}},
		{name: "the team's config named: read", write: func() {}, changed: []string{config}, renewed: []string{"alpha"}, whole: true},
		{name: "a new agent", write: func() {
			agents = append(agents, with(agentRecord(), "id", "agent-50", "paneId", nil))
			write(50)
		}, changed: []string{file(50)}, renewed: []string{"agent-50"}, whole: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := byID(facts.Nodes)
			tc.write()
			facts, k = recordsOnly.Reread(store, fixtureNow, k, tc.changed)
			var renewed []string
			for id, n := range byID(facts.Nodes) {
				if o := before[id]; o != nil && o != n {
					renewed = append(renewed, filepath.Base(id))
				} else if o == nil {
					renewed = append(renewed, filepath.Base(id))
				}
			}
			slices.Sort(renewed)
			if !slices.Equal(renewed, tc.renewed) {
				t.Errorf("nodes renewed %v, want %v", renewed, tc.renewed)
			}
			whole := recordsOnly.Read(store, fixtureNow)
			if got := sameFacts(facts, whole); got != tc.whole {
				t.Errorf("the facts are a whole read's: %v, want %v", got, tc.whole)
			}
		})
	}
}

// A write of one agent's file costs what that file costs, not what the
// store holds: the memory a read allocates after one file moved does not
// grow by a byte an agent from a store of 100 agents to one of 1,000.
// Copying the map of agents read, making the map of nodes again, sorting
// their paths again, naming each agent's node again and gathering every
// agent's session for a database that is not there each grew with the
// store; then the facts' list of nodes made again (8 bytes an agent), the
// teams' leaders made again, every agent's process judged again, and the
// sessions of OpenCode's database gathered and queried again though it
// had not moved.
func TestRereadOfOneFileDoesNotGrowWithTheStore(t *testing.T) {
	const perAgent = 1
	lookup := Source{Lookup: &Lookup{SocketDir: t.TempDir(), OpencodeDB: filepath.Join(t.TempDir(), "opencode.db")}}
	tests := []struct {
		name string
		src  func(t *testing.T, n int) Source
	}{
		{name: "records only", src: func(*testing.T, int) Source { return recordsOnly }},
		{name: "panes and servers looked up, no OpenCode database", src: func(*testing.T, int) Source { return lookup }},
		{name: "OpenCode's database holding the agents' sessions, not moved", src: func(t *testing.T, n int) Source {
			db := opencodeDBWith(t, "ses_0000", time.Now().Add(-time.Minute))
			w := storefixtures.NewDB(t, db, nil)
			for i := 1; i < n; i++ {
				if _, err := w.Exec(`INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)
					VALUES (?, 'p1', 'brave-fox', '/home/dev/acme-api', 'builder', '1.1.0', ?, ?)`, fmt.Sprintf("ses_%04d", i), 1, time.Now().UnixMilli()); err != nil {
					t.Fatal(err)
				}
			}
			return Source{Lookup: &Lookup{SocketDir: t.TempDir(), OpencodeDB: db}}
		}},
	}
	perRead := func(t *testing.T, src Source, n int) uint64 {
		var agents []map[string]any
		for i := range n {
			agents = append(agents, with(agentRecord(), "id", fmt.Sprintf("agent-%04d", i), "sessionId", fmt.Sprintf("ses_%04d", i), "paneId", nil))
		}
		store := newStore(t, agents...)
		file := filepath.Join(store, agentsDir, "agent-0007.json")
		_, k := src.Reread(store, fixtureNow, nil, nil)
		const reads = 20
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range reads {
			_, k = src.Reread(store, fixtureNow, k, []string{file})
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / reads
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			small, large := perRead(t, tc.src(t, 100), 100), perRead(t, tc.src(t, 1000), 1000)
			if large > small+900*perAgent {
				t.Errorf("a read after one file moved allocates %d bytes with 100 agents, %d with 1,000: %d an agent more, want < %d",
					small, large, (large-small)/900, perAgent)
			}
		})
	}
}

// The store read again with its dirs named as moved (the scanner's
// refresh every 15 s, the poll) reads again only the agent files whose
// signature (inode, size, mtime) moved: an atomic rewrite (a new inode)
// is read; a file whose bytes changed in place with its size and mtime
// kept is not, which is how the test knows. Told nothing of what moved
// (lost events), every file is read.
func TestARefreshReadsTheAgentFilesWhoseSignatureMoved(t *testing.T) {
	a, b := with(agentRecord(), "id", "agent-a", "paneId", nil), with(agentRecord(), "id", "agent-b", "paneId", nil)
	store := newStore(t, a, b)
	dir := filepath.Join(store, agentsDir)
	fa, fb := filepath.Join(dir, "agent-a.json"), filepath.Join(dir, "agent-b.json")
	facts, k := recordsOnly.Reread(store, fixtureNow, nil, nil)
	before := byID(facts.Nodes)
	fi, err := os.Stat(fa)
	if err != nil {
		t.Fatal(err)
	}
	inPlace, err := os.ReadFile(fa)
	if err != nil {
		t.Fatal(err)
	}
	inPlace = []byte(strings.Replace(string(inPlace), "20250514", "20250515", 1))
	if err := os.WriteFile(fa, inPlace, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(fa, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	renamed, err := json.MarshalIndent(with(b, "status", "idle"), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, ".agent-b.json.tmp"), renamed)
	if err := os.Rename(filepath.Join(dir, ".agent-b.json.tmp"), fb); err != nil {
		t.Fatal(err)
	}
	facts, k = recordsOnly.Reread(store, fixtureNow, k, []string{store, dir, filepath.Join(store, teamsDir)})
	after := byID(facts.Nodes)
	if after["alpha/agent-a"] != before["alpha/agent-a"] {
		t.Errorf("agent-a, its signature as it was, read again")
	}
	if field(after["alpha/agent-b"], "status") != "idle" {
		t.Errorf("agent-b, renamed over, not read again: status %s", field(after["alpha/agent-b"], "status"))
	}
	facts, _ = recordsOnly.Reread(store, fixtureNow, k, nil)
	if field(byID(facts.Nodes)["alpha/agent-a"], "model") != "claude-sonnet-4-20250515" {
		t.Errorf("told nothing of what moved, agent-a not read again")
	}
}
