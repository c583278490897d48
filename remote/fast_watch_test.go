package remote

import (
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/dispatchtop/dispatchtop/serve"
)

// fastEqualsPlain reads b both ways: when the fast reading takes it, the
// plain one must read it and to the same event. taken says the fast one
// took it.
func fastEqualsPlain(t *testing.T, b []byte) (taken bool) {
	t.Helper()
	var d eventDecoder
	var fast, plain serve.WatchEvent
	if !d.fast(b, &fast) {
		return false
	}
	if err := decodeEventPlain(b, &plain); err != nil {
		t.Fatalf("the fast reading took what encoding/json refuses (%v):\n%q", err, b)
	}
	if !reflect.DeepEqual(fast, plain) {
		t.Fatalf("read differently:\n fast  %+v\n plain %+v\n%q", fast, plain, b)
	}
	return true
}

// A watch event is read fast when it is what serve writes, and then as
// encoding/json reads it; anything else (an unknown or doubled key, a
// number encoding/json would refuse, a node's problems, a nesting past
// the fast reading's depth) is given up to the plain reading. Strings
// with escapes or invalid UTF-8 are taken, unquoted as encoding/json does.
func TestWatchEventFastEqualsPlain(t *testing.T) {
	rec := recordStream(t, 20, 10, 3, 5)
	for i, line := range rec.lines {
		if !fastEqualsPlain(t, line) {
			t.Errorf("serve's event %d was given up, not read fast:\n%.300s", i, line)
		}
	}
	node := `{"id":"s/a","infra_dir":"/r/s/a","source":"native","heartbeat":"/r/s/a/.heartbeat","state":"running",` +
		`"flags":["quiet"],"reason":"r","action":"none","role":"w","team":"t","task_id":null,"pid":7,"started":1.5,` +
		`"status":"running","beat_age_s":0.25,"activity_age_s":null,"cfa":{"state":"PLAN","outcome":""},` +
		`"retries":{"total":1,"phase":0,"left":2},"blocked":null,"parent":"s","children":[],"kids":["s/a/b"]}`
	diff := func(nodes string) string { return `{"type":"diff","rev":"x.2","nodes":[` + nodes + `]}` }
	for _, c := range []struct {
		name, line string
		fast       bool
	}{
		{"a heartbeat", `{"type":"heartbeat","rev":"x.1"}` + "\n", true},
		{"a diff of one node", diff(node), true},
		{"white space anywhere", " {\t\"type\" : \"diff\" ,\r\n\"nodes\" : [ ] , \"removed\" : [ \"a\" , \"b\" ] } ", true},
		{"nulls", `{"type":null,"rev":"r","head":null,"sessions":null,"nodes":null,"removed":null}`, true},
		{"empty lists", `{"type":"diff","sessions":[],"nodes":[],"removed":[]}`, true},
		{"a head", `{"type":"diff","head":{"schema":"dispatchtop/v1","roots":["/r"],"problems":[{"path":"p","error":"e"}]}}`, true},
		{"source fields and other parents", diff(`{"id":"a","source":"middle","source_fields":[{"name":"row","value":"3"}],"other_parents":["b"]}`), true},
		{"an escaped id", diff(`{"id":"a\"b\\c\u00e9\n\ud83d\ude00","kids":["\u0000"]}`), true},
		{"a lone surrogate", diff(`{"id":"\ud800x"}`), true},
		{"invalid UTF-8 in an id", diff("{\"id\":\"a\xffb\"}"), true},
		{"a negative zero, an exponent", diff(`{"started":-0,"beat_age_s":1e-3,"pid":-0}`), true},
		{"null for a string and retries", diff(`{"id":null,"retries":null,"cfa":null,"flags":null,"children":null}`), true},

		{"an unknown key", `{"type":"diff","rev":"x","extra":1}`, false},
		{"a key in another case", `{"Type":"diff"}`, false},
		{"an escaped key", `{"\u0074ype":"diff"}`, false},
		{"a key given twice", `{"type":"diff","type":"snapshot"}`, false},
		{"a node's key given twice", diff(`{"id":"a","id":"b"}`), false},
		{"problems", diff(`{"id":"a","problems":[{"path":"p","error":"e"}]}`), false},
		{"extra", diff(`{"id":"a","extra":{"k":1}}`), false},
		{"children sent", diff(`{"id":"a","children":[{"id":"b"}]}`), false},
		{"a pid of 1.0", diff(`{"pid":1.0}`), false},
		{"a pid past int", diff(`{"pid":99999999999999999999}`), false},
		{"a float past float64", diff(`{"started":1e400}`), false},
		{"a leading zero", diff(`{"pid":01}`), false},
		{"a string for a number", diff(`{"pid":"7"}`), false},
		{"a null in a list", `{"removed":["a",null]}`, false},
		{"a null node", `{"nodes":[null]}`, false},
		{"two events", `{"type":"heartbeat"}{"type":"heartbeat"}`, false},
		{"a cut event", `{"type":"diff","nodes":[`, false},
		{"a control character", "{\"type\":\"a\tb\"}", false},
		{"a head nested deeper than the fast reading goes", `{"head":{"roots":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`, false},
		{"not an object", `[1]`, false},

		// Hostile, and bounded: a reading's depth is its own, not the input's.
		{"nodes nested 100,000 deep", `{"type":"diff","nodes":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}`, false},
		{"a pid of a million digits", diff(`{"pid":` + strings.Repeat("9", 1_000_000) + `}`), false},
		{"a started of a million digits", diff(`{"started":0.` + strings.Repeat("1", 1_000_000) + `}`), true},
		{"an id of 100,000 escapes", diff(`{"id":"` + strings.Repeat(`\u00e9\n`, 100_000) + `"}`), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := fastEqualsPlain(t, []byte(c.line)); got != c.fast {
				t.Errorf("read fast: %v, want %v", got, c.fast)
			}
		})
	}
}

