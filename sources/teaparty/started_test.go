package teaparty

import (
	"strings"
	"testing"
)

// pid_started is a REAL, and SQLite holds ±Inf in one (an overflowing
// literal, a text of one cast): such a value is no number of seconds. The
// row's started is unknown (0: its pid unverified, never judged by it), a
// problem on the node names the bus, the row and the value, and the other
// rows read as they are.
func TestPidStartedThatIsNoNumberIsUnknownAndAProblem(t *testing.T) {
	tr := newTree(t)
	db := newBus(t, tr.jobBus, busDDL)
	insertConv(t, db, conv{id: workerID, typ: typeDispatch, created: createdAt, pid: 4242, pidStarted: 1746638100.5})
	for _, stmt := range []string{
		`INSERT INTO conversations (id, type, state, created_at, pid, pid_started) VALUES ('dispatch:inf', 'dispatch', 'active', 1746638160, 4243, 9e999)`,
		`INSERT INTO conversations (id, type, state, created_at, pid, pid_started) VALUES ('dispatch:neginf', 'dispatch', 'active', 1746638160, 4244, -9e999)`,
		`INSERT INTO conversations (id, type, state, created_at, pid, pid_started) VALUES ('dispatch:text', 'dispatch', 'active', 1746638160, 4245, '1e999')`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	nodes, problems := read(t, tr.home)
	if len(problems) > 0 {
		t.Fatalf("store problems %v", problems)
	}
	tests := []struct {
		id      string
		pid     int
		started float64
		value   string // the value the problem quotes; "" for none
	}{
		{workerID, 4242, 1746638100.5, ""},
		{"dispatch:inf", 4243, 0, "+Inf"},
		{"dispatch:neginf", 4244, 0, "-Inf"},
		{"dispatch:text", 4245, 0, "+Inf"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			n := nodes[tr.jobBus+"#"+tt.id]
			if n == nil {
				t.Fatalf("no node; nodes %v", keys(nodes))
			}
			if n.Heartbeat.PID != tt.pid || n.Heartbeat.Started != tt.started {
				t.Errorf("pid %d started %v, want %d %v", n.Heartbeat.PID, n.Heartbeat.Started, tt.pid, tt.started)
			}
			ps := n.Problems()
			if tt.value == "" {
				if len(ps) > 0 {
					t.Errorf("problems %v", ps)
				}
				return
			}
			if len(ps) != 1 || ps[0].Path != tr.jobBus {
				t.Fatalf("problems %v, want one at %s", ps, tr.jobBus)
			}
			for _, want := range []string{tt.id, "pid_started " + tt.value, "not a number of seconds"} {
				if !strings.Contains(ps[0].Error, want) {
					t.Errorf("problem %q lacks %q", ps[0].Error, want)
				}
			}
		})
	}
}
