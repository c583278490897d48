package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// storeState is every file of a store with its bytes and mtime.
func storeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[p] = "dir " + fi.Mode().String()
			return nil
		}
		b, err := os.ReadFile(p)
		out[p] = fi.ModTime().String() + " " + fi.Mode().String() + " " + string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The store is read, never written: not a byte, not an mtime, no file
// made, whatever it holds (sessions, a job, a team, a torn file).
func TestReadNeverChangesTheStore(t *testing.T) {
	s := newStore(t)
	p := sleeper(t)
	const sid = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	s.session(p.Process.Pid, sid, "waiting", map[string]any{"waitingFor": "approve Edit"})
	s.write("jobs/aaaaaaaa/state.json", map[string]any{"state": "working", "sessionId": sid})
	s.write("jobs/pins.json", []string{})
	s.write("teams/session-0a1b2c3d/config.json", map[string]any{"leadSessionId": sid, "members": []any{
		map[string]any{"name": "r", "tmuxPaneId": "in-process", "backendType": "in-process", "isActive": true}}})
	s.write("teams/session-0a1b2c3d/inboxes/team-lead.json", []any{map[string]any{"from": "r", "text": `{"type":"plan_approval_request","requestId":"p"}`}})
	s.writeRaw("sessions/1.json", "{")
	before := storeState(t, s.dir)
	for range 3 {
		Source{SocketDir: t.TempDir()}.Read(s.dir, time.Now())
		Source{}.WatchPaths(s.dir)
		Source{}.Detect(s.dir)
	}
	after := storeState(t, s.dir)
	for p, b := range before {
		if after[p] != b {
			t.Errorf("%s changed by a read", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared: a read must not write a store", p)
		}
	}
}

// A writer beside the reader: the session rewrites its file as its status
// changes (a temp file renamed over it) while the store is read. Every
// read sees the session, in one of the statuses written, with no problem.
func TestWriterBesideReader(t *testing.T) {
	s := newStore(t)
	p := sleeper(t)
	pid := p.Process.Pid
	path := s.session(pid, "c0ffee00-1111-4222-8333-444455556666", "busy", nil)
	var rec map[string]any
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		statuses := []string{"idle", "busy", "waiting"}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			rec["status"] = statuses[i%3]
			rec["statusUpdatedAt"] = time.Now().UnixMilli()
			out, _ := json.Marshal(rec)
			tmp := path + "." + strconv.Itoa(i) + ".tmp"
			if os.WriteFile(tmp, out, 0o644) != nil || os.Rename(tmp, path) != nil {
				t.Error("the writer failed")
				return
			}
		}
	}()
	for i := range 200 {
		facts := Source{}.Read(s.dir, time.Now())
		if len(facts.Problems) > 0 || len(facts.Nodes) != 1 {
			t.Fatalf("read %d: %d nodes, problems %v", i, len(facts.Nodes), facts.Problems)
		}
		n := facts.Nodes[0]
		if n.PID() != pid || n.Status() != "running" {
			t.Fatalf("read %d: pid %d status %q", i, n.PID(), n.Status())
		}
	}
	close(stop)
	wg.Wait()
}
