package middle

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/sources"
)

// quietTmux is a source whose tmux lists no session: a test never asks the
// tmux server of the user who runs it.
func quietTmux() *Source {
	src := New()
	src.PaneLookup = func() (map[string]Session, error) { return map[string]Session{}, nil }
	return src
}

// A read after a commit reads what the commit changed and keeps the rest,
// and its facts are those a whole read of the store finds: every kind of
// write middle makes (a beat, a state, a new round, an event, a signal
// armed and fired, a row deleted) is seen at the commit; the retention's
// archive stamp, which leaves updated_at as it was and which no count or
// rowid shows, is seen at the refresh (a read told nothing), which every
// kind of write is.
func TestRereadFindsWhatAWholeReadFinds(t *testing.T) {
	const base = int64(1750600000000)
	// atRefresh are the writes seen at the refresh, not at the commit.
	atRefresh := map[string]bool{"an archive stamp": true}
	tests := []struct {
		name  string
		write []string
	}{
		{"a beat", []string{`UPDATE workflows SET last_heartbeat = %[1]d + 5000, updated_at = %[1]d + 5000 WHERE id = 'wf-2'`}},
		{"a state", []string{`UPDATE workflows SET state = 'completed', updated_at = %[1]d + 5000 WHERE id = 'wf-1'`}},
		{"a new round of an Epic", []string{`INSERT INTO workflows (id, kind, repo, epic_number, epic_ref, adapter, state, created_at, updated_at, controlled_by)
			VALUES ('wf-9', 'implementation', 'acme/api', 45, '45', 'claude', 'running', %[1]d + 5000, %[1]d + 5000, 'middle')`}},
		{"a watchdog event", []string{`INSERT INTO events (workflow_id, ts, type, payload_json) VALUES ('wf-3', %[1]d + 5000, 'watchdog.failed', '{"reason":"idle-timeout"}')`,
			`UPDATE workflows SET state = 'failed', updated_at = %[1]d + 5000 WHERE id = 'wf-3'`}},
		{"an event alone", []string{`INSERT INTO events (workflow_id, ts, type, payload_json) VALUES ('wf-4', %[1]d + 5000, 'gate.failed', '{"gateName":"lint","exitCode":2}')`}},
		{"a signal armed", []string{`INSERT INTO waitfor_signals (signal_name, workflow_id, created_at) VALUES ('blocked:wf-5', 'wf-5', %[1]d + 5000)`}},
		{"a signal fired", []string{`UPDATE waitfor_signals SET fired_at = %[1]d + 5000 WHERE signal_name = 'epic-45-answered'`}},
		{"an archive stamp", []string{`UPDATE workflows SET archived_at = %[1]d + 5000 WHERE id = 'wf-6'`}},
		{"a row deleted", []string{`DELETE FROM workflows WHERE id = 'wf-7'`}},
		{"a row deleted and one inserted", []string{`DELETE FROM workflows WHERE id = 'wf-7'`,
			`INSERT INTO workflows (id, kind, repo, adapter, state, created_at, updated_at, controlled_by)
			VALUES ('wf-8', 'implementation', 'acme/web', 'claude', 'running', %[1]d - 1000, %[1]d - 1000, 'middle')`}},
		{"nothing that is read", []string{`INSERT INTO events (workflow_id, ts, type, payload_json) VALUES ('wf-2', %[1]d + 5000, 'tool.used', '{}')`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHome(t)
			insertWorkflow(t, h.writer,
				wf{id: "wf-1", epic: "45", state: "completed", created: base - 9000, updated: base - 9000},
				wf{id: "wf-2", epic: "45", state: "waiting-human", created: base - 8000, updated: base - 8000},
				wf{id: "wf-3", state: "running", created: base - 7000, updated: base - 7000},
				wf{id: "wf-4", state: "running", created: base - 6000, updated: base - 6000},
				wf{id: "wf-5", state: "running", created: base - 5000, updated: base - 5000},
				wf{id: "wf-6", state: "completed", created: base - 4000, updated: base - 4000},
				wf{id: "wf-7", repo: "acme/web", state: "running", created: base - 3000, updated: base},
			)
			if _, err := h.writer.Exec(`INSERT INTO waitfor_signals (signal_name, workflow_id, created_at) VALUES ('epic-45-answered', 'wf-2', ?)`, base); err != nil {
				t.Fatal(err)
			}
			src := quietTmux()
			_, k := src.Reread(h.dir, now, nil, nil)
			for _, w := range tc.write {
				if strings.Contains(w, "%") {
					w = fmt.Sprintf(w, base)
				}
				if _, err := h.writer.Exec(w); err != nil {
					t.Fatalf("%s: %v", w, err)
				}
			}
			got, k := src.Reread(h.dir, now, k, []string{h.db + "-wal"})
			want := quietTmux().Read(h.dir, now)
			if len(want.Problems) > 0 {
				t.Fatalf("problems: %v", want.Problems)
			}
			if seen := reflect.DeepEqual(got, want); seen == atRefresh[tc.name] {
				t.Errorf("seen at the commit: %v, want %v; read again:\n%v\nread whole:\n%v", seen, !atRefresh[tc.name], describe(got), describe(want))
			}
			if got, _ := src.Reread(h.dir, now, k, nil); !reflect.DeepEqual(got, want) {
				t.Errorf("at the refresh, read again:\n%v\nread whole:\n%v", describe(got), describe(want))
			}
		})
	}
}

