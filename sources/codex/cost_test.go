package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReadCostPerThread holds what one thread costs a read of the home,
// counted as allocations (the work, which the machine's load does not
// move): its row, its node and its fields, which are made at their size
// once, not grown field by field; its cells slices of the one row SQLite
// gives every thread in (readFast: 27.5 allocations a thread when each was
// a row scanned a column at a time), its rollout statted with nothing
// allocated (rolloutStats: 9.9 with os.Stat), its node, heartbeat, rare
// facts and fields one block (threadNode: 9.2 as four). A home of a thousand threads is read at
// each --once (SPEC §8, the agents' stores).
func TestReadCostPerThread(t *testing.T) {
	const threads = 200
	tests := []struct {
		name string
		// most is the allocations a thread may cost.
		most float64
	}{
		{name: "open and archived threads, half of them children, of one parent", most: 6.4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHome(t)
			now := time.Now()
			for i := range threads {
				id := fmt.Sprintf("t-%04d", i)
				h.thread(t, id, now.Unix(), i%3 == 2, "")
				if i%2 == 1 {
					h.edge(t, "t-0000", id, "open")
				}
			}
			// A /proc of no process: what the host runs is not counted
			// (procowner's own test counts a process's cost).
			proc := t.TempDir()
			if err := os.Mkdir(filepath.Join(proc, "self"), 0o755); err != nil {
				t.Fatal(err)
			}
			src := &Source{program: testProgram, ProcDir: proc}
			var nodes int
			allocs := testing.AllocsPerRun(3, func() { nodes = len(src.Read(h.dir, now).Nodes) })
			if nodes != threads {
				t.Fatalf("read %d nodes, want %d", nodes, threads)
			}
			if per := allocs / threads; per > tt.most {
				t.Errorf("a thread costs %.1f allocations, want at most %.1f", per, tt.most)
			}
		})
	}
}

// TestThreadsAreSortedHereNotBySQLite holds the work of the threads'
// query: SQLite reads the table in its order, with no sorter (a temp
// b-tree it fills with every row before it gives the first, some 1.4 ms
// of CPU a read of a thousand threads), and the read sorts the rows
// itself, by created_at then id as ORDER BY did.
func TestThreadsAreSortedHereNotBySQLite(t *testing.T) {
	h := newHome(t)
	now := time.Now().Unix()
	// Inserted out of order, two created in the same second.
	for _, tc := range []struct {
		id      string
		updated int64
	}{{"t-c", now}, {"t-a", now - 100}, {"t-b", now}, {"t-0", now + 5}, {"t-B", now}} {
		h.thread(t, tc.id, tc.updated, false, "")
	}
	have := map[string]bool{}
	for _, c := range columns {
		have[c.Name] = true
	}
	rows, err := h.writer.Query(`EXPLAIN QUERY PLAN ` + fastQuery(have, true))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(detail, "TEMP B-TREE") {
			t.Errorf("the threads' query sorts in SQLite: %s", detail)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	src := &Source{program: testProgram, ProcDir: t.TempDir()}
	var got []string
	for _, n := range src.Read(h.dir, time.Now()).Nodes {
		got = append(got, n.ID)
	}
	if want := []string{"t-a", "t-B", "t-b", "t-c", "t-0"}; !slices.Equal(got, want) {
		t.Errorf("threads read in the order %v, want %v (created_at, then id)", got, want)
	}
}
