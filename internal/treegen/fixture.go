package treegen

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// Fixture is an installed copy of the repository's testdata/sessions tree.
type Fixture struct {
	// Dir holds `.sessions` and `.teaparty/jobs`; DefaultRoots(Dir) finds both.
	Dir string
	// Outside is a directory outside every root that a registry names.
	Outside string
	// Processes standing behind the heartbeats: alive, gone (killed and
	// reaped) and alive with a create time the fixture probe hides.
	LivePID, GonePID, UnverifiedPID int
	// Now is the instant the mtimes were set relative to.
	Now time.Time
	// Expect maps node id to what the scan must classify it as.
	Expect map[string]Expectation
}

// Expectation is one node's expected classification.
type Expectation struct {
	State  model.State  `json:"state"`
	Flags  []model.Flag `json:"flags"`
	Action model.Action `json:"action"`
}

// fixtureSource is testdata/sessions of this repository, found from this
// file so tests of any package can install it.
func fixtureSource() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("locate fixture: no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "sessions"), nil
}

// InstallFixture copies the fixture tree into dst (created if needed),
// starts a `sleep` for the live pids and reaps one for the gone pid,
// substitutes the placeholders and sets every mtime relative to now. The
// processes are stopped when the test ends.
func InstallFixture(t testing.TB, dst string) *Fixture {
	t.Helper()
	src, err := fixtureSource()
	if err != nil {
		t.Fatal(err)
	}
	dst, err = filepath.Abs(dst)
	if err != nil {
		t.Fatal(err)
	}
	f := &Fixture{Dir: dst, Outside: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(f.Outside, "agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	live, liveStarted := startSleep(t)
	unverified, unverifiedStarted := startSleep(t)
	gone, goneStarted := goneProcess(t)
	f.LivePID, f.UnverifiedPID, f.GonePID = live, unverified, gone
	subst := strings.NewReplacer(
		"{{ROOT}}", dst,
		"{{OUTSIDE}}", f.Outside,
		"{{PID_LIVE}}", strconv.Itoa(live), "{{STARTED_LIVE}}", liveStarted,
		"{{PID_GONE}}", strconv.Itoa(gone), "{{STARTED_GONE}}", goneStarted,
		"{{PID_UNVERIFIED}}", strconv.Itoa(unverified), "{{STARTED_UNVERIFIED}}", unverifiedStarted,
	)
	// A heartbeat outside the roots: the scanner must not read it.
	if err := os.WriteFile(filepath.Join(f.Outside, "agent", protocol.HeartbeatFile), []byte(`{"pid": 1, "status": "running"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f.Now = time.Now()
	tree := filepath.Join(src, "tree")
	err = filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(tree, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(out, []byte(subst.Replace(string(b))), 0o644); err != nil {
			return err
		}
		at := f.Now.Add(-5 * time.Second)
		return os.Chtimes(out, at, at)
	})
	if err != nil {
		t.Fatalf("install fixture: %v", err)
	}
	var ages map[string]float64
	readJSON(t, filepath.Join(src, "mtimes.json"), &ages)
	for rel, age := range ages {
		at := f.Now.Add(-time.Duration(age * float64(time.Second)))
		if err := os.Chtimes(filepath.Join(dst, rel), at, at); err != nil {
			t.Fatalf("install fixture: %v", err)
		}
	}
	var expect map[string]Expectation
	readJSON(t, filepath.Join(src, "expect.json"), &expect)
	f.Expect = make(map[string]Expectation, len(expect))
	for id, e := range expect {
		f.Expect[subst.Replace(id)] = e
	}
	return f
}

// Probe wraps base so that the fixture's unverified pid exists but its
// create time cannot be read — what a permission error looks like, which a
// test running as root cannot otherwise provoke. Its host booted an hour
// before the fixture was written: the fixture's beats (up to 20 minutes
// old) come after it on a host up a minute as on one up for weeks, and an
// unverified pid's beat is judged by its age, not by the host's uptime.
func (f *Fixture) Probe(base liveness.Probe) liveness.Probe {
	return unverifiedProbe{base: base, pid: f.UnverifiedPID, boot: f.Now.Add(-time.Hour)}
}

type unverifiedProbe struct {
	base liveness.Probe
	pid  int
	boot time.Time
}

func (p unverifiedProbe) Lookup(pid int) liveness.ProcessInfo {
	info := p.base.Lookup(pid)
	if pid == p.pid && info.Exists {
		info.CreateTime = time.Time{}
		info.CreateTimeErr = fmt.Errorf("process %d create time: %w", pid, fs.ErrPermission)
	}
	return info
}

// BootTime is the fixture's boot, an hour before it was written.
func (p unverifiedProbe) BootTime() time.Time { return p.boot }

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("install fixture: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("install fixture: parse %s: %v", path, err)
	}
}

// startSleep starts a process that lives until the test ends.
func startSleep(t testing.TB) (int, string) {
	t.Helper()
	cmd := exec.Command("sleep", "3600")
	if err := cmd.Start(); err != nil {
		t.Fatalf("install fixture: start sleep: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd.Process.Pid, started(t, cmd.Process.Pid)
}

// goneProcess returns the pid and create time of a process that has exited
// and been reaped.
func goneProcess(t testing.TB) (int, string) {
	t.Helper()
	cmd := exec.Command("sleep", "3600")
	if err := cmd.Start(); err != nil {
		t.Fatalf("install fixture: start sleep: %v", err)
	}
	pid := cmd.Process.Pid
	at := started(t, pid)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return pid, at
}

func started(t testing.TB, pid int) string {
	t.Helper()
	s, err := protocol.ProcessStarted(pid)
	if err != nil {
		t.Fatalf("install fixture: %v", err)
	}
	return strconv.FormatFloat(s, 'f', 3, 64)
}
