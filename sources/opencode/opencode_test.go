package opencode

import (
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

const testProgram = "opencodefixture"

type store struct {
	dir, db string
	writer  *sql.DB
}

func newStore(t testing.TB) *store {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".local", "share", "opencode")
	db := filepath.Join(dir, dbFile)
	w := storefixtures.NewDB(t, db, storefixtures.OpencodeDDL)
	if _, err := w.Exec("INSERT INTO project (id) VALUES ('p1')"); err != nil {
		t.Fatal(err)
	}
	return &store{dir: dir, db: db, writer: w}
}

// session inserts a session as OpenCode's Session.create does; updated is
// epoch milliseconds, archived 0 for none.
func (s *store) session(t testing.TB, id, parent string, updated, archived int64) {
	t.Helper()
	var par, arch any
	if parent != "" {
		par = parent
	}
	if archived != 0 {
		arch = archived
	}
	if _, err := s.writer.Exec(`INSERT INTO session (id, project_id, parent_id, slug, directory, title, version,
		time_created, time_updated, time_archived) VALUES (?, 'p1', ?, ?, '/w', ?, '1.2.0', ?, ?, ?)`,
		id, par, id, "title of "+id, updated-1000, updated, arch); err != nil {
		t.Fatal(err)
	}
}

// fakeOpencode starts a copy of sleep named as OpenCode's binary, with env.
func fakeOpencode(t testing.TB, env []string) *exec.Cmd {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	bin := filepath.Join(t.TempDir(), testProgram)
	in, err := os.Open(sleep)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(out, in)
	in.Close()
	out.Close()
	cmd := exec.Command(bin, "60")
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
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
// OpenCode).
func TestMapping(t *testing.T) {
	tests := []struct {
		name    string
		build   func(t *testing.T, s *store, now int64)
		id      string
		status  string
		state   model.State
		parent  string
		ended   bool
		noBeat  bool // BeatNotRequired
		field   [2]string
		flagged model.Flag
	}{
		{name: "an archived session is finished", id: "ses_a",
			build:  func(t *testing.T, s *store, now int64) { s.session(t, "ses_a", "", now, now) },
			status: model.StatusCompleted, state: model.StateFinished},
		{name: "a sub-agent's session hangs under its parent", id: "ses_kid",
			build: func(t *testing.T, s *store, now int64) {
				s.session(t, "ses_root", "", now, 0)
				s.session(t, "ses_kid", "ses_root", now, 0)
				fakeOpencode(t, []string{"XDG_DATA_HOME=" + filepath.Dir(s.dir)})
			},
			status: model.StatusRunning, state: model.StateRunning, parent: "ses_root", noBeat: true},
		{name: "an unarchived session with no opencode serving its directory is dead", id: "ses_d",
			build:  func(t *testing.T, s *store, now int64) { s.session(t, "ses_d", "", now, 0) },
			status: model.StatusRunning, state: model.StateDead, ended: true, field: [2]string{"owner", "none"}},
		{name: "an unarchived session quiet past sources.HistoryAfter with no opencode alive ended: finished, not dead", id: "ses_h",
			build: func(t *testing.T, s *store, now int64) {
				s.session(t, "ses_h", "", now-int64(3*time.Hour/time.Millisecond), 0)
			},
			status: model.StatusWithdrawn, state: model.StateFinished, field: [2]string{"owner", "none"}},
		{name: "an opencode serving another directory is not its server", id: "ses_o",
			build: func(t *testing.T, s *store, now int64) {
				s.session(t, "ses_o", "", now, 0)
				fakeOpencode(t, []string{"XDG_DATA_HOME=" + t.TempDir()})
			},
			status: model.StatusRunning, state: model.StateDead, ended: true},
		{name: "an old session of a live server is quiet, never dead or killed", id: "ses_q",
			build: func(t *testing.T, s *store, now int64) {
				s.session(t, "ses_q", "", now-int64(5*time.Hour/time.Millisecond), 0)
				fakeOpencode(t, []string{"HOME=" + filepath.Dir(filepath.Dir(filepath.Dir(s.dir)))})
			},
			status: model.StatusRunning, state: model.StateRunning, noBeat: true, flagged: model.FlagQuiet},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			now := time.Now()
			tt.build(t, s, now.UnixMilli())
			facts := (&Source{programs: []string{testProgram}}).Read(s.dir, now)
			if len(facts.Problems) > 0 {
				t.Fatal(facts.Problems)
			}
			var n *model.Node
			for _, x := range facts.Nodes {
				if x.ID == tt.id {
					n = x
				}
			}
			if n == nil {
				t.Fatalf("no node %s", tt.id)
			}
			hb := n.Heartbeat
			if hb.Status != tt.status || hb.PID != 0 {
				t.Errorf("status %q pid %d, want %q and no pid", hb.Status, hb.PID, tt.status)
			}
			want := ""
			if tt.parent != "" {
				want = s.db + "#" + tt.parent
			}
			if hb.ParentHeartbeat != want {
				t.Errorf("parent = %q, want %q", hb.ParentHeartbeat, want)
			}
			if (n.Ended() != "") != tt.ended || n.Traits.BeatNotRequired != tt.noBeat {
				t.Errorf("ended %q beatNotRequired %v", n.Ended(), n.Traits.BeatNotRequired)
			}
			if tt.field[0] != "" && field(n, tt.field[0]) != tt.field[1] {
				t.Errorf("%s = %q, want %q", tt.field[0], field(n, tt.field[0]), tt.field[1])
			}
			liveness.ClassifyNode(n, liveness.SystemProbe{}, now, model.DefaultThresholds())
			if n.State != tt.state {
				t.Errorf("state %s (%s), want %s", n.State, n.Reason, tt.state)
			}
			if tt.flagged != "" && !n.HasFlag(tt.flagged) {
				t.Errorf("flags %v, want %s", n.Flags, tt.flagged)
			}
			if n.HasFlag(model.FlagKillCandidate) {
				t.Errorf("kill candidate: %s", n.Reason)
			}
		})
	}
}

