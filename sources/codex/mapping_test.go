package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// testProgram is the name the tests' owner runs as: a copy of sleep, so
// that no codex of the host is taken for one.
const testProgram = "codexfixture"

func byID(t *testing.T, src *Source, root string, now time.Time) map[string]*model.Node {
	t.Helper()
	facts := src.Read(root, now)
	if len(facts.Problems) > 0 {
		t.Fatalf("problems: %v", facts.Problems)
	}
	out := map[string]*model.Node{}
	for _, n := range facts.Nodes {
		out[n.ID] = n
	}
	return out
}

func field(n *model.Node, name string) string {
	for _, f := range n.SourceFields() {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// TestMapping holds one case per row of the mapping (docs/sources.md,
// Codex CLI): a thread as Codex leaves it, the processes beside it, and
// what its node must say once classified.
func TestMapping(t *testing.T) {
	tests := []struct {
		name string
		// build writes the home and starts its processes; it returns the
		// thread judged and the pid expected (0: none).
		build     func(t *testing.T, h *home, now int64) (id string, pid int)
		status    string
		state     model.State
		parent    string // the parent thread's id, "" for a root
		unseen    bool   // Traits.ProcessUnseen
		ended     bool   // Rare.Ended set: dead at once
		flag      model.Flag
		fieldName string
		fieldWant string
	}{
		{name: "an archived thread is finished",
			build: func(t *testing.T, h *home, now int64) (string, int) {
				h.thread(t, "t-arch", now-3600, true, "")
				return "t-arch", 0
			},
			status: model.StatusCompleted, state: model.StateFinished, fieldName: "archived", fieldWant: "1"},
		{name: "a child whose edge its parent closed is finished",
			build: func(t *testing.T, h *home, now int64) (string, int) {
				h.thread(t, "t-root", now, false, "")
				h.thread(t, "t-child", now, false, "t-root")
				h.edge(t, "t-root", "t-child", "closed")
				return "t-child", 0
			},
			status: model.StatusCompleted, state: model.StateFinished, parent: "t-root", fieldName: "edge_status", fieldWant: "closed"},
		{name: "an edge status Codex does not write is unknown_status, never dead",
			build: func(t *testing.T, h *home, now int64) (string, int) {
				h.thread(t, "t-root", now, false, "")
				h.thread(t, "t-child", now, false, "t-root")
				h.edge(t, "t-root", "t-child", "suspended")
				return "t-child", 0
			},
			status: "edge suspended", state: model.StateRunning, parent: "t-root", flag: model.FlagUnknownStatus,
			fieldName: "edge_status", fieldWant: "suspended"},
		{name: "an open thread whose rollout its codex holds open runs with that pid",
			build: func(t *testing.T, h *home, now int64) (string, int) {
				rollout := h.thread(t, "t-live", now, false, "")
				cmd := fakeCodex(t, testProgram, []string{"CODEX_HOME=" + h.dir}, rollout)
				return "t-live", cmd.Process.Pid
			},
			status: model.StatusRunning, state: model.StateRunning},
		{name: "an open thread with no codex of its home alive is dead",
			build: func(t *testing.T, h *home, now int64) (string, int) {
				h.thread(t, "t-dead", now, false, "")
				return "t-dead", 0
			},
			status: model.StatusRunning, state: model.StateDead, ended: true, fieldName: "owner", fieldWant: "none"},
		{name: "an open thread quiet past sources.HistoryAfter with no codex alive ended: finished, not dead",
			build: func(t *testing.T, h *home, now int64) (string, int) {
				rollout := h.thread(t, "t-past", now-3*3600, false, "")
				old := time.Unix(now-3*3600, 0)
				if err := os.Chtimes(rollout, old, old); err != nil {
					t.Fatal(err)
				}
				return "t-past", 0
			},
			status: model.StatusWithdrawn, state: model.StateFinished, fieldName: "owner", fieldWant: "none"},
		{name: "a codex of another home is not the owner",
			build: func(t *testing.T, h *home, now int64) (string, int) {
				rollout := h.thread(t, "t-other", now, false, "")
				fakeCodex(t, testProgram, []string{"CODEX_HOME=" + t.TempDir()}, "")
				_ = rollout
				return "t-other", 0
			},
			status: model.StatusRunning, state: model.StateDead, ended: true},
		{name: "a codex owning the home by $HOME/.codex but not holding the rollout leaves it unverified, never dead at once",
			build: func(t *testing.T, h *home, now int64) (string, int) {
				h.thread(t, "t-idle", now, false, "")
				fakeCodex(t, testProgram, []string{"HOME=" + filepath.Dir(h.dir)}, "")
				return "t-idle", 0
			},
			status: model.StatusRunning, state: model.StateRunning, unseen: true},
		{name: "a child's parent is its spawn edge's",
			build: func(t *testing.T, h *home, now int64) (string, int) {
				h.thread(t, "t-root", now, false, "")
				h.thread(t, "t-kid", now, false, "")
				h.edge(t, "t-root", "t-kid", "open")
				return "t-kid", 0
			},
			status: model.StatusRunning, state: model.StateDead, parent: "t-root", ended: true},
		{name: "a child's parent is parent_thread_id without an edge",
			build: func(t *testing.T, h *home, now int64) (string, int) {
				h.thread(t, "t-root", now, false, "")
				h.thread(t, "t-kid", now, false, "t-root")
				return "t-kid", 0
			},
			status: model.StatusRunning, state: model.StateDead, parent: "t-root", ended: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHome(t)
			now := time.Now()
			id, pid := tt.build(t, h, now.Unix())
			src := &Source{program: testProgram}
			nodes := byID(t, src, h.dir, now)
			n := nodes[id]
			if n == nil {
				t.Fatalf("no node %s in %v", id, nodes)
			}
			hb := n.Heartbeat
			if hb.Status != tt.status {
				t.Errorf("status = %q, want %q", hb.Status, tt.status)
			}
			if hb.PID != pid {
				t.Errorf("pid = %d, want %d", hb.PID, pid)
			}
			if pid > 0 {
				started, err := protocol.ProcessStarted(pid)
				if err != nil || hb.Started != started {
					t.Errorf("started = %v, want the process's %v (%v)", hb.Started, started, err)
				}
			}
			wantParent := ""
			if tt.parent != "" {
				wantParent = h.db + "#" + tt.parent
			}
			if hb.ParentHeartbeat != wantParent || !hb.HasParentField {
				t.Errorf("parent = %q, want %q", hb.ParentHeartbeat, wantParent)
			}
			if n.Traits.ProcessUnseen != tt.unseen {
				t.Errorf("ProcessUnseen = %v, want %v", n.Traits.ProcessUnseen, tt.unseen)
			}
			if (n.Ended() != "") != tt.ended {
				t.Errorf("ended = %q, want set %v", n.Ended(), tt.ended)
			}
			if tt.fieldName != "" && field(n, tt.fieldName) != tt.fieldWant {
				t.Errorf("field %s = %q, want %q", tt.fieldName, field(n, tt.fieldName), tt.fieldWant)
			}
			th := model.DefaultThresholds()
			liveness.ClassifyNode(n, liveness.SystemProbe{}, now, th)
			if n.State != tt.state {
				t.Errorf("state = %s (%s), want %s", n.State, n.Reason, tt.state)
			}
			if tt.flag != "" && !n.HasFlag(tt.flag) {
				t.Errorf("flags = %v, want %s", n.Flags, tt.flag)
			}
			if n.HasFlag(model.FlagKillCandidate) {
				t.Errorf("a kill candidate: %s", n.Reason)
			}
		})
	}
}

// An idle thread whose owner lives but is not seen holding it is never a
// kill candidate, however old: there is no pid proven to be its.
func TestUnverifiedOwnerIsNeverAKillCandidate(t *testing.T) {
	h := newHome(t)
	now := time.Now()
	rollout := h.thread(t, "t-old", now.Add(-3*time.Hour).Unix(), false, "")
	old := now.Add(-3 * time.Hour)
	if err := os.Chtimes(rollout, old, old); err != nil {
		t.Fatal(err)
	}
	fakeCodex(t, testProgram, []string{"CODEX_HOME=" + h.dir}, "")
	n := byID(t, &Source{program: testProgram}, h.dir, now)["t-old"]
	liveness.ClassifyNode(n, liveness.SystemProbe{}, now, model.DefaultThresholds())
	if n.HasFlag(model.FlagKillCandidate) || n.PID() != 0 {
		t.Errorf("pid %d flags %v: %s", n.PID(), n.Flags, n.Reason)
	}
	if !strings.Contains(field(n, "owner"), "none holds this rollout open") {
		t.Errorf("owner = %q", field(n, "owner"))
	}
}

// The rollout's last write is the thread's activity, newer than the row.
func TestRolloutWriteIsTheActivity(t *testing.T) {
	h := newHome(t)
	now := time.Now()
	rollout := h.thread(t, "t-a", now.Add(-time.Hour).Unix(), false, "")
	wrote := now.Add(-10 * time.Second).Truncate(time.Second)
	if err := os.Chtimes(rollout, wrote, wrote); err != nil {
		t.Fatal(err)
	}
	n := byID(t, &Source{program: testProgram}, h.dir, now)["t-a"]
	if !n.BeatMtime.Equal(wrote) || !n.ActivityMtime.Equal(wrote) {
		t.Errorf("beat %v activity %v, want %v", n.BeatMtime, n.ActivityMtime, wrote)
	}
	if n.Traits.SignOfLife != model.SignActivity {
		t.Errorf("sign of life = %v", n.Traits.SignOfLife)
	}
}

// A codex process that may not be looked at (another user's) might own the
// home: its absence as an owner is not proven, so an open thread is never
// dead by that alone, and never offered a kill.
func TestHiddenCodexLeavesOwnerUnverified(t *testing.T) {
	h := newHome(t)
	now := time.Now()
	h.thread(t, "t-x", now.Unix(), false, "")
	proc := t.TempDir()
	// The fake process is never this test's own, which the lookup passes over.
	fake := "4242"
	if os.Getpid() == 4242 {
		fake = "4243"
	}
	for _, d := range []string{"self", fake} {
		if err := os.MkdirAll(filepath.Join(proc, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(proc, fake, "comm"), []byte(testProgram+"\n"), 0o644)
	os.Mkdir(filepath.Join(proc, fake, "environ"), 0o755) // cannot be read as a file
	os.WriteFile(filepath.Join(proc, fake, "fd"), nil, 0o644)
	n := byID(t, &Source{program: testProgram, ProcDir: proc}, h.dir, now)["t-x"]
	if n.Ended() != "" || !n.Traits.ProcessUnseen || n.PID() != 0 {
		t.Errorf("ended %q unseen %v pid %d", n.Ended(), n.Traits.ProcessUnseen, n.PID())
	}
	if !strings.Contains(field(n, "owner"), "unverified: codex pid "+fake) {
		t.Errorf("owner = %q", field(n, "owner"))
	}
}
