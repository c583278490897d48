package demo

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// claudeFile is the part of a sessions/<pid>.json the tests look at.
type claudeFile struct {
	PID       int    `json:"pid"`
	ProcStart string `json:"procStart"`
	SessionID string `json:"sessionId"`
	Status    string `json:"status"`
}

func readClaudeSessions(t *testing.T, home string) map[string]claudeFile {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(home, claudeSessions))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]claudeFile{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(home, claudeSessions, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var f claudeFile
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if e.Name() != strconv.Itoa(f.PID)+".json" {
			t.Errorf("%s names pid %d", e.Name(), f.PID)
		}
		out[f.SessionID] = f
	}
	return out
}

// The demo's Claude Code sessions are processes of the fleet, each writing
// its own sessions/<pid>.json with its own procStart, in the fleet's home
// and never in $HOME/.claude; the crashed one's file stays behind reading
// idle with its pid gone, and on Stop the lead exits cleanly, its file
// removed as Claude Code removes it.
func TestDemoClaudeSessionsWriteTheirOwnFiles(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := Start(ctx, t.TempDir(), binary)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			f.Stop()
		}
	}()
	sessions := readClaudeSessions(t, f.ClaudeHome())
	pids := f.Pids()
	for _, s := range claudeScenario() {
		got, ok := sessions[s.id]
		if !ok {
			t.Errorf("session %s wrote no file", s.id)
			continue
		}
		if !slices.Contains(pids, got.PID) {
			t.Errorf("session %s: pid %d is no process the fleet started (%v)", s.id, got.PID, pids)
			continue
		}
		if want, err := procStart(got.PID); err != nil || got.ProcStart != want {
			t.Errorf("session %s: procStart %q, the process's own %q (%v)", s.id, got.ProcStart, want, err)
		}
	}
	// The crash: at 5 s, its file left reading idle and its pid gone.
	crash := claudeScenario()[1]
	deadline := time.Now().Add(20 * time.Second)
	for !pidGone(sessions[crash.id].PID) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	left := readClaudeSessions(t, f.ClaudeHome())
	if c, ok := left[crash.id]; !ok || c.Status != "idle" || !pidGone(c.PID) {
		t.Errorf("the crashed session's file: %+v (there %v, pid gone %v), want it left reading idle", c, ok, pidGone(c.PID))
	}
	stopped = true
	if err := f.Stop(); err != nil {
		t.Error(err)
	}
	left = readClaudeSessions(t, f.ClaudeHome())
	if _, ok := left[claudeScenario()[0].id]; ok {
		t.Error("the lead's session file outlived its clean exit")
	}
	if _, err := os.Stat(filepath.Join(home, ".claude")); !os.IsNotExist(err) {
		t.Errorf("$HOME/.claude: %v, want nothing written there", err)
	}
}

// A session's status follows its script, round again after its cycle.
func TestClaudeStatusAt(t *testing.T) {
	lead := claudeScenario()[0]
	for _, tc := range []struct {
		at   time.Duration
		want string
	}{
		{0, "busy"}, {2900 * time.Millisecond, "busy"}, {3 * time.Second, "waiting"}, {6 * time.Second, "busy"},
		// The long busy stretch the README's screenshot is drawn in.
		{8 * time.Second, "busy"}, {19900 * time.Millisecond, "busy"},
		{20 * time.Second, "idle"}, {25 * time.Second, "busy"}, {28 * time.Second, "waiting"}, {45 * time.Second, "idle"},
	} {
		if got := lead.statusAt(tc.at).status; got != tc.want {
			t.Errorf("at %s: %s, want %s", tc.at, got, tc.want)
		}
	}
}

// A busy session beats: its updatedAt moves every claudeBusyBeat while its
// statusUpdatedAt stays at the status's change, so the session reads
// neither quiet while it works nor changed; waiting or idle, it writes
// nothing until its status changes.
func TestClaudeBusySessionBeats(t *testing.T) {
	type record struct {
		Status          string `json:"status"`
		UpdatedAt       int64  `json:"updatedAt"`
		StatusUpdatedAt int64  `json:"statusUpdatedAt"`
	}
	lead := claudeScenario()[0]
	c, err := newClaude(ClaudeOptions{Home: t.TempDir(), Session: lead.id}, lead)
	if err != nil {
		t.Fatal(err)
	}
	read := func() record {
		t.Helper()
		b, err := os.ReadFile(c.sessionFile())
		if err != nil {
			t.Fatal(err)
		}
		var r record
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	// step at elapsed, a few ms of real time after the last, so that a
	// rewrite shows in the record's milliseconds.
	step := func(elapsed time.Duration) record {
		t.Helper()
		time.Sleep(5 * time.Millisecond)
		if err := c.step(elapsed, elapsed == 0); err != nil {
			t.Fatal(err)
		}
		return read()
	}
	prev := step(0)
	for _, tc := range []struct {
		name          string
		at            time.Duration
		status        string
		beat, changed bool // updatedAt moved; statusUpdatedAt moved
	}{
		{"busy, within a beat: nothing written", claudeBusyBeat / 2, "busy", false, false},
		{"busy, a beat on: updatedAt moves", claudeBusyBeat, "busy", true, false},
		{"busy, another beat", 2 * claudeBusyBeat, "busy", true, false},
		{"waiting: the status changed", 3 * time.Second, "waiting", true, true},
		{"waiting, a beat on: nothing written", 3*time.Second + 2*claudeBusyBeat, "waiting", false, false},
		{"busy again", 6 * time.Second, "busy", true, true},
		{"busy, within a beat of the change", 6*time.Second + claudeBusyBeat/2, "busy", false, false},
		{"busy, a beat on", 6*time.Second + claudeBusyBeat, "busy", true, false},
		{"idle: the status changed", 20 * time.Second, "idle", true, true},
		{"idle, seconds on: nothing written", 23 * time.Second, "idle", false, false},
	} {
		got := step(tc.at)
		if got.Status != tc.status {
			t.Errorf("%s: status %s, want %s", tc.name, got.Status, tc.status)
		}
		if beat := got.UpdatedAt != prev.UpdatedAt; beat != tc.beat {
			t.Errorf("%s: updatedAt %d -> %d, want moved %v", tc.name, prev.UpdatedAt, got.UpdatedAt, tc.beat)
		}
		if changed := got.StatusUpdatedAt != prev.StatusUpdatedAt; changed != tc.changed {
			t.Errorf("%s: statusUpdatedAt %d -> %d, want moved %v", tc.name, prev.StatusUpdatedAt, got.StatusUpdatedAt, tc.changed)
		}
		prev = got
	}
}
