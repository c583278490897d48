package treegen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Heartbeats name the given live processes in turn, so a session's nodes
// name distinct ones; each process's `started` is its create time.
func TestGenerateWithDistinctProcesses(t *testing.T) {
	procs := StartProcesses(t, 4)
	byPID := map[int]Process{}
	for _, p := range procs {
		if err := syscall.Kill(p.PID, 0); err != nil {
			t.Fatalf("pid %d not running: %v", p.PID, err)
		}
		byPID[p.PID] = p
	}
	if len(byPID) != 4 {
		t.Fatalf("processes %v: want 4 distinct pids", procs)
	}
	dir := t.TempDir()
	if err := GenerateWith(dir, Options{Sessions: 3, PerSession: 5, Depth: 3, Now: time.Now(), Processes: procs}); err != nil {
		t.Fatal(err)
	}
	named := map[int]int{}
	perSession := map[string]map[int]bool{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.Name() != ".heartbeat" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var hb struct {
			PID     int     `json:"pid"`
			Started float64 `json:"started"`
		}
		if err := json.Unmarshal(b, &hb); err != nil {
			return err
		}
		want, ok := byPID[hb.PID]
		if !ok || hb.Started != want.Started {
			t.Errorf("%s names pid %d started %v; want one of %v", p, hb.PID, hb.Started, procs)
		}
		named[hb.PID]++
		rel, _ := filepath.Rel(dir, p)
		session, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if perSession[session] == nil {
			perSession[session] = map[int]bool{}
		}
		perSession[session][hb.PID] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pid := range byPID {
		if named[pid] < 3 || named[pid] > 4 {
			t.Errorf("pid %d named by %d of 15 heartbeats, want 3 or 4", pid, named[pid])
		}
	}
	for s, pids := range perSession {
		if len(pids) != 4 {
			t.Errorf("session %s names %d distinct pids, want 4", s, len(pids))
		}
	}
}
