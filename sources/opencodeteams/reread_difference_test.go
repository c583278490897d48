package opencodeteams

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/sources"
)

// A read after writes, told which files moved, finds what a whole read
// finds, whichever way it goes (a node put in place, or the facts
// assembled anew): random writes of agent files (their status, team,
// id, session and pane; broken; removed; new), of the teams' configs and
// of OpenCode's database, each read as the watcher would name it, are
// held to Read at every step. A read that says where it put nodes in place
// (Facts.Changed) kept the list's length and order, and every other
// position holds the last read's node: the caller looks at those alone.
func TestRereadAfterRandomWritesIsAWholeRead(t *testing.T) {
	store := newStore(t)
	writeFile(t, filepath.Join(store, teamsDir, "beta", teamConfigFile), []byte(strings.ReplaceAll(teamConfigJSON, `"alpha"`, `"beta"`)))
	dir := filepath.Join(store, agentsDir)
	db := opencodeDBWith(t, "ses_1", time.Now().Add(-time.Minute))
	w := storefixtures.NewDB(t, db, nil)
	if _, err := w.Exec(`INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)
		VALUES ('ses_2', 'p1', 'b', '/x', 't', '1', 1, ?)`, time.Now().Add(-2*time.Minute).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	src := Source{Lookup: &Lookup{SocketDir: t.TempDir(), OpencodeDB: db}}
	rng := rand.New(rand.NewPCG(7, 11))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	file := func(i int) string { return filepath.Join(dir, fmt.Sprintf("agent-%d.json", i)) }
	// Most writes keep an agent's id and team, as the system's do (a
	// beat, a status); one in ten moves them.
	type identity struct{ id, team, session string }
	ids := map[int]identity{}
	writeAgent := func(i int) []string {
		who, ok := ids[i]
		if !ok || rng.IntN(10) == 0 {
			who = identity{pick(fmt.Sprintf("agent-%d", i), fmt.Sprintf("agent-%d", i), "lead-1"),
				pick("alpha", "alpha", "beta", "gone", "no such name!"), pick("ses_1", "ses_2", "ses_3")}
			ids[i] = who
		}
		rec := with(agentRecord(), "id", who.id,
			"status", pick("active", "idle", "spawning", "inactive", "terminated", "active"),
			"teamName", who.team, "sessionId", who.session,
			"heartbeatTs", time.Now().Add(-time.Duration(rng.IntN(120))*time.Second).UTC().Format("2006-01-02T15:04:05.000Z"))
		if rng.IntN(3) > 0 {
			delete(rec, "paneId")
		}
		b, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(dir, fmt.Sprintf(".agent-%d.json.tmp", i))
		writeFile(t, tmp, b)
		if err := os.Rename(tmp, file(i)); err != nil {
			t.Fatal(err)
		}
		return []string{tmp, file(i)}
	}
	for i := range 8 {
		writeAgent(i)
	}
	facts, k := src.Reread(store, time.Now(), nil, nil)
	placed := 0
	for step := range 400 {
		last := slices.Clone(facts.Nodes) // the kept's list is changed in place
		var changed []string
		switch op := rng.IntN(20); {
		case op < 12:
			changed = writeAgent(rng.IntN(10))
			if rng.IntN(2) == 0 {
				changed = append(changed, writeAgent(rng.IntN(10))...)
			}
		case op < 13:
			i := rng.IntN(10)
			writeFile(t, file(i), []byte(`{"id": `))
			changed = []string{file(i)}
		case op < 14:
			i := rng.IntN(10)
			os.Remove(file(i))
			changed = []string{file(i)}
		case op < 15:
			team := pick("alpha", "beta")
			config := filepath.Join(store, teamsDir, team, teamConfigFile)
			writeFile(t, config, []byte(strings.ReplaceAll(strings.Replace(teamConfigJSON, `"lead-1"`, `"`+pick("lead-1", "agent-3")+`"`, 1), `"alpha"`, `"`+team+`"`)))
			changed = []string{config}
		case op < 17:
			if _, err := w.Exec(`UPDATE session SET time_updated = ? WHERE id = ?`, time.Now().Add(-time.Duration(rng.IntN(90))*time.Second).UnixMilli(), pick("ses_1", "ses_2")); err != nil {
				t.Fatal(err)
			}
			changed = writeAgent(rng.IntN(10))
		case op < 18:
			changed = []string{store, dir, filepath.Join(store, teamsDir)}
		case op < 19:
			changed = nil
		default:
			changed = []string{}
		}
		var next sources.Facts
		next, k = src.Reread(store, time.Now(), k, changed)
		if whole := src.Read(store, time.Now()); !sameFacts(next, whole) {
			t.Fatalf("step %d (changed %v): the facts differ from a whole read's:\n%v\nwant\n%v", step, changed, describe(next), describe(whole))
		}
		if next.Changed != nil {
			if len(next.Nodes) != len(last) {
				t.Fatalf("step %d (changed %v): Changed %v, but %d nodes where there were %d", step, changed, next.Changed, len(next.Nodes), len(last))
			}
			for i, n := range next.Nodes {
				if n != last[i] && !slices.Contains(next.Changed, i) {
					t.Fatalf("step %d (changed %v): node %d (%s) is not the last read's, and Changed %v does not say so", step, changed, i, n.ID, next.Changed)
				}
			}
			placed += len(next.Changed)
		}
		facts = next
	}
	if placed == 0 {
		t.Errorf("no read put a node in place: Changed was never said")
	}
}

// describe is facts as lines, for a failure to show.
func describe(f sources.Facts) string {
	var b strings.Builder
	for _, n := range f.Nodes {
		fmt.Fprintf(&b, "%s %s beat %s ended %q fields %v\n", n.ID, n.HeartbeatPath, n.BeatMtime.Format(time.StampMilli), n.Ended(), n.SourceFields())
	}
	for _, p := range f.Problems {
		fmt.Fprintf(&b, "problem %s: %s\n", p.Path, p.Error)
	}
	return b.String()
}

// sameFacts reports whether two reads found the same nodes and problems
// (Changed says how a read came by them, not what they are).
func sameFacts(a, b sources.Facts) bool {
	return reflect.DeepEqual(a.Nodes, b.Nodes) && reflect.DeepEqual(a.Problems, b.Problems)
}