// The fast reading of a watch event is encoding/json's, or gives it up:
// for any bytes, what it takes encoding/json reads the same. The seeds in
// testdata are a real serve's snapshot and diffs of a small tree.
func FuzzWatchEventFastEqualsPlain(f *testing.F) {
	f.Add([]byte(`{"type":"diff","nodes":[{"id":"a\u00e9","pid":-0,"started":1e5,"kids":[]}],"removed":["b"]}`))
	f.Add([]byte(`{"type":"diff","head":{"roots":[[[[{}]]]]},"sessions":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fastEqualsPlain(t, b)
	})
}

// SPEC §8, the viewer under churn: reading a diff allocates at most its
// nodes once (serve.WatchNode's size each) and its line's bytes once (the
// strings taken of it), 4 KiB over for the event: the list of nodes is
// sized once, by its first node's bytes. Grown by doubling, a diff of 50
// made 127 nodes for 50, 1,671 B a node sent where it is now 1,016 (a
// line of 722 B a node); the garbage of each change is what the viewer's
// collector spends its share on.
func TestReadingADiffAllocatesItsNodesAndBytesOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("counts bytes allocated (the race detector allocates its own)")
	}
	tests := []struct {
		name  string
		flips int
	}{
		{"a diff of 5", 5},
		{"a diff of 50", 50},
		{"a diff of 200", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := recordStream(t, 100, 10, 1, tt.flips)
			line := rec.lines[1]
			var d eventDecoder
			evs, err := d.events(line)
			if err != nil || len(evs) != 1 || evs[0].Type != serve.EventDiff {
				t.Fatalf("%d events, %v", len(evs), err)
			}
			sent := len(evs[0].Nodes)
			if sent < tt.flips {
				t.Fatalf("%d nodes sent for %d flips", sent, tt.flips)
			}
			budget := sent*int(unsafe.Sizeof(serve.WatchNode{})) + len(line) + 4<<10
			const runs = 50
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for range runs {
				if _, err := d.events(line); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			got := (after.TotalAlloc - before.TotalAlloc) / runs
			t.Logf("%d B allocated a read, %d B a node sent (%d sent, a line of %d B)", got, got/uint64(sent), sent, len(line))
			if got > uint64(budget) {
				t.Errorf("reading a diff of %d nodes allocated %d B, over %d (its nodes and bytes once)", sent, got, budget)
			}
		})
	}
}

// A diff's list sized by its first node's bytes makes room for at most
// 4,096 nodes whatever follows the first (a list past countOver is
// counted), and is read as encoding/json reads it: a hostile stream's
// first node of a few bytes before one of 200 KB, or before many.
func TestADiffsEstimatedListIsBounded(t *testing.T) {
	tests := []struct {
		name string
		rest string
	}{
		{"one long node after a short one", `{"id":"b","reason":"` + strings.Repeat("x", 200<<10) + `","kids":[]}`},
		{"many short nodes", strings.TrimSuffix(strings.Repeat(`{"id":"c","kids":[]},`, 3000), ",")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := []byte(`{"type":"diff","rev":"i.2","nodes":[{"id":"a","kids":[]},` + tt.rest + `]}`)
			if !fastEqualsPlain(t, line) {
				t.Fatalf("not read fast: %.80s", line)
			}
			var d eventDecoder
			evs, err := d.events(line)
			if err != nil || len(evs) != 1 {
				t.Fatalf("%d events, %v", len(evs), err)
			}
			if nodes := evs[0].Nodes; cap(nodes) > max(4097, len(nodes)) {
				t.Errorf("room for %d nodes made for %d", cap(nodes), len(nodes))
			}
		})
	}
}

// SPEC §8, the fleet view under churn: a diff's list of nodes is read into
// the list of one the fleet applied and handed back, its nodes cleared; a
// snapshot's list is never kept for that. (The pool may drop what it is
// given, as it does at random under the race detector: a few tries.)
func TestADiffIsReadIntoTheListOfOneApplied(t *testing.T) {
	rec := recordStream(t, 20, 5, 2, 4)
	var d eventDecoder
	reused := false
	for try := 0; try < 20 && !reused; try++ {
		evs, err := d.events(rec.lines[1])
		if err != nil || len(evs) != 1 || evs[0].Type != serve.EventDiff || len(evs[0].Nodes) == 0 {
			t.Fatalf("fixture: %v %v", evs, err)
		}
		applied := evs[0].Nodes
		giveDiffNodes(applied)
		if applied[:1][0].ID != "" {
			t.Fatalf("a list handed back keeps its nodes: %q", applied[:1][0].ID)
		}
		evs, err = d.events(rec.lines[2])
		if err != nil || len(evs) != 1 || len(evs[0].Nodes) == 0 {
			t.Fatalf("second diff: %v %v", evs, err)
		}
		reused = &evs[0].Nodes[0] == &applied[:1][0]
	}
	if !reused {
		t.Errorf("the next diff's nodes were read into a new list, 20 times")
	}
	for range 20 {
		giveDiffNodes(make([]serve.WatchNode, 0, maxPooledNodes+1))
		if got := takeDiffNodes(); cap(got) > maxPooledNodes {
			t.Fatalf("a list of %d nodes was kept", cap(got))
		}
	}
}
