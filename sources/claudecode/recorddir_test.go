package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/protocol"
)

// TestRecordsAreOpenedRelativeToTheirDir counts what a read hands the
// kernel to walk: each session and job record is opened by its name in
// its directory, held open once for all of them (two components), not by
// its whole path from / (all of them, a dozen under a home), and the
// record read is the one listed (a node each, its path in its errors).
func TestRecordsAreOpenedRelativeToTheirDir(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("records are opened by path where directories are not held open")
	}
	const jobs = 5
	s := newStore(t)
	now := time.Now()
	s.session(os.Getpid(), "s-0", "busy", nil)
	for j := range jobs {
		s.write(fmt.Sprintf("jobs/job%d/state.json", j), map[string]any{"state": "working", "sessionId": "s-0"})
	}
	s.writeRaw("jobs/job-bad/state.json", `{"state": `)
	type open struct {
		dir        bool
		name, path string
	}
	var opens []open
	real := openRecord
	t.Cleanup(func() { openRecord = real })
	openRecord = func(d recordDir, name, path string) (interface {
		Read([]byte) (int, error)
		Close() error
	}, protocol.Info, error) {
		opens = append(opens, open{dir: d.fd >= 0, name: name, path: path})
		return real(d, name, path)
	}
	facts := Source{BootTime: func() time.Time { return time.Time{} }}.Read(s.dir, now)
	var sessionOpens, jobOpens int
	for _, o := range opens {
		parts := strings.Split(o.name, "/")
		switch {
		case strings.HasPrefix(o.path, filepath.Join(s.dir, sessionsDir)+string(os.PathSeparator)):
			sessionOpens++
		case strings.HasPrefix(o.path, filepath.Join(s.dir, jobsDir)+string(os.PathSeparator)):
			jobOpens++
		default:
			continue
		}
		if !o.dir || len(parts) > 2 || !strings.HasSuffix(o.path, string(os.PathSeparator)+filepath.FromSlash(o.name)) {
			t.Errorf("%s opened as %q (held dir %v), want its name in its held dir", o.path, o.name, o.dir)
		}
	}
	if sessionOpens != 1 || jobOpens != jobs+1 {
		t.Errorf("opened %d session and %d job records, want 1 and %d", sessionOpens, jobOpens, jobs+1)
	}
	bad := filepath.Join(s.dir, "jobs", "job-bad", "state.json")
	var named bool
	for _, p := range facts.Problems {
		named = named || p.Path == bad && strings.Contains(p.Error, bad)
	}
	if !named {
		t.Errorf("problems %v, want one naming %s", facts.Problems, bad)
	}
	if got := len(facts.Nodes); got != 1+jobs {
		t.Errorf("read %d nodes, want the session and its %d jobs", got, jobs)
	}
}
