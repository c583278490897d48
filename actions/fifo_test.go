package actions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// hangGuard is how long an action may take before the test calls it hung: a
// bound for a loaded machine, not a timing assertion.
const hangGuard = 5 * time.Second

// runGuarded runs act, failing the test when it does not return within
// hangGuard. A hung act is blocked opening fifo; the test then opens the
// FIFO itself (read-write never blocks and releases both ends) until act
// returns, so the hang fails the test instead of the whole binary.
func runGuarded(t *testing.T, fifo string, act func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); act() }()
	select {
	case <-done:
		return
	case <-time.After(hangGuard):
	}
	for released := time.Now(); time.Since(released) < time.Minute; {
		if f, err := os.OpenFile(fifo, os.O_RDWR|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		select {
		case <-done:
			t.Fatalf("hung for %v on the FIFO %s", hangGuard, fifo)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("hung on the FIFO %s, and still hung after it was released", fifo)
}

// isFIFO reports whether path is (still) a named pipe.
func isFIFO(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode()&os.ModeNamedPipe != 0
}

// SPEC §9: a FIFO planted where an action expects a file of the contract
// never hangs the action: it is refused at once with an error that names
// the path and says it is not a regular file, and nothing else changes —
// no retry bumped, no marker taken, no command started, no registry line
// dropped, the FIFO left where it is.
func TestAPlantedFIFOIsRefusedWithoutHanging(t *testing.T) {
	type fixture struct {
		root, infra, out string
	}
	// resume plants the FIFO at infra/rel (or root/rel) and resumes s.
	resume := func(rel func(f fixture) string) func(t *testing.T, f fixture) (string, string, error) {
		return func(t *testing.T, f fixture) (string, string, error) {
			fifo := rel(f)
			if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := mkfifo(fifo); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			before := treeHash(t, f.infra)
			var res Result
			var err error
			runGuarded(t, fifo, func() {
				res, err = testEngine(f.root, model.Thresholds{}, resumeConfig(f.out)).Run(context.Background(), Request{Action: model.ActionResume, Node: "s"})
			})
			if !res.Refused && err == nil {
				t.Fatalf("resume %s: %s, want a refusal", res.Outcome, res.Message)
			}
			if after := treeHash(t, f.infra); after != before {
				t.Fatal("the refused resume changed the infra dir (retry count, marker or log)")
			}
			time.Sleep(50 * time.Millisecond) // a dispatch, had there been one, writes at once
			if got := dispatches(t, f.out); len(got) != 0 {
				t.Fatalf("the refused resume started its command: %v", got)
			}
			return fifo, res.Message, err
		}
	}
	tests := []struct {
		name string
		// act plants the FIFO, acts, checks what must not have changed, and
		// returns the FIFO and what the action said.
		act func(t *testing.T, f fixture) (fifo, msg string, err error)
	}{
		{name: "resume: .retry-count", act: resume(func(f fixture) string { return filepath.Join(f.infra, protocol.RetryCountFile) })},
		{name: "resume: .resume-pending", act: resume(func(f fixture) string { return filepath.Join(f.infra, protocol.ResumePendingFile) })},
		{name: "resume: .resume.log", act: resume(func(f fixture) string { return filepath.Join(f.infra, protocol.ResumeLogFile) })},
		{name: "resume: the journal", act: resume(func(f fixture) string { return JournalPath(f.root) })},
		{name: "merge: .merge.log", act: func(t *testing.T, f fixture) (string, string, error) {
			writeJSON(t, filepath.Join(f.infra, protocol.CfaFile), map[string]any{"state": "DONE", "history": []any{}, "backtrack_count": 0, "task_id": "t1"})
			fifo := filepath.Join(f.infra, protocol.MergeLogFile)
			if err := mkfifo(fifo); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			before := treeHash(t, f.infra)
			var res Result
			var err error
			runGuarded(t, fifo, func() {
				cfg := Config{Merge: CommandConfig{Argv: helperArgv("argv", f.out, "{id}")}}
				res, err = testEngine(f.root, model.Thresholds{}, cfg).Run(context.Background(), Request{Action: model.ActionMerge, Node: "s"})
			})
			if res.Outcome == OutcomeDone {
				t.Fatalf("merge: %s", res.Message)
			}
			if treeHash(t, f.infra) != before || len(dispatches(t, f.out)) != 0 {
				t.Fatal("the refused merge ran its command or wrote in the infra dir")
			}
			return fifo, res.Message, err
		}},
		{name: "reading the journal", act: func(t *testing.T, f fixture) (string, string, error) {
			fifo := JournalPath(f.root)
			os.MkdirAll(filepath.Dir(fifo), 0o755)
			if err := mkfifo(fifo); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			var err error
			runGuarded(t, fifo, func() { _, err = ReadJournal(f.root, "s") })
			if err == nil {
				t.Fatal("ReadJournal read a FIFO without an error")
			}
			return fifo, "", err
		}},
		{name: "compact: a registry entry's heartbeat", act: func(t *testing.T, f fixture) (string, string, error) {
			// p has ended; c's heartbeat is a FIFO, done's is completed.
			writeNode(t, f.root, nodeSpec{dir: "p", pid: testproc.Gone(t), started: 1, status: "completed", age: time.Hour})
			writeNode(t, f.root, nodeSpec{dir: "done", pid: testproc.Gone(t), started: 1, status: "completed", parent: "p", age: time.Hour})
			os.MkdirAll(filepath.Join(f.root, "c"), 0o755)
			fifo := filepath.Join(f.root, "c", protocol.HeartbeatFile)
			if err := mkfifo(fifo); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			register(t, f.root, "p", "c", "t", "1", "active")
			register(t, f.root, "p", "done", "t", "2", "active")
			registry := filepath.Join(f.root, "p", protocol.RegistryFile)
			var res Result
			var err error
			runGuarded(t, fifo, func() {
				res, err = testEngine(f.root, model.Thresholds{}, Config{}).Run(context.Background(), Request{Action: model.ActionCompact, Node: "p"})
			})
			if err != nil || res.Outcome != OutcomeDone {
				t.Fatalf("compact: %v %s %s", err, res.Outcome, res.Message)
			}
			// Unreadable is not gone: c's line stays; the finished one goes.
			b, _ := os.ReadFile(registry)
			if !strings.Contains(string(b), filepath.Join(f.root, "c", protocol.HeartbeatFile)) || strings.Contains(string(b), filepath.Join(f.root, "done")) {
				t.Fatalf("registry after compaction:\n%s", b)
			}
			return fifo, "", nil
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			f := fixture{root: root, infra: deadNode(t, root, "EXECUTE"), out: filepath.Join(t.TempDir(), "argv")}
			fifo, msg, err := tc.act(t, f)
			if !isFIFO(fifo) {
				t.Fatalf("%s is no longer the FIFO planted there", fifo)
			}
			if msg == "" && err == nil {
				return // the action went on without the FIFO (compact keeps its line)
			}
			said := msg
			if err != nil {
				said += " " + err.Error()
			}
			t.Log(said)
			if !strings.Contains(said, fifo) || !strings.Contains(said, "not a regular file") {
				t.Fatalf("the refusal %q does not name %s as not a regular file", said, fifo)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Fatalf("the error is not one line: %q", err)
			}
		})
	}
}
