package teaparty

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
)

// The buses are read side by side; what a read yields does not depend on
// which finished first: the nodes in the order of the buses and of the
// rows in each, the problems in the order of their buses, read after read.
func TestReadKeepsTheBusOrderWhicheverBusIsReadFirst(t *testing.T) {
	tr := newTree(t)
	jobs := 3*readers + 1
	var wantIDs, wantProblems []string
	for j := range jobs {
		name := fmt.Sprintf("job-%03d--order", j)
		bus := filepath.Join(tr.jobs, name, busFile)
		switch j {
		case 5: // not a database
			if err := os.MkdirAll(filepath.Dir(bus), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(bus, []byte("not a database, but long enough to be read as one's header"), 0o644); err != nil {
				t.Fatal(err)
			}
			wantProblems = append(wantProblems, bus)
			continue
		case 8: // a database without the bus's table
			db := newBus(t, bus, []string{`CREATE TABLE other (x INTEGER)`})
			db.Close()
			wantProblems = append(wantProblems, bus)
			continue
		}
		db := newBus(t, bus, busDDL)
		job := fmt.Sprintf("job:order:%03d", j)
		rows := []conv{{id: job, typ: typeJob, created: 1746638100}}
		wantIDs = append(wantIDs, jobsDir+"/"+name+"/"+job)
		for w := range 3 {
			id := fmt.Sprintf("dispatch:%03d-%d", j, w)
			rows = append(rows, conv{id: id, typ: typeDispatch, created: 1746638100, parent: job})
			wantIDs = append(wantIDs, jobsDir+"/"+name+"/"+id)
		}
		insertConv(t, db, rows...)
		db.Close()
	}
	// Rows come ordered by id within their bus: "dispatch:…" before "job:…".
	for i := 0; i < len(wantIDs); i += 4 {
		job := wantIDs[i]
		copy(wantIDs[i:i+3], wantIDs[i+1:i+4])
		wantIDs[i+3] = job
	}
	src := New()
	for read := range 5 {
		facts := src.Read(tr.home, now)
		var ids, problems []string
		for _, n := range facts.Nodes {
			ids = append(ids, n.ID)
		}
		for _, p := range facts.Problems {
			problems = append(problems, p.Path)
		}
		if !slices.Equal(ids, wantIDs) {
			t.Fatalf("read %d: nodes %v\nwant %v", read, ids, wantIDs)
		}
		if !slices.Equal(problems, wantProblems) {
			t.Fatalf("read %d: problems %v (%v), want %v", read, problems, facts.Problems, wantProblems)
		}
	}
}

// each calls f once for every index, whatever the bound on goroutines.
func TestEachCallsEveryIndexOnce(t *testing.T) {
	defer func(r int) { readers = r }(readers)
	for _, bound := range []int{1, 2, 4} {
		for _, n := range []int{0, 1, 3, 100} {
			t.Run(fmt.Sprintf("%d goroutines, %d indexes", bound, n), func(t *testing.T) {
				readers = bound
				calls := make([]atomic.Int32, n)
				each(n, func(i int) { calls[i].Add(1) })
				for i := range calls {
					if c := calls[i].Load(); c != 1 {
						t.Fatalf("index %d called %d times", i, c)
					}
				}
			})
		}
	}
}

// A panic in a goroutine of its own would end the process; each raises it
// again in its caller, where the scanner turns a source's panic into a
// problem of its root, and returns only when no call is left running.
func TestEachRaisesAPanicInItsCaller(t *testing.T) {
	defer func(r int) { readers = r }(readers)
	readers = 4
	var running atomic.Int32
	got := func() (p any) {
		defer func() { p = recover() }()
		each(100, func(i int) {
			running.Add(1)
			defer running.Add(-1)
			if i == 37 {
				panic(fmt.Sprintf("row %d", i))
			}
		})
		return nil
	}()
	if got != "row 37" {
		t.Fatalf("each's caller recovered %v, want the panic %q", got, "row 37")
	}
	if n := running.Load(); n != 0 {
		t.Fatalf("%d calls still running after each returned", n)
	}
}
