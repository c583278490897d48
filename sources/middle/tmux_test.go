package middle

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// paneStarted is the create time the fake probe gives every pane pid but
// unreadablePID: a minute before now, after every row that owns a
// session was created; sessionCreated is when the fake tmux says every
// session was created, the same second.
const (
	paneStarted   = float64(nowMs/1000-60) + 0.25
	unreadablePID = 9999
)

var sessionCreated = time.Unix(nowMs/1000-60, 0)

// sessionsOf is a fake tmux's listing: each session's pane pid, every
// session created at sessionCreated.
func sessionsOf(panes map[string]int) map[string]Session {
	if panes == nil {
		return nil
	}
	out := make(map[string]Session, len(panes))
	for name, pid := range panes {
		out[name] = Session{PanePID: pid, Created: sessionCreated}
	}
	return out
}

// oldPanePID is a pane pid whose process the fake probe says was created
// an hour before now: before every row.
const oldPanePID = 7777

func fakeStarted(pid int) (float64, error) {
	switch pid {
	case unreadablePID:
		return 0, fmt.Errorf("process %d: not found", pid)
	case oldPanePID:
		return float64(nowMs/1000 - 3600), nil
	}
	return paneStarted, nil
}

// fakeSource answers for tmux with a fixed listing (or error), and counts
// the calls.
func fakeSource(panes map[string]int, err error, calls *int) *Source {
	return &Source{
		PaneLookup: func() (map[string]Session, error) {
			if calls != nil {
				*calls++
			}
			return sessionsOf(panes), err
		},
		ProcessStarted: fakeStarted,
	}
}

