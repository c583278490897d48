package liveness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
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
			hb:     model.Heartbeat{Role: "coding", ParentHeartbeat: "/p/.heartbeat", Team: "coding", TaskID: "t-1"},
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
			if _, err := os.Stat(filepath.Join(infra, protocol.HeartbeatTempFile)); !os.IsNotExist(err) {
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

func registryLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("registry line %q is not whole JSON: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestRegisterAppendsOneActiveLineToTheParentsChildren(t *testing.T) {
	tests := []struct {
		name     string
		existing string // registry content before, with %s for the parent dir
		taskID   string
		wantNew  bool
		wantLen  int
		wantTask any
	}{
		{name: "first child creates the registry", taskID: "", wantNew: true, wantLen: 1, wantTask: nil},
		{name: "task id is a string when given", taskID: "t-9", wantNew: true, wantLen: 1, wantTask: "t-9"},
		{
			name:     "another child is appended after existing lines",
			existing: `{"heartbeat": "%s/other/.heartbeat", "team": "x", "task_id": null, "status": "active"}` + "\n",
			wantNew:  true, wantLen: 2, wantTask: nil,
		},
		{
			name:     "already registered by absolute path: left alone",
			existing: `{"heartbeat": "%s/kid/.heartbeat", "team": "c", "task_id": null, "status": "active"}` + "\n",
			wantNew:  false, wantLen: 1, wantTask: nil,
		},
		{
			name:     "already registered by relative path: left alone",
			existing: "garbage line\n" + `{"heartbeat": "kid/.heartbeat", "team": "c", "task_id": null, "status": "completed"}` + "\n",
			wantNew:  false, wantLen: -1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parentDir := t.TempDir()
			registry := filepath.Join(parentDir, ".children")
			if tt.existing != "" {
				body := tt.existing
				if strings.Contains(body, "%s") {
					body = fmt.Sprintf(body, parentDir)
				}
				if err := os.WriteFile(registry, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			child := filepath.Join(parentDir, "kid", ".heartbeat")
			got, err := Register(filepath.Join(parentDir, ".heartbeat"), Registration{Heartbeat: child, Team: "c", TaskID: tt.taskID})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.wantNew {
				t.Errorf("registered = %v, want %v", got, tt.wantNew)
			}
			if tt.wantLen < 0 {
				data, _ := os.ReadFile(registry)
				if string(data) != tt.existing {
					t.Errorf("registry changed:\n%s", data)
				}
				return
			}
			lines := registryLines(t, registry)
			if len(lines) != tt.wantLen {
				t.Fatalf("registry has %d lines, want %d", len(lines), tt.wantLen)
			}
			last := lines[len(lines)-1]
			if tt.wantNew {
				if last["heartbeat"] != child || last["team"] != "c" || last["status"] != "active" || last["task_id"] != tt.wantTask {
					t.Errorf("appended line = %v", last)
				}
			}
		})
	}
}

func TestRegisterConcurrentAppendsStayWhole(t *testing.T) {
	parentDir := t.TempDir()
	const children = 64
	var wg sync.WaitGroup
	errs := make(chan error, children)
	for i := range children {
		wg.Add(1)
		go func() {
			defer wg.Done()
			child := filepath.Join(parentDir, fmt.Sprintf("kid-%03d", i), ".heartbeat")
			if _, err := Register(filepath.Join(parentDir, ".heartbeat"), Registration{Heartbeat: child, Team: strings.Repeat("t", 200)}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	lines := registryLines(t, filepath.Join(parentDir, ".children"))
	if len(lines) != children {
		t.Errorf("registry has %d lines, want %d", len(lines), children)
	}
}

func TestRegisterRefusesALineOver4KiB(t *testing.T) {
	parentDir := t.TempDir()
	_, err := Register(filepath.Join(parentDir, ".heartbeat"), Registration{Heartbeat: filepath.Join(parentDir, "k", ".heartbeat"), Team: strings.Repeat("x", 5000)})
	if err == nil || !strings.Contains(err.Error(), ".children") {
		t.Errorf("err = %v, want a refusal naming the registry", err)
	}
}

func TestProcessStartedIsTheCreateTime(t *testing.T) {
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	launched := time.Now()
	started, err := ProcessStarted(sleep.Process.Pid)
	sleep.Process.Kill()
	sleep.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if d := float64(launched.UnixNano())/1e9 - started; d > 2 || d < -2 {
		t.Errorf("started %.3f is %.3fs away from the launch", started, d)
	}
	if _, err := ProcessStarted(sleep.Process.Pid); err == nil {
		t.Errorf("a reaped pid %d should have no create time", sleep.Process.Pid)
	}
}

func TestConcurrentAtomicWritersNeverLeaveAPartialFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".heartbeat")
	const writers, rounds = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Bodies of different sizes: a truncated or mixed file would
			// not parse as one of them.
			body := fmt.Sprintf(`{"pid": %d, "status": "running", "pad": %q}`+"\n", w+2, strings.Repeat("x", 1000*w))
			for range rounds {
				if err := WriteFileAtomic(path, protocol.HeartbeatTempFile, []byte(body)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	readErrs := make(chan error, 1)
	go func() {
		defer close(readErrs)
		for {
			select {
			case <-done:
				return
			default:
			}
			data, err := os.ReadFile(path)
			if err != nil {
				continue // not written yet
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				readErrs <- fmt.Errorf("a reader saw a partial heartbeat: %v (%d bytes)", err, len(data))
				return
			}
		}
	}()
	wg.Wait()
	close(done)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for err := range readErrs {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, protocol.HeartbeatTempFile)); !os.IsNotExist(err) {
		t.Errorf("temp file left behind (stat err %v)", err)
	}
}

func TestALeftoverTempFileDoesNotBlockTheWriter(t *testing.T) {
	dir := t.TempDir()
	leftover := filepath.Join(dir, protocol.HeartbeatTempFile)
	if err := os.WriteFile(leftover, []byte(`{"pid": 1, "sta`), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(leftover, old, old); err != nil {
		t.Fatal(err)
	}
	w, err := NewHeartbeatWriter(dir, model.Heartbeat{Role: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(model.StatusRunning, 5, 1); err != nil {
		t.Fatal(err)
	}
	if got := readHeartbeatFile(t, w.Path()); got["pid"] != 5.0 {
		t.Errorf("pid = %v, want 5", got["pid"])
	}
}

func TestAWriterWaitsForAnotherWritersFreshTempFile(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, protocol.HeartbeatTempFile)
	if err := os.WriteFile(other, []byte(`{"pid": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := NewHeartbeatWriter(dir, model.Heartbeat{Role: "r"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Write(model.StatusCompleted, 5, 1) }()
	select {
	case err := <-done:
		t.Fatalf("wrote over another writer's temp file in flight (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	// The other writer renames its file into place; ours goes next.
	if err := os.Rename(other, w.Path()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := readHeartbeatFile(t, w.Path()); got["status"] != "completed" {
		t.Errorf("status = %v, want completed (written after the other writer)", got["status"])
	}
}
