package middle

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
)

// Times as middle writes them: epoch milliseconds. now is 17:33:20 UTC.
const (
	nowMs        int64 = 1750700000000
	transcriptMs int64 = 1750699950500 // the last timestamp of testdata's transcript
)

var now = time.UnixMilli(nowMs)

func field(n *model.Node, name string) string {
	for _, f := range n.SourceFields() {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// home is a middle home with its database and a worktree for issue 42.
type home struct {
	dir, db, worktree string
	writer            *sql.DB
}

func newHome(t *testing.T) home {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".middle")
	h := home{dir: dir, db: filepath.Join(dir, dbFile), worktree: filepath.Join(dir, "worktrees", "acme", "api", "issue-42")}
	if err := os.MkdirAll(h.worktree, 0o755); err != nil {
		t.Fatal(err)
	}
	h.writer = newStore(t, h.db, migrations)
	return h
}

// readNodes reads root with a tmux that lists no session: a test never
// asks the tmux server of the user who runs it.
func readNodes(t *testing.T, root string) map[string]*model.Node {
	t.Helper()
	src := New()
	src.PaneLookup = func() (map[string]Session, error) { return map[string]Session{}, nil }
	return readNodesWith(t, root, src)
}

func readNodesWith(t *testing.T, root string, src *Source) map[string]*model.Node {
	t.Helper()
	facts := src.Read(root, now)
	if len(facts.Problems) > 0 {
		t.Fatalf("problems: %v", facts.Problems)
	}
	nodes := map[string]*model.Node{}
	for _, n := range facts.Nodes {
		nodes[n.Heartbeat.Optional().TaskID+"|"+field(n, "workflow")] = n
	}
	return nodes
}

// TestMapping holds one case per row of the mapping (docs/sources.md,
// middle): a row, its side files, and what its node must say.
func TestMapping(t *testing.T) {
	type want struct {
		status   string
		beat     int64 // ms
		traits   model.Traits
		question string
		kind     string // of the question
		field    [2]string
	}
	const merges = true
	tests := []struct {
		name  string
		row   wf
		setup func(t *testing.T, h home, row *wf)
		want  want
	}{
		{name: "pending is starting, with no launch timeout (the watchdog ignores pending)",
			row:  wf{state: "pending", created: nowMs - 10_000, updated: nowMs - 10_000},
			want: want{status: "starting", beat: nowMs - 10_000, traits: model.Traits{MergesItself: merges}}},
		{name: "launching is starting with the 90 s launch timeout from updated_at",
			row: wf{state: "launching", created: nowMs - 600_000, updated: nowMs - 200_000, session: "middle-acme-api-42"},
			want: want{status: "starting", beat: nowMs - 200_000, traits: model.Traits{LaunchTimeout: 90 * time.Second, MergesItself: merges},
				field: [2]string{"tmux_session", "middle-acme-api-42"}}},
		{name: "running beats by last_heartbeat when it is the newest",
			row:  wf{state: "running", created: nowMs - 900_000, updated: nowMs - 300_000, lastHeartbeat: nowMs - 20_000},
			want: want{status: "running", beat: nowMs - 20_000, traits: model.Traits{MergesItself: merges}}},
		{name: "running beats by updated_at when it is the newest",
			row:  wf{state: "running", created: nowMs - 900_000, updated: nowMs - 5_000, lastHeartbeat: nowMs - 400_000},
			want: want{status: "running", beat: nowMs - 5_000, traits: model.Traits{MergesItself: merges}}},
		{name: "running beats by the transcript's last timestamp, not its mtime, when it is the newest",
			row: wf{state: "running", created: nowMs - 900_000, updated: nowMs - 300_000, lastHeartbeat: nowMs - 400_000},
			setup: func(t *testing.T, h home, row *wf) {
				row.transcript = fixture(t, "transcript.jsonl", t.TempDir(), "sess-1.jsonl")
				old := time.UnixMilli(nowMs - 3_600_000)
				if err := os.Chtimes(row.transcript, old, old); err != nil {
					t.Fatal(err)
				}
			},
			want: want{status: "running", beat: transcriptMs, traits: model.Traits{MergesItself: merges}}},
		{name: "running with a blocked sentinel is blocked with its question",
			row: wf{state: "running", created: nowMs - 900_000, updated: nowMs - 5_000},
			setup: func(t *testing.T, h home, row *wf) {
				fixture(t, "blocked.json", filepath.Join(h.worktree, protocol.MiddleDir), protocol.BlockedFile)
			},
			want: want{status: "running", beat: nowMs - 5_000, traits: model.Traits{MergesItself: merges},
				question: "Should the v1 endpoint keep accepting form posts?", kind: "complexity"}},
		{name: "waiting-human is blocked with the question from blocked.json and expects no process",
			row: wf{state: "waiting-human", created: nowMs - 900_000, updated: nowMs - 800_000},
			setup: func(t *testing.T, h home, row *wf) {
				fixture(t, "blocked.json", filepath.Join(h.worktree, protocol.MiddleDir), protocol.BlockedFile)
			},
			want: want{status: "running", beat: nowMs - 800_000, traits: model.Traits{NoProcessExpected: true, MergesItself: merges},
				question: "Should the v1 endpoint keep accepting form posts?", kind: "complexity"}},
		{name: "waiting-human after the park removed blocked.json asks on the Epic",
			row: wf{state: "waiting-human", created: nowMs - 900_000, updated: nowMs - 800_000},
			setup: func(t *testing.T, h home, row *wf) {
				if _, err := h.writer.Exec(`INSERT INTO waitfor_signals (signal_name, workflow_id, created_at) VALUES ('epic-42-answered', ?, ?)`, row.id, nowMs-800_000); err != nil {
					t.Fatal(err)
				}
			},
			want: want{status: "running", beat: nowMs - 800_000, traits: model.Traits{NoProcessExpected: true, MergesItself: merges},
				question: "question posted on the Epic", kind: "question", field: [2]string{"signal", "epic-42-answered"}}},
		{name: "waiting-human on a review signal waits for the review",
			row: wf{state: "waiting-human", created: nowMs - 900_000, updated: nowMs - 800_000},
			setup: func(t *testing.T, h home, row *wf) {
				if _, err := h.writer.Exec(`INSERT INTO waitfor_signals (signal_name, workflow_id, created_at) VALUES ('epic-42-review-resolved', ?, ?)`, row.id, nowMs-800_000); err != nil {
					t.Fatal(err)
				}
			},
			want: want{status: "running", beat: nowMs - 800_000, traits: model.Traits{NoProcessExpected: true, MergesItself: merges},
				question: "pull request waiting for review", kind: "review"}},
		{name: "rate-limited is paused and expects no process",
			row:  wf{state: "rate-limited", created: nowMs - 900_000, updated: nowMs - 899_500},
			want: want{status: "paused", beat: nowMs - 899_500, traits: model.Traits{NoProcessExpected: true, MergesItself: merges}}},
		{name: "controlled by a human is never killed",
			row:  wf{state: "running", created: nowMs - 10_000_000, updated: nowMs - 960_000, controlledBy: "human"},
			want: want{status: "running", beat: nowMs - 960_000, traits: model.Traits{NeverKill: true, MergesItself: merges}}},
		{name: "completed is completed",
			row:  wf{state: "completed", created: nowMs - 900_000, updated: nowMs - 100_000},
			want: want{status: "completed", beat: nowMs - 100_000, traits: model.Traits{MergesItself: merges}}},
		{name: "compensated is withdrawn with its end_reason",
			row:  wf{state: "compensated", created: nowMs - 900_000, updated: nowMs - 100_000, endReason: "session-ended-before-Stop"},
			want: want{status: "withdrawn", beat: nowMs - 100_000, traits: model.Traits{MergesItself: merges}, field: [2]string{"end_reason", "session-ended-before-Stop"}}},
		{name: "failed is withdrawn with the watchdog's reason",
			row: wf{state: "failed", created: nowMs - 900_000, updated: nowMs - 100_000},
			setup: func(t *testing.T, h home, row *wf) {
				if _, err := h.writer.Exec(`INSERT INTO events (workflow_id, ts, type, payload_json) VALUES (?, ?, 'watchdog.failed', '{"reason":"idle-timeout"}')`, row.id, nowMs-100_000); err != nil {
					t.Fatal(err)
				}
			},
			want: want{status: "withdrawn", beat: nowMs - 100_000, traits: model.Traits{MergesItself: merges}, field: [2]string{"watchdog_reason", "idle-timeout"}}},
		{name: "cancelled is withdrawn",
			row:  wf{state: "cancelled", created: nowMs - 900_000, updated: nowMs - 100_000},
			want: want{status: "withdrawn", beat: nowMs - 100_000, traits: model.Traits{MergesItself: merges}, field: [2]string{"state", "cancelled"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHome(t)
			row := tc.row
			row.id, row.epic, row.worktree = "wf-a1", "42", h.worktree
			// Before the insert, since a transcript is a column; the rows of
			// events and waitfor_signals may come first (the fixture's writer
			// does not enforce foreign keys).
			if tc.setup != nil {
				tc.setup(t, h, &row)
			}
			insertWorkflow(t, h.writer, row)
			nodes := readNodes(t, h.dir)
			n := nodes["42|wf-a1"]
			if n == nil {
				t.Fatalf("no node among %d", len(nodes))
			}
			hb := n.Heartbeat
			if n.Source != string(sources.Middle) || !n.HasHeartbeat || !hb.HasParentField || hb.ParentHeartbeat != "" || hb.PID != 0 {
				t.Fatalf("source %q, record %v, heartbeat %+v", n.Source, n.HasHeartbeat, hb)
			}
			if n.HeartbeatPath != h.db+"#wf-a1" || n.ID != "acme/api/wf-a1" || n.InfraDir != h.worktree || hb.Optional().Worktree != h.worktree {
				t.Errorf("key %q, id %q, infra %q, worktree %q", n.HeartbeatPath, n.ID, n.InfraDir, hb.Optional().Worktree)
			}
			if hb.Status != tc.want.status {
				t.Errorf("status = %q, want %q", hb.Status, tc.want.status)
			}
			if !n.BeatMtime.Equal(time.UnixMilli(tc.want.beat)) {
				t.Errorf("beat = %v, want %v", n.BeatMtime.UTC(), time.UnixMilli(tc.want.beat).UTC())
			}
			// Every row's sign of life is the watchdog's activity baseline.
			wantTraits := tc.want.traits
			wantTraits.SignOfLife = model.SignActivity
			if n.Traits != wantTraits {
				t.Errorf("traits = %+v, want %+v", n.Traits, wantTraits)
			}
			switch {
			case tc.want.question == "" && n.Blocked != nil:
				t.Errorf("blocked %+v, want none", n.Blocked)
			case tc.want.question != "" && (n.Blocked == nil || n.Blocked.Question != tc.want.question || n.Blocked.Kind != tc.want.kind):
				t.Errorf("blocked %+v, want %q (%s)", n.Blocked, tc.want.question, tc.want.kind)
			}
			if f := tc.want.field; f[0] != "" && field(n, f[0]) != f[1] {
				t.Errorf("field %s = %q, want %q", f[0], field(n, f[0]), f[1])
			}
		})
	}
}