// describe is each node of facts on a line, for a failure's message.
func describe(f sources.Facts) string {
	var s string
	for _, n := range f.Nodes {
		s += fmt.Sprintf("  %s %s parent=%q ending=%q blocked=%v\n", n.ID, n.Heartbeat.Status, n.Heartbeat.ParentHeartbeat, n.Ending(), n.Blocked != nil)
	}
	return s + fmt.Sprint("  problems: ", f.Problems)
}

// A beat stamped into one row of a thousand reads that row, past the
// watermark (updated_at, which middle bumps on every write of a row:
// workflow-record.ts updateWorkflow), not the table; every other row's
// node is the last read's own. A read told that nothing moved queries
// nothing.
func TestRereadReadsOnlyTheRowsPastTheWatermark(t *testing.T) {
	const base = int64(1750600000000)
	h := newHome(t)
	var rows []wf
	for i := range 1000 {
		rows = append(rows, wf{id: fmt.Sprintf("wf-%04d", i), state: "running", created: base + int64(i), updated: base + int64(i)})
	}
	insertWorkflow(t, h.writer, rows...)
	src := quietTmux()
	first, k := src.Reread(h.dir, now, nil, nil)
	if len(first.Nodes) != 1000 || src.scanned.Load() != 1000 {
		t.Fatalf("whole read: %d nodes, %d rows scanned", len(first.Nodes), src.scanned.Load())
	}
	tests := []struct {
		name        string
		write       string
		changed     []string
		scanned     int64
		renewed     []string // the ids of the nodes that are new pointers
		wantQueries int64
	}{
		{name: "a beat", write: `UPDATE workflows SET last_heartbeat = ?, updated_at = ? WHERE id = 'wf-0500'`,
			// The row, and the one at the last watermark: a row written in
			// the same millisecond after the last read is not missed.
			changed: []string{h.db + "-wal"}, scanned: 2, renewed: []string{"acme/api/wf-0500"}, wantQueries: 1},
		{name: "nothing moved", changed: []string{}, wantQueries: 0},
	}
	last := first
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.write != "" {
				if _, err := h.writer.Exec(tc.write, base+5000, base+5000); err != nil {
					t.Fatal(err)
				}
			}
			scanned, queries := src.scanned.Load(), src.queries.Load()
			var next sources.Facts
			next, k = src.Reread(h.dir, now, k, tc.changed)
			if got := src.scanned.Load() - scanned; got != tc.scanned {
				t.Errorf("%d rows scanned, want %d", got, tc.scanned)
			}
			if got := src.queries.Load() - queries; got != tc.wantQueries {
				t.Errorf("%d reads of the database, want %d", got, tc.wantQueries)
			}
			var renewed []string
			for i, n := range next.Nodes {
				if n != last.Nodes[i] {
					renewed = append(renewed, n.ID)
				}
			}
			if !reflect.DeepEqual(renewed, tc.renewed) {
				t.Errorf("nodes renewed %v, want %v", renewed, tc.renewed)
			}
			if want := quietTmux().Read(h.dir, now); !reflect.DeepEqual(next, want) {
				t.Errorf("read again differs from a whole read")
			}
			last = next
		})
	}
}
