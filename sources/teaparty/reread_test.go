package teaparty

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

// rereadHome is a home of three jobs, each with a lead row and a worker,
// and a management bus stamping the second job's worker's pid.
type rereadHome struct {
	tr         tree
	buses      []string
	dbs        []*sql.DB
	management *sql.DB
}

func newRereadHome(t *testing.T) rereadHome {
	t.Helper()
	tr := newTree(t)
	h := rereadHome{tr: tr}
	now := float64(time.Now().Unix())
	for i := range 3 {
		bus := filepath.Join(tr.jobs, fmt.Sprintf("job-%d--work", i), busFile)
		db := newBus(t, bus, busDDL)
		insertConv(t, db,
			conv{id: fmt.Sprintf("job:webapp:%d", i), typ: typeJob, created: now, agent: "webapp-lead"},
			conv{id: fmt.Sprintf("dispatch:w%d", i), typ: typeDispatch, created: now, agent: "coding", parent: fmt.Sprintf("job:webapp:%d", i)},
		)
		h.buses, h.dbs = append(h.buses, bus), append(h.dbs, db)
	}
	h.management = newBus(t, tr.management, busDDL)
	insertConv(t, h.management, conv{id: "dispatch:w1", typ: typeDispatch, created: now, pid: 4242, pidStarted: now},
		conv{id: "dispatch:m9", typ: typeDispatch, created: now})
	return h
}

// byKey is the nodes of facts by their key.
func byKey(f sources.Facts) map[string]*model.Node {
	out := map[string]*model.Node{}
	for _, n := range f.Nodes {
		out[n.HeartbeatPath] = n
	}
	return out
}