// A row is judged by its tmux session only when it may own it: launching
// or running (every drive kills its session at the end) and the newest row
// with that name (the next round of the Epic reuses it). Such a row gets
// its pane's pid and create time; one whose session tmux does not list
// gets no pid and a note saying so, and is judged by its beat.
func TestOnlyTheSessionsOwnerGetsItsPanePid(t *testing.T) {
	type want struct {
		pid     int
		started float64
		note    string
	}
	owner := want{pid: 4242, started: paneStarted}
	tests := []struct {
		name  string
		rows  []wf
		panes map[string]int
		want  map[string]want // by workflow id
	}{
		{name: "a running row gets its live session's pane pid and create time",
			rows:  []wf{{id: "wf-a1", state: "running", session: "middle-acme-api-42"}},
			panes: map[string]int{"middle-acme-api-42": 4242, "other": 7},
			want:  map[string]want{"wf-a1": owner}},
		{name: "a launching row gets its pane pid",
			rows:  []wf{{id: "wf-a1", state: "launching", session: "middle-acme-api-42"}},
			panes: map[string]int{"middle-acme-api-42": 4242},
			want:  map[string]want{"wf-a1": owner}},
		{name: "an older running round never claims the session a newer round reuses",
			rows: []wf{{id: "wf-a1", state: "running", session: "middle-acme-api-42", created: nowMs - 900_000},
				{id: "wf-a2", state: "running", session: "middle-acme-api-42", created: nowMs - 100_000}},
			panes: map[string]int{"middle-acme-api-42": 4242},
			want:  map[string]want{"wf-a1": {}, "wf-a2": owner}},
		{name: "a running round under a newer parked round claims nothing",
			rows: []wf{{id: "wf-a1", state: "running", session: "middle-acme-api-42", created: nowMs - 900_000},
				{id: "wf-a2", state: "waiting-human", session: "middle-acme-api-42", created: nowMs - 100_000}},
			panes: map[string]int{"middle-acme-api-42": 4242},
			want:  map[string]want{"wf-a1": {}, "wf-a2": {}}},
		{name: "rows that own no session never claim a live one of their name",
			rows: []wf{{id: "wf-p", state: "pending", session: "s-pending"},
				{id: "wf-w", state: "waiting-human", session: "s-parked"},
				{id: "wf-r", state: "rate-limited", session: "s-limited"},
				{id: "wf-c", state: "completed", session: "s-done"},
				{id: "wf-f", state: "failed", session: "s-failed"}},
			panes: map[string]int{"s-pending": 1, "s-parked": 2, "s-limited": 3, "s-done": 4, "s-failed": 5},
			want:  map[string]want{"wf-p": {}, "wf-w": {}, "wf-r": {}, "wf-c": {}, "wf-f": {}}},
		{name: "a running row whose session is gone has no pid and says so",
			rows:  []wf{{id: "wf-a1", state: "running", session: "middle-acme-api-42"}},
			panes: map[string]int{"middle-acme-api-43": 4343},
			want:  map[string]want{"wf-a1": {note: "session middle-acme-api-42 gone"}}},
		{name: "a session whose panes have all exited gives no pid",
			rows:  []wf{{id: "wf-a1", state: "running", session: "middle-acme-api-42"}},
			panes: map[string]int{"middle-acme-api-42": 0},
			want:  map[string]want{"wf-a1": {note: "session middle-acme-api-42 has no live pane"}}},
		{name: "a pane whose create time cannot be read gives no pid, never one that cannot be told from a reuse",
			rows:  []wf{{id: "wf-a1", state: "running", session: "middle-acme-api-42"}},
			panes: map[string]int{"middle-acme-api-42": unreadablePID},
			want:  map[string]want{"wf-a1": {note: "pane pid 9999: process 9999: not found"}}},
		{name: "a running row with no session name asks nothing",
			rows: []wf{{id: "wf-a1", state: "running"}},
			want: map[string]want{"wf-a1": {}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHome(t)
			for i, row := range tc.rows {
				row.epic = "42"
				if row.created == 0 {
					row.created = nowMs - int64(900_000-i)
				}
				row.updated = row.created
				insertWorkflow(t, h.writer, row)
			}
			facts := fakeSource(tc.panes, nil, nil).Read(h.dir, now)
			if len(facts.Problems) > 0 {
				t.Fatalf("problems: %v", facts.Problems)
			}
			got := map[string]want{}
			for _, n := range facts.Nodes {
				got[field(n, "workflow")] = want{pid: n.Heartbeat.PID, started: n.Heartbeat.Started, note: field(n, "tmux")}
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// A row's session_name is a name any tmux session may have: the pane's
// create time, read from the pane itself, cannot tell middle's session
// from another. So a session gives its pane's pid only when middle would
// have made it for the row: its name is the one middle's sessionNameFor
// gives the row's run (implementation: middle-<repo slug>-<Epic>;
// recommender, docs bot: middle-rec-/middle-docs-<repo slug>-<hash>, as
// tmux keeps it: '.' and ':' become '_'), created after the row (to
// tmux's second), its pane's process too.
func TestOnlyASessionMiddleWouldHaveMadeGivesItsPanePid(t *testing.T) {
	type want struct {
		pid  int
		note string
	}
	given := want{pid: 4242}
	tests := []struct {
		name    string
		row     wf
		listed  string // the name tmux lists ("" : the row's)
		created int64  // the row's created_at ("" : 15 minutes ago)
		panePID int    // the session's pane (0: 4242)
		want    want
	}{
		{name: "middle's own name for the Epic", row: wf{epic: "42", session: "middle-acme-api-42"}, want: given},
		{name: "the default session 0", row: wf{epic: "42", session: "0"},
			want: want{note: "session 0 is not the name middle gives acme/api's Epic 42 (middle-acme-api-42): not its agent"}},
		{name: "a session of the user's", row: wf{epic: "42", session: "notes"},
			want: want{note: "session notes is not the name middle gives acme/api's Epic 42 (middle-acme-api-42): not its agent"}},
		{name: "another Epic's name", row: wf{epic: "42", session: "middle-acme-api-43"},
			want: want{note: "session middle-acme-api-43 is not the name middle gives acme/api's Epic 42 (middle-acme-api-42): not its agent"}},
		{name: "another repo's name", row: wf{epic: "42", session: "middle-acme-web-42"},
			want: want{note: "session middle-acme-web-42 is not the name middle gives acme/api's Epic 42 (middle-acme-api-42): not its agent"}},
		{name: "a repo slugged as middle slugs it", row: wf{repo: "acme/api.v2", epic: "42", session: "middle-acme-api-v2-42"}, want: given},
		{name: "an Epic ref with a dot, as tmux keeps it", row: wf{epic: "v1.2", session: "middle-acme-api-v1.2"},
			listed: "middle-acme-api-v1_2", want: given},
		{name: "the recommender's name", row: wf{kind: "recommender", session: "middle-rec-acme-api-1a2b3c4d"}, want: given},
		{name: "the docs bot's name", row: wf{kind: "documentation", session: "middle-docs-acme-api-0f"}, want: given},
		{name: "the recommender's name with no hash", row: wf{kind: "recommender", session: "middle-rec-acme-api-zz"},
			want: want{note: "session middle-rec-acme-api-zz is not the name middle gives a recommender of acme/api (middle-rec-acme-api-<hash>): not its agent"}},
		{name: "the recommender's name with a hash too long", row: wf{kind: "recommender", session: "middle-rec-acme-api-1a2b3c4d5"},
			want: want{note: "session middle-rec-acme-api-1a2b3c4d5 is not the name middle gives a recommender of acme/api (middle-rec-acme-api-<hash>): not its agent"}},
		{name: "the docs bot's name for an Epic's run", row: wf{epic: "42", session: "middle-docs-acme-api-0f"},
			want: want{note: "session middle-docs-acme-api-0f is not the name middle gives acme/api's Epic 42 (middle-acme-api-42): not its agent"}},
		{name: "an implementation without an Epic", row: wf{session: "middle-acme-api-"},
			want: want{note: "session middle-acme-api-: middle names no session for an implementation without an Epic"}},
		{name: "middle's name, created before the row", row: wf{epic: "42", session: "middle-acme-api-42"}, created: nowMs - 30_000,
			want: want{note: "session middle-acme-api-42 was created " + sessionCreated.UTC().Format(time.RFC3339) +
				", before the row (" + time.UnixMilli(nowMs-30_000).UTC().Format(time.RFC3339) + "): not its agent"}},
		{name: "middle's name, created in the row's second", row: wf{epic: "42", session: "middle-acme-api-42"},
			created: sessionCreated.UnixMilli() + 999, want: given},
		{name: "middle's name, but its pane's process is older than the row", row: wf{epic: "42", session: "middle-acme-api-42"},
			panePID: oldPanePID, want: want{note: "pane pid 7777 was created before the row: not its agent"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHome(t)
			row := tc.row
			row.id, row.state = "wf-a1", "running"
			row.created = nowMs - 900_000
			if tc.created != 0 {
				row.created = tc.created
			}
			row.updated = row.created
			insertWorkflow(t, h.writer, row)
			listed, pid := tc.listed, tc.panePID
			if listed == "" {
				listed = row.session
			}
			if pid == 0 {
				pid = 4242
			}
			facts := fakeSource(map[string]int{listed: pid}, nil, nil).Read(h.dir, now)
			if len(facts.Problems) > 0 || len(facts.Nodes) != 1 {
				t.Fatalf("%d nodes, problems: %v", len(facts.Nodes), facts.Problems)
			}
			n := facts.Nodes[0]
			if got := (want{pid: n.Heartbeat.PID, note: field(n, "tmux")}); got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// tmux is asked once per read, whatever the number of rows, and not at all
// when no row owns a session; a tmux that cannot be asked costs no row and
// is no problem of the store: each owner is judged by its beat, with a note
// saying why it has no pid.
func TestTmuxIsAskedOncePerReadAndItsFailureCostsNoRow(t *testing.T) {
	h := newHome(t)
	insertWorkflow(t, h.writer, wf{id: "wf-c", epic: "41", state: "completed", session: "middle-acme-api-41", created: nowMs - 5000})
	var calls int
	if facts := fakeSource(nil, nil, &calls).Read(h.dir, now); len(facts.Nodes) != 1 || calls != 0 {
		t.Fatalf("%d nodes, %d calls to tmux with no owner: want 1 and 0", len(facts.Nodes), calls)
	}
	for i := range 5 {
		insertWorkflow(t, h.writer, wf{id: "wf-" + strconv.Itoa(i), epic: strconv.Itoa(42 + i), state: "running",
			session: "middle-acme-api-" + strconv.Itoa(42+i), created: nowMs - 4000})
	}
	facts := fakeSource(map[string]int{"middle-acme-api-42": 4242}, nil, &calls).Read(h.dir, now)
	if len(facts.Nodes) != 6 || calls != 1 {
		t.Fatalf("%d nodes, %d calls to tmux: want 6 and 1", len(facts.Nodes), calls)
	}
	for _, n := range facts.Nodes {
		// tmux answered: a session it lacks has no process, it is not unseen.
		if n.Traits.ProcessUnseen {
			t.Errorf("%s: process unseen, though tmux answered", field(n, "workflow"))
		}
	}

	const why = "tmux list-panes: error connecting to /tmp/tmux-1000/default (No such file or directory)"
	facts = fakeSource(nil, errors.New(why), nil).Read(h.dir, now)
	if len(facts.Problems) > 0 || len(facts.Nodes) != 6 {
		t.Fatalf("%d nodes, problems %v: want 6 and none", len(facts.Nodes), facts.Problems)
	}
	for _, n := range facts.Nodes {
		owner := n.Heartbeat.Status == "running"
		if n.Heartbeat.PID != 0 || (field(n, "tmux") == why) != owner {
			t.Errorf("%s: pid %d, note %q", field(n, "workflow"), n.Heartbeat.PID, field(n, "tmux"))
		}
		// An owner's process is unknown, not absent (watchdog.ts, rule 2:
		// a status error is inconclusive).
		if n.Traits.ProcessUnseen != owner {
			t.Errorf("%s: process unseen %v, want %v", field(n, "workflow"), n.Traits.ProcessUnseen, owner)
		}
	}
}

// list-panes -a lists panes by session, window and pane index; a session's
// agent is its first live pane; every line carries its session's creation.
func TestParseSessions(t *testing.T) {
	at := func(pid int) Session { return Session{PanePID: pid, Created: time.Unix(1750699940, 0)} }
	tests := []struct {
		name, out string
		want      map[string]Session
	}{
		{name: "one pane per session", out: "101 0 1750699940 middle-acme-api-42\n102 0 1750699940 middle-acme-web-7\n",
			want: map[string]Session{"middle-acme-api-42": at(101), "middle-acme-web-7": at(102)}},
		{name: "the first live pane of a session", out: "101 0 1750699940 s\n102 0 1750699940 s\n", want: map[string]Session{"s": at(101)}},
		{name: "an exited pane is passed over", out: "101 1 1750699940 s\n102 0 1750699940 s\n", want: map[string]Session{"s": at(102)}},
		{name: "a session of exited panes is listed with no pid", out: "101 1 1750699940 s\n102 1 1750699940 s\n", want: map[string]Session{"s": at(0)}},
		{name: "a name with spaces", out: "101 0 1750699940 my session\n", want: map[string]Session{"my session": at(101)}},
		{name: "lines that do not read are skipped", out: "\nx 0 1750699940 s\n-3 0 1750699940 t\n104 0 1750699940\n106 0 x v\n107 0 0 w\n105 0 1750699940 u\r\n",
			want: map[string]Session{"u": at(105)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseSessions(tc.out); !maps.EqualFunc(got, tc.want, func(a, b Session) bool { return a.PanePID == b.PanePID && a.Created.Equal(b.Created) }) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// tmuxServer starts a tmux server of its own on socket ("": the default
// one) in a directory of its own (TMUX_TMPDIR, which the code under test
// inherits), with nothing of the user's (no config, no $TMUX) and one
// detached session running `sleep 60`. The server and its directory go
// when the test ends.
func tmuxServer(t *testing.T, socket, session string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux on PATH")
	}
	// A short directory: a unix socket's path has a small limit.
	dir, err := os.MkdirTemp("", "dt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Setenv("TMUX_TMPDIR", dir)
	args := []string{"-f", os.DevNull}
	if socket != "" {
		args = append(args, "-L", socket)
	}
	run := func(sub ...string) error {
		cmd := exec.Command("tmux", append(args, sub...)...)
		cmd.Env = withoutEnv(os.Environ(), "TMUX")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("tmux %s: %v: %s", strings.Join(sub, " "), err, out)
		}
		return nil
	}
	// argv after the session name: tmux runs it without a shell.
	if err := run("new-session", "-d", "-s", session, "-x", "80", "-y", "24", "sleep", "60"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run("kill-server") })
}

func uniqueSocket() string {
	return fmt.Sprintf("dispatchtop-test-%d-%d", os.Getpid(), time.Now().UnixNano())
}

// A real tmux server: the running row gets the pid of its session's pane,
// the `sleep` tmux started for it, and that process's create time; a
// running row whose session the server does not have gets none.
func TestRunningRowGetsThePanePidOfARealTmuxSession(t *testing.T) {
	socket := uniqueSocket()
	before := time.Now()
	tmuxServer(t, socket, "middle-acme-api-42")
	after := time.Now()

	h := newHome(t)
	insertWorkflow(t, h.writer,
		wf{id: "wf-a1", epic: "42", state: "running", session: "middle-acme-api-42", created: nowMs - 5000, updated: nowMs - 5000},
		wf{id: "wf-b1", epic: "43", state: "running", session: "middle-acme-api-43", created: nowMs - 4000, updated: nowMs - 4000})
	src := New()
	src.PaneLookup = Tmux{Socket: socket}.Sessions
	nodes := readNodesWith(t, h.dir, src)

	n := nodes["42|wf-a1"]
	pid := n.Heartbeat.PID
	if pid <= 0 || field(n, "tmux") != "" {
		t.Fatalf("pid %d, note %q: want the pane's pid", pid, field(n, "tmux"))
	}
	if runtime.GOOS == "linux" {
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil || string(cmdline) != "sleep\x0060\x00" {
			t.Errorf("pid %d runs %q (%v): want the pane's sleep 60", pid, cmdline, err)
		}
	}
	// The create time is in clock ticks since a boot time known to the
	// second: within a second or two of when the session started.
	started := n.Heartbeat.StartedTime()
	if started.Before(before.Add(-2*time.Second)) || started.After(after.Add(2*time.Second)) {
		t.Errorf("started %v: want between %v and %v", started, before, after)
	}
	if b := nodes["43|wf-b1"]; b.Heartbeat.PID != 0 || field(b, "tmux") != "session middle-acme-api-43 gone" {
		t.Errorf("a row with no session: pid %d, note %q", b.Heartbeat.PID, field(b, "tmux"))
	}
}

// Without a socket, tmux is asked on the user's default server, the one
// middle's daemon uses, even from inside another tmux client (whose $TMUX
// would name that client's server).
func TestTmuxAsksTheDefaultServerEvenInsideATmuxClient(t *testing.T) {
	tmuxServer(t, "", "middle-acme-api-42")
	t.Setenv("TMUX", filepath.Join(os.Getenv("TMUX_TMPDIR"), "not-this-server")+",1,0")

	panes, err := Tmux{}.Sessions()
	if err != nil || panes["middle-acme-api-42"].PanePID <= 0 {
		t.Fatalf("panes %v, error %v: want the default server's session", panes, err)
	}
}

// A tmux that cannot be asked is an error of one line saying why, never a
// crash or an empty listing (which would say every session is gone).
func TestTmuxThatCannotBeAskedSaysWhy(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) Tmux
		cause string
	}{
		{name: "no tmux on PATH", cause: "no tmux on PATH", setup: func(t *testing.T) Tmux {
			t.Setenv("PATH", t.TempDir())
			return Tmux{}
		}},
		{name: "no server on the socket", cause: "error connecting to", setup: func(t *testing.T) Tmux {
			if _, err := exec.LookPath("tmux"); err != nil {
				t.Skip("no tmux on PATH")
			}
			return Tmux{Socket: uniqueSocket()}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			panes, err := tc.setup(t).Sessions()
			if err == nil || panes != nil {
				t.Fatalf("panes %v, error %v: want an error", panes, err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "tmux list-panes: ") || !strings.Contains(msg, tc.cause) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming %q", msg, tc.cause)
			}
		})
	}
}

// A watcher reads the store again after every write to it: the reads that
// follow one answer of tmux within PaneTTL take that answer, so a busy
// store costs one tmux process per PaneTTL, not one per read. An answer
// serves again only while it gives the owner a live pane: a session it
// lacks, or whose pane's process has gone since, may be the next round's,
// and an error is asked again; the first read past the TTL asks again.
func TestTmuxAnswerServesTheReadsOfOnePaneTTL(t *testing.T) {
	h := newHome(t)
	insertWorkflow(t, h.writer, wf{id: "wf-a1", epic: "42", state: "running", session: "middle-acme-api-42", created: nowMs - 300_000})
	calls := 0
	var answer map[string]int
	var answerErr error
	gone := map[int]bool{}
	clock := time.Unix(1750699100, 0)
	src := &Source{
		PaneLookup: func() (map[string]Session, error) {
			calls++
			return sessionsOf(answer), answerErr
		},
		ProcessStarted: func(pid int) (float64, error) {
			if gone[pid] {
				return 0, fmt.Errorf("process %d: not found", pid)
			}
			return paneStarted, nil
		},
		clock: func() time.Time { return clock },
	}
	const session = "middle-acme-api-42"
	steps := []struct {
		name      string
		advance   time.Duration
		panes     map[string]int // what tmux says now
		err       error          // or why it cannot be asked
		gone      int            // a pid whose process ends now
		wantPID   int            // the row's pid
		wantCalls int            // tmux asked so far
	}{
		{name: "the first read asks", panes: map[string]int{session: 4242}, wantPID: 4242, wantCalls: 1},
		{name: "a read right after takes the answer", panes: map[string]int{session: 4343}, wantPID: 4242, wantCalls: 1},
		{name: "a read short of the TTL takes it too", advance: DefaultPaneTTL - time.Millisecond,
			panes: map[string]int{session: 4343}, wantPID: 4242, wantCalls: 1},
		{name: "the first read past it asks again", advance: time.Millisecond,
			panes: map[string]int{session: 4343}, wantPID: 4343, wantCalls: 2},
		{name: "an answer whose pane has gone since is asked again", gone: 4343,
			panes: map[string]int{session: 4444}, wantPID: 4444, wantCalls: 3},
		{name: "an answer without the session serves no read", advance: DefaultPaneTTL,
			panes: map[string]int{}, wantCalls: 4},
		{name: "the next read asks and finds the new session", panes: map[string]int{session: 4545}, wantPID: 4545, wantCalls: 5},
		{name: "a failure is asked", advance: DefaultPaneTTL, err: errors.New("tmux list-panes: no answer within 2s"), wantCalls: 6},
		{name: "and asked again", panes: map[string]int{session: 4545}, wantPID: 4545, wantCalls: 7},
	}
	for _, st := range steps {
		clock = clock.Add(st.advance)
		answer, answerErr = st.panes, st.err
		if st.gone != 0 {
			gone[st.gone] = true
		}
		facts := src.Read(h.dir, now)
		if len(facts.Nodes) != 1 || len(facts.Problems) != 0 {
			t.Fatalf("%s: %d nodes, problems %v: want one node and none", st.name, len(facts.Nodes), facts.Problems)
		}
		if pid := facts.Nodes[0].Heartbeat.PID; pid != st.wantPID || calls != st.wantCalls {
			t.Fatalf("%s: pid %d after %d calls to tmux, want %d after %d", st.name, pid, calls, st.wantPID, st.wantCalls)
		}
	}
}

// withoutEnv is env without name, for a test's own tmux.
func withoutEnv(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	return out
}