// time_updated is the activity, in OpenCode's milliseconds.
func TestTimeUpdatedIsTheActivity(t *testing.T) {
	s := newStore(t)
	now := time.Now()
	ms := now.Add(-90 * time.Second).UnixMilli()
	s.session(t, "ses_t", "", ms, 0)
	n := (&Source{programs: []string{testProgram}}).Read(s.dir, now).Nodes[0]
	if !n.BeatMtime.Equal(time.UnixMilli(ms)) || n.Traits.SignOfLife != model.SignActivity {
		t.Errorf("beat %v sign %v, want %v", n.BeatMtime, n.Traits.SignOfLife, time.UnixMilli(ms))
	}
}

func TestDetect(t *testing.T) {
	s := newStore(t)
	legacy := t.TempDir()
	os.MkdirAll(filepath.Join(legacy, "storage", "session"), 0o755)
	tests := []struct {
		name string
		path string
		want bool
	}{
		{"a data directory", s.dir, true},
		{"its database", s.db, true},
		{"an older JSON storage", legacy, true},
		{"an empty directory", t.TempDir(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := New().Detect(tt.path); got != tt.want {
				t.Errorf("Detect = %v, want %v", got, tt.want)
			}
		})
	}
	facts := New().Read(legacy, time.Now())
	if len(facts.Problems) != 1 || !strings.Contains(facts.Problems[0].Error, filepath.Join(legacy, "storage")) {
		t.Errorf("older storage read as %v", facts.Problems)
	}
}

func TestDriftIsAProblemNamingFileAndField(t *testing.T) {
	tests := []struct {
		name, cause string
		ddl         []string
	}{
		{"no session table", `no table "session"`, []string{"CREATE TABLE other (id text)"}},
		{"session lacks a column", "lacks column time_updated", []string{"CREATE TABLE session (id text, parent_id text, title text, time_created integer)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), dbFile)
			storefixtures.NewDB(t, db, tt.ddl)
			facts := New().Read(filepath.Dir(db), time.Now())
			if len(facts.Nodes) != 0 || len(facts.Problems) != 1 || !strings.Contains(facts.Problems[0].Error, db) ||
				!strings.Contains(facts.Problems[0].Error, tt.cause) {
				t.Errorf("nodes %d problems %v", len(facts.Nodes), facts.Problems)
			}
		})
	}
}

// docs/sources.md: OpenCode writes while dispatchtop reads, never a byte
// changed, no committed session missing.
func TestReadsWhileOpencodeWritesLoseNoRowAndChangeNoByte(t *testing.T) {
	s := newStore(t)
	now := time.Now()
	src := &Source{programs: []string{testProgram}}
	write := func(i int) error {
		id := fmt.Sprintf("ses_%04d", i)
		if _, err := s.writer.Exec(`INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)
			VALUES (?, 'p1', ?, '/w', 't', '1', ?, ?)`, id, id, now.UnixMilli(), now.UnixMilli()); err != nil {
			return err
		}
		_, err := s.writer.Exec(`UPDATE session SET time_updated = time_updated + 1 WHERE id = ?`, id)
		return err
	}
	readAll := func(committed int) {
		t.Helper()
		facts := src.Read(s.dir, now)
		if len(facts.Problems) > 0 || len(facts.Nodes) < committed {
			t.Fatalf("read with %d committed: %d nodes, %v", committed, len(facts.Nodes), facts.Problems)
		}
	}
	const beside, between = 200, 40
	storefixtures.ReadsBesideWrites(t, s.dir, beside, between, write, readAll)
	if err := s.writer.Close(); err != nil {
		t.Fatal(err)
	}
	files := storefixtures.DirBytes(t, s.dir)
	readAll(beside + between)
	storefixtures.RequireSameBytes(t, "a read of the database at rest", files, storefixtures.DirBytes(t, s.dir))
}
