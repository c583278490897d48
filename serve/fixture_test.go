package serve

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// fixedNow is the clock of the fixture: "now" of SPEC's worked example.
var fixedNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// fakeProbe says which pids are alive; a live pid's create time is the
// heartbeat's `started`, so it is the same process.
type fakeProbe map[int]time.Time

func (p fakeProbe) Lookup(pid int) liveness.ProcessInfo {
	if t, ok := p[pid]; ok {
		return liveness.ProcessInfo{Exists: true, CreateTime: t}
	}
	return liveness.ProcessInfo{}
}

const fixtureStarted = 1795000000 // float seconds in every heartbeat

// fixtureTree writes a .sessions tree after the SPEC appendix at fixedNow:
//
//	A          running (beat 10 s)
//	A/code/2   dead, lead alive: wait
//	A/test/3   running stalled kill_candidate: kill
//	A/ask/4    running stalled blocked: answer
//	B          dead, resumable: resume
func fixtureTree(t testing.TB) (root string, probe fakeProbe) {
	t.Helper()
	root = filepath.Join(t.TempDir(), ".sessions")
	started := time.Unix(fixtureStarted, 0)
	probe = fakeProbe{101: started, 103: started, 104: started}
	write := func(rel, name, body string, age time.Duration) {
		t.Helper()
		dir := filepath.Join(root, rel)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := fixedNow.Add(-age)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	hb := func(pid int, parent, role string) string {
		ph := ""
		if parent != "" {
			ph = filepath.Join(root, parent, ".heartbeat")
		}
		return fmt.Sprintf(`{"pid": %d, "parent_heartbeat": %q, "role": %q, "started": %d, "status": "running"}`, pid, ph, role, fixtureStarted)
	}
	write("A", ".heartbeat", hb(101, "", "lead"), 10*time.Second)
	write("A/code/2", ".heartbeat", hb(102, "A", "coder"), 3*time.Minute)
	write("A/test/3", ".heartbeat", hb(103, "A", "tester"), 10*time.Minute)
	write("A/ask/4", ".heartbeat", hb(104, "A", "asker"), 20*time.Minute)
	write("A/ask/4", "blocked.json", `{"question": "which database?"}`, 20*time.Minute)
	write("B", ".heartbeat", hb(105, "", "lead"), 90*time.Second)
	write("B", ".cfa-state.json", `{"state": "EXECUTE", "history": [], "backtrack_count": 0, "task_id": "t-1"}`, 90*time.Second)
	return root, probe
}

// fixtureSnapshot scans the fixture at fixedNow.
func fixtureSnapshot(t testing.TB) *model.Snapshot {
	t.Helper()
	root, probe := fixtureTree(t)
	snap, err := scanner.Scan(scanner.Options{
		Roots: []string{root}, Thresholds: model.DefaultThresholds(), Probe: probe,
		Now: func() time.Time { return fixedNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// localRequest is a request as a client on this machine sends it: to the
// default address, so its Host is one serve answers for (httptest's own
// default, example.com, is refused).
func localRequest(method, path string) *http.Request {
	return httptest.NewRequest(method, "http://"+DefaultListen+path, nil)
}
