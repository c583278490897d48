package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/model"
)

// cutShort is a disk that fills up: it passes the first room bytes to w,
// then fails every write with ENOSPC.
type cutShort struct {
	w    io.Writer
	room int
}

func (c *cutShort) Write(p []byte) (int, error) {
	if len(p) <= c.room {
		c.room -= len(p)
		return c.w.Write(p)
	}
	n, err := c.w.Write(p[:c.room])
	c.room -= n
	if err == nil {
		err = &os.PathError{Op: "write", Path: "journal", Err: syscall.ENOSPC}
	}
	return n, err
}

// refuseRunning journals one refusal through e: resume on node s, which
// runs.
func refuseRunning(t *testing.T, e *Engine) (Result, error) {
	t.Helper()
	return e.Run(context.Background(), Request{Action: model.ActionResume, Node: "s"})
}

// runningNode writes a session s whose process (this test) runs.
func runningSelfNode(t *testing.T, root string) {
	t.Helper()
	writeNode(t, root, nodeSpec{dir: "s", pid: os.Getpid(), started: testproc.Started(t, os.Getpid()), status: "running"})
}

// everyLineWhole fails unless every line of the journal of root ends with a
// newline and parses.
func everyLineWhole(t *testing.T, root string) []byte {
	t.Helper()
	b, err := os.ReadFile(JournalPath(root))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("the journal ends in a torn line:\n%s", b)
	}
	for _, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		var j JournalEntry
		if err := json.Unmarshal(line, &j); err != nil {
			t.Fatalf("journal line %q: %v", line, err)
		}
	}
	return b
}

// SPEC §5 / §9: a journal line is appended whole or not at all. A write cut
// short (the disk is full) is taken back and reported; the journal is as it
// was, and the next line starts on a line of its own.
func TestAJournalWriteCutShortIsTakenBack(t *testing.T) {
	for _, room := range []int{0, 1, 40} {
		t.Run(fmt.Sprintf("%d bytes written", room), func(t *testing.T) {
			root := t.TempDir()
			runningSelfNode(t, root)
			e := testEngine(root, model.Thresholds{}, Config{})
			if res, err := refuseRunning(t, e); err != nil || !res.Refused {
				t.Fatalf("first refusal: %v %+v", err, res)
			}
			before := everyLineWhole(t, root)

			e.journalWriter = func(w io.Writer) io.Writer { return &cutShort{w: w, room: room} }
			_, err := refuseRunning(t, e)
			if err == nil || !strings.Contains(err.Error(), JournalPath(root)) || !strings.Contains(err.Error(), "no space left") {
				t.Fatalf("a journal write cut short returned %v, want an error naming the journal and the cause", err)
			}
			if after, _ := os.ReadFile(JournalPath(root)); !bytes.Equal(after, before) {
				t.Fatalf("the journal after a write cut short:\n%s\nwant it as it was:\n%s", after, before)
			}

			e.journalWriter = nil
			if _, err := refuseRunning(t, e); err != nil {
				t.Fatal(err)
			}
			everyLineWhole(t, root)
			if js := journalFor(t, root, "s"); len(js) != 2 {
				t.Fatalf("journal: %d entries, want the two that were written whole", len(js))
			}
		})
	}
}

// SPEC §5: a journal whose last line is torn (a dispatchtop died mid-write
// before lines were written whole) does not swallow the next line: it
// starts on a new line, and the reader skips the torn one.
func TestAJournalAppendAfterATornLineStartsANewLine(t *testing.T) {
	root := t.TempDir()
	runningSelfNode(t, root)
	e := testEngine(root, model.Thresholds{}, Config{})
	if _, err := refuseRunning(t, e); err != nil {
		t.Fatal(err)
	}
	path := JournalPath(root)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"time":"2026-01-02T03:04:05Z","user":"a","action":"resu`); err != nil {
		t.Fatal(err)
	}
	f.Close()

	if _, err := refuseRunning(t, e); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[1], `"action":"resu`) {
		t.Fatalf("journal lines:\n%s\nwant the first entry, the torn line alone, the new entry", b)
	}
	js := journalFor(t, root, "s")
	if len(js) != 2 || js[0].Outcome != OutcomeRefused || js[1].Outcome != OutcomeRefused {
		t.Fatalf("journal entries %+v, want the two refusals and not the torn line", js)
	}
}
