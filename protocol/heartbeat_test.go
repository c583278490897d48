package protocol

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

func readHeartbeatFile(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatalf("%s is not one JSON object: %v\n%s", path, err, data)
	}
	return fields
}

func TestHeartbeatWrittenWholeThroughTmpAndRename(t *testing.T) {
	tests := []struct {
		name    string
		hb      model.Heartbeat
		status  string
		pid     int
		started float64
		want    map[string]any
	}{
		{
			name:   "session lead has an empty parent_heartbeat",
			hb:     model.Heartbeat{Role: "lead"},
			status: model.StatusStarting, pid: 42, started: 1711234567.25,
			want: map[string]any{"pid": 42.0, "parent_heartbeat": "", "role": "lead", "started": 1711234567.25, "status": "starting"},
		},
		{
			name:   "child names its parent, team and task",
			hb:     model.Heartbeat{Role: "coding", ParentHeartbeat: "/p/.heartbeat", HeartbeatOptional: &model.HeartbeatOptional{Team: "coding", TaskID: "t-1"}},
			status: model.StatusRunning, pid: 7, started: 2,
			want: map[string]any{"pid": 7.0, "parent_heartbeat": "/p/.heartbeat", "role": "coding", "started": 2.0, "status": "running", "team": "coding", "task_id": "t-1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			infra := filepath.Join(t.TempDir(), "a", "b")
			w, err := NewHeartbeatWriter(infra, tt.hb)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(tt.status, tt.pid, tt.started); err != nil {
				t.Fatal(err)
			}
			if w.Path() != filepath.Join(infra, ".heartbeat") {
				t.Errorf("path = %s", w.Path())
			}
			got := readHeartbeatFile(t, w.Path())
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
			if _, err := os.Stat(filepath.Join(infra, HeartbeatTempFile)); !os.IsNotExist(err) {
				t.Errorf(".heartbeat.tmp left behind (stat err %v)", err)
			}
		})
	}
}

func TestHeartbeatExtraFieldsAreWrittenAndNamedFieldsWin(t *testing.T) {
	w, err := NewHeartbeatWriter(t.TempDir(), model.Heartbeat{Role: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetExtra("exit_code", 3); err != nil {
		t.Fatal(err)
	}
	if err := w.SetExtra("status", "forged"); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(model.StatusWithdrawn, 9, 1); err != nil {
		t.Fatal(err)
	}
	got := readHeartbeatFile(t, w.Path())
	if got["exit_code"] != 3.0 || got["status"] != "withdrawn" {
		t.Errorf("exit_code = %v, status = %v; want 3 and withdrawn", got["exit_code"], got["status"])
	}
}

func TestBeatBumpsOnlyTheMtime(t *testing.T) {
	w, err := NewHeartbeatWriter(t.TempDir(), model.Heartbeat{Role: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(model.StatusRunning, 1234, 5); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(w.Path())
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(w.Path(), old, old); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Second)
	if err := w.Beat(now); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !st.ModTime().Equal(now) {
		t.Errorf("mtime = %v, want %v", st.ModTime(), now)
	}
	after, _ := os.ReadFile(w.Path())
	if string(after) != string(before) {
		t.Errorf("beat changed the content:\n%s\n->\n%s", before, after)
	}
	os.Remove(w.Path())
	if err := w.Beat(now); err == nil || !strings.Contains(err.Error(), w.Path()) {
		t.Errorf("beat on a removed heartbeat: err = %v, want one naming the path", err)
	}
}

func TestSetHeartbeatStatusKeepsEveryOtherField(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".heartbeat")
	body := `{"pid": 77, "parent_heartbeat": "", "role": "x", "started": 3.5, "status": "running", "host": "h1"}`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SetHeartbeatStatus(path, model.StatusPaused); err != nil {
		t.Fatal(err)
	}
	got := readHeartbeatFile(t, path)
	want := map[string]any{"pid": 77.0, "role": "x", "started": 3.5, "status": "paused", "host": "h1"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if err := SetHeartbeatStatus(filepath.Join(dir, "nope", ".heartbeat"), "paused"); err == nil {
		t.Error("a missing heartbeat should be an error")
	}
}

// A heartbeat that is not a JSON object is refused, never half-rewritten.
func TestSetHeartbeatStatusRefusesWhatIsNotAnObject(t *testing.T) {
	for _, body := range []string{"null", "[1, 2]", `{"pid": 1, "sta`} {
		t.Run(body, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), HeartbeatFile)
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			err := SetHeartbeatStatus(path, model.StatusPaused)
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("err = %v, want a refusal naming %s", err, path)
			}
			if got, _ := os.ReadFile(path); string(got) != body {
				t.Errorf("heartbeat rewritten to %q", got)
			}
		})
	}
}
