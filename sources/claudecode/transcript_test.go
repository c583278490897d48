package claudecode

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A session's transcript (projects/<slug>/<sessionId>.jsonl) grows with
// every turn, and the reader needs nothing from it: it is neither watched
// (an append wakes nothing) nor opened by a read. A transcript that is a
// FIFO would block a read that opened it, or be a problem of one that
// looked at it; a read returns at once, with the session and no problem.
func TestTranscriptsAreNeitherWatchedNorRead(t *testing.T) {
	store := filepath.Join(t.TempDir(), ".claude")
	const id = "8d7c6b5a-4f3e-4d2c-9b1a-0f9e8d7c6b5a"
	pid := os.Getpid()
	session := filepath.Join(store, sessionsDir, strconv.Itoa(pid)+".json")
	transcriptDir := filepath.Join(store, projectsDir, "-home-u-webapp")
	for _, d := range []string{filepath.Dir(session), transcriptDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rec := `{"pid": ` + strconv.Itoa(pid) + `, "sessionId": "` + id + `", "cwd": "/home/u/webapp", "status": "busy"}`
	if err := os.WriteFile(session, []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(transcriptDir, id+".jsonl")
	if err := syscall.Mkfifo(transcript, 0o644); err != nil {
		t.Skip("no FIFO:", err)
	}
	for _, p := range (Source{}).WatchPaths(store) {
		if p == transcript || p == transcriptDir || strings.HasPrefix(p, transcriptDir+string(filepath.Separator)) {
			t.Errorf("watched: %s", p)
		}
	}
	read := make(chan int, 1)
	go func() {
		facts := Source{SocketDir: t.TempDir()}.Read(store, time.Now())
		for _, p := range facts.Problems {
			t.Errorf("problem: %s: %s", p.Path, p.Error)
		}
		read <- len(facts.Nodes)
	}()
	select {
	case n := <-read:
		if n != 1 {
			t.Errorf("%d nodes, want the session", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the read blocked on the transcript")
	}
}