// SPEC §10: a write in one bus re-reads that bus only, and an unchanged
// database is not queried; the nodes of what was kept are the last read's
// own, and the facts are those a whole read finds.
func TestRereadQueriesOnlyTheBusThatChanged(t *testing.T) {
	h := newRereadHome(t)
	src := New()
	facts, kept := src.Reread(h.tr.home, time.Now(), nil, nil)
	total := func() (n int64) {
		for _, q := range src.Queries() {
			n += q
		}
		return n
	}
	if got := total(); got != 4 {
		t.Fatalf("a first read queried %d buses, want 4", got)
	}
	write := func(db *sql.DB, q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		write   func()
		changed []string
		queries int64
		// kept: the buses whose nodes must be the last read's own.
		kept []int
	}{
		{name: "nothing changed", write: func() {}, changed: []string{}, queries: 0, kept: []int{0, 1, 2}},
		{
			name:    "a row of one job's bus",
			write:   func() { write(h.dbs[2], `UPDATE conversations SET state = 'withdrawn' WHERE id = 'dispatch:w2'`) },
			changed: []string{h.buses[2] + "-wal"}, queries: 1, kept: []int{0, 1},
		},
		{
			name:    "a message in one job's bus",
			write:   func() { write(h.dbs[0], `INSERT INTO messages VALUES ('m1', 'dispatch:w0', 'coding', 'hi', 1.0)`) },
			changed: []string{h.buses[0] + "-wal"}, queries: 1, kept: []int{1, 2},
		},
		{
			name:    "a job's dir (its lead's files): mapped again, not queried",
			write:   func() {},
			changed: []string{filepath.Dir(h.buses[1])}, queries: 0, kept: []int{0, 2},
		},
		{
			name:    "the management bus's stamp: every row mapped again, one bus queried",
			write:   func() { write(h.management, `UPDATE conversations SET pid = 4343 WHERE id = 'dispatch:w1'`) },
			changed: []string{h.tr.management + "-wal"}, queries: 1, kept: nil,
		},
		{
			name: "a job's lead starts: its row becomes its gate, the job's bus not queried",
			write: func() {
				if err := os.WriteFile(filepath.Join(filepath.Dir(h.buses[0]), ".heartbeat"), []byte(`{"pid": 1, "status": "running"}`), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			changed: []string{filepath.Dir(h.buses[0])}, queries: 0, kept: []int{2},
		},
		{
			name: "a management row gets a twin in a job's bus: no node of its own any more",
			write: func() {
				write(h.dbs[2], `INSERT INTO conversations (id, type, state, created_at) VALUES ('dispatch:m9', 'dispatch', 'active', 1.0)`)
			},
			changed: []string{h.buses[2] + "-wal"}, queries: 1, kept: []int{0, 1},
		},
		{
			name: "a new job's bus: listed and queried, no other",
			write: func() {
				bus := filepath.Join(h.tr.jobs, "job-9--new", busFile)
				insertConv(t, newBus(t, bus, busDDL), conv{id: "job:webapp:9", typ: typeJob, created: 1})
			},
			changed: []string{h.tr.jobs}, queries: 1, kept: []int{0, 1, 2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := byKey(facts)
			tc.write()
			q0 := total()
			facts, kept = src.Reread(h.tr.home, time.Now(), kept, tc.changed)
			if got := total() - q0; got != tc.queries {
				t.Errorf("queried %d buses, want %d", got, tc.queries)
			}
			after := byKey(facts)
			for _, i := range tc.kept {
				for k, n := range after {
					if filepath.Dir(k) == filepath.Dir(h.buses[i]) || k == h.buses[i]+"#dispatch:w"+fmt.Sprint(i) {
						if before[k] != n {
							t.Errorf("node %s of an unchanged bus was mapped again", k)
						}
					}
				}
			}
			whole := New().Read(h.tr.home, time.Now())
			if !reflect.DeepEqual(facts, whole) {
				t.Errorf("a reread's facts differ from a whole read's:\n%s\nwant\n%s", describeFacts(facts), describeFacts(whole))
			}
		})
	}
	if n := byKey(facts)[h.buses[1]+"#dispatch:w1"]; n == nil || n.PID() != 4343 {
		t.Errorf("the worker stamped again names pid %v, want 4343", n)
	}
}

func describeFacts(f sources.Facts) string {
	s := ""
	for _, n := range f.Nodes {
		s += fmt.Sprintf("%s %s pid %d %+v\n", n.HeartbeatPath, n.Status(), n.PID(), n.Heartbeat)
	}
	return s + fmt.Sprint(f.Problems)
}

// A commit into a bus maps again the rows it changed, not the bus's every
// row: a row the commit left as it was keeps its node, and its session
// dir is not looked at again. What moved beside the bus (its dir: the
// lead's files) maps its every row again, and the management bus's stamp
// every row of the home. The facts are those a whole read finds.
func TestRereadMapsOnlyTheRowsACommitChanged(t *testing.T) {
	h := newRereadHome(t)
	src := New()
	facts, kept := src.Reread(h.tr.home, time.Now(), nil, nil)
	write := func(db *sql.DB, q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		write   func()
		changed []string
		mapped  int64
	}{
		{name: "a message of a worker not waiting: nothing its node says", write: func() {
			write(h.dbs[0], `INSERT INTO messages VALUES ('m1', 'dispatch:w0', 'coding', 'hi', 1.0)`)
		}, changed: []string{h.buses[0] + "-wal"}, mapped: 0},
		{name: "a worker waits for an answer", write: func() {
			write(h.dbs[0], `UPDATE conversations SET awaiting_input = 1 WHERE id = 'dispatch:w0'`)
		}, changed: []string{h.buses[0] + "-wal"}, mapped: 1},
		{name: "a worker's state", write: func() { write(h.dbs[2], `UPDATE conversations SET state = 'withdrawn' WHERE id = 'dispatch:w2'`) },
			changed: []string{h.buses[2] + "-wal"}, mapped: 1},
		{name: "a commit that changed no row", write: func() { write(h.dbs[1], `INSERT INTO messages VALUES ('m2', 'nobody', 'coding', 'hi', 1.0)`) },
			changed: []string{h.buses[1] + "-wal"}, mapped: 0},
		{name: "a commit and the job's dir: the lead's files may have moved", write: func() {
			write(h.dbs[1], `UPDATE conversations SET state = 'withdrawn' WHERE id = 'dispatch:w1'`)
		}, changed: []string{h.buses[1] + "-wal", filepath.Dir(h.buses[1])}, mapped: 2},
		{name: "the management bus's stamp: every row", write: func() { write(h.management, `UPDATE conversations SET pid = 4343 WHERE id = 'dispatch:w1'`) },
			changed: []string{h.tr.management + "-wal"}, mapped: 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.write()
			m0 := src.mapped.Load()
			facts, kept = src.Reread(h.tr.home, time.Now(), kept, tc.changed)
			if got := src.mapped.Load() - m0; got != tc.mapped {
				t.Errorf("%d rows mapped, want %d", got, tc.mapped)
			}
			if whole := New().Read(h.tr.home, time.Now()); !reflect.DeepEqual(facts, whole) {
				t.Errorf("a reread's facts differ from a whole read's:\n%s\nwant\n%s", describeFacts(facts), describeFacts(whole))
			}
		})
	}
}

// A commit does not index the buses again: the buses by path and by dir,
// which say what a changed path belongs to, are handed from one read to
// the next while the buses listed are the same; a bus listed anew makes
// them again.
func TestACommitDoesNotIndexTheBusesAgain(t *testing.T) {
	h := newRereadHome(t)
	src := New()
	_, k := src.Reread(h.tr.home, time.Now(), nil, nil)
	index := func(k sources.Kept) uintptr {
		byPath, _ := k.(*kept).index()
		return reflect.ValueOf(byPath).Pointer()
	}
	tests := []struct {
		name    string
		write   func()
		changed []string
		same    bool
	}{
		{name: "a commit", write: func() {
			if _, err := h.dbs[0].Exec(`UPDATE conversations SET state = 'withdrawn' WHERE id = 'dispatch:w0'`); err != nil {
				t.Fatal(err)
			}
		}, changed: []string{h.buses[0] + "-wal"}, same: true},
		{name: "a job's dir", write: func() {}, changed: []string{filepath.Dir(h.buses[1])}, same: true},
		{name: "a new job's bus", write: func() {
			insertConv(t, newBus(t, filepath.Join(h.tr.jobs, "job-9--new", busFile), busDDL), conv{id: "job:webapp:9", typ: typeJob, created: 1})
		}, changed: []string{h.tr.jobs}, same: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := index(k)
			tc.write()
			var facts sources.Facts
			facts, k = src.Reread(h.tr.home, time.Now(), k, tc.changed)
			if got := index(k) == before; got != tc.same {
				t.Errorf("the same index: %v, want %v", got, tc.same)
			}
			if whole := New().Read(h.tr.home, time.Now()); !reflect.DeepEqual(facts, whole) {
				t.Errorf("a reread's facts differ from a whole read's")
			}
		})
	}
}
