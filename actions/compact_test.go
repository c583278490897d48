package actions

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// dropMarked is a rule for compactFile tests: lines whose status is "drop" go.
func dropMarked(line []byte, _ bool) (bool, string) {
	if bytes.Contains(line, []byte(`"status":"drop"`)) {
		return true, "marked"
	}
	return false, ""
}

// SPEC §9: compaction while another process appends 10,000 lines with plain
// O_APPEND and no lock, compactions running as fast as they can: no line
// lost, none duplicated, every line whole.
func TestCompactionLosesNoLineUnderConcurrentAppenders(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".children")
	if err := os.WriteFile(path, []byte(`{"heartbeat":"/nowhere/seed/.heartbeat","team":"t","task_id":"0","status":"drop"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const lines = 10000
	appender := helperCmd("append", path, "a", fmt.Sprint(lines))
	var stderr bytes.Buffer
	appender.Stderr = &stderr
	if err := appender.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- appender.Wait() }()

	e := testEngine(dir, model.Thresholds{}, Config{})
	compactions, rewrites := 0, 0
	var appendErr error
loop:
	for {
		select {
		case appendErr = <-done:
			break loop
		default:
		}
		got, err := e.compactFile(context.Background(), path, dropMarked, nil)
		if err != nil {
			t.Fatalf("compaction %d: %v", compactions, err)
		}
		compactions++
		if len(got.removed) > 0 {
			rewrites++
		}
	}
	if appendErr != nil {
		t.Fatalf("appender: %v: %s", appendErr, stderr.String())
	}
	if _, err := e.compactFile(context.Background(), path, dropMarked, nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d compactions, %d rewrites while %d lines were appended", compactions, rewrites, lines)
	if rewrites < 10 {
		t.Fatalf("only %d rewrites ran during the appends: the test did not exercise concurrency", rewrites)
	}

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Fatalf("registry does not end with a newline")
	}
	seen := map[string]int{}
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("line %d is not whole: %q: %v", i+1, line, err)
		}
		if entry["status"] == "drop" {
			t.Fatalf("line %d should have been compacted away: %s", i+1, line)
		}
		seen[line]++
	}
	want := 0
	for i := 0; i < lines; i++ {
		if i%3 == 0 {
			continue
		}
		want++
		line := fmt.Sprintf(`{"heartbeat":"/nowhere/a-%06d/.heartbeat","team":"t","task_id":"%d","status":"active"}`, i, i)
		switch seen[line] {
		case 1:
		case 0:
			t.Fatalf("line %d lost", i)
		default:
			t.Fatalf("line %d duplicated %d times", i, seen[line])
		}
	}
	if len(seen) != want {
		t.Fatalf("registry holds %d distinct lines, want %d", len(seen), want)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, protocol.CompactTempPrefix+"*"))
	if len(leftovers) != 0 {
		t.Fatalf("temp files left behind: %v", leftovers)
	}
}

// killableRegistry writes a finished session s whose registry holds two
// finished children (a, c), two running ones (b, d), an unparseable line and
// a torn last line; it returns the registry's path, its content, the content
// compaction intends, and the lines it removes.
func killableRegistry(t *testing.T, root string) (path, original, intended string, removed []string) {
	t.Helper()
	writeNode(t, root, nodeSpec{dir: "s", status: "completed", age: time.Minute})
	for c, status := range map[string]string{"a": "completed", "b": "running", "c": "withdrawn", "d": "running"} {
		writeNode(t, root, nodeSpec{dir: "s/" + c, status: status, parent: "s", age: time.Minute})
	}
	line := func(c string) string {
		return `{"heartbeat":"` + filepath.Join(root, "s", c, ".heartbeat") + `","team":"` + c + `","task_id":"1","status":"active"}`
	}
	torn := `{"heartbeat":"/nowhere/5/.heart`
	original = strings.Join([]string{line("a"), `not json at all`, line("b"), line("c"), line("d"), torn}, "\n")
	intended = strings.Join([]string{`not json at all`, line("b"), line("d"), torn}, "\n")
	path = filepath.Join(root, "s", ".children")
	if err := os.WriteFile(path, []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, original, intended, []string{line("a"), line("c")}
}

// journalRemoved reports whether root's journal holds a line for node that
// carries exactly the removed lines, verbatim. Only lines written as done
// count: the hook's "kill" returns an error the engine journals as a
// failure, which a killed process would never write.
func journalRemoved(t *testing.T, root, node string, removed []string) bool {
	t.Helper()
	for _, j := range journalFor(t, root, node) {
		if j.Outcome == OutcomeDone && strings.Join(j.Removed, "\n") == strings.Join(removed, "\n") {
			return true
		}
	}
	return false
}

// SPEC §5, §9: a dispatchtop killed mid-action leaves every file as it was
// or as intended — the registry as readers see it, `.children` and what of
// the replaced registry is not carried over yet — and the journal holds the
// removed lines whenever the registry lost them. The hook stops the
// compaction at each step as a kill would (no cleanup); the next compaction
// must finish the job and clear what the killed one left.
func TestCompactionKilledAtEveryStepLeavesTheFileAsItWasOrAsIntended(t *testing.T) {
	errKilled := errors.New("killed")
	for _, step := range []string{"compact:read", "compact:written", "compact:synced", "compact:carried", "compact:journaled",
		"compact:recorded", "compact:linked", "compact:renamed", "carry:announced", "carry:written", "compact:drained", "compact:unlinked"} {
		t.Run(step, func(t *testing.T) {
			root := t.TempDir()
			path, original, intended, removed := killableRegistry(t, root)
			e := testEngine(root, model.Thresholds{}, Config{})
			var early *os.File
			e.hook = func(s string) error {
				// For the drain's steps, the drain has something to carry:
				// a line from an appender that opened the registry just
				// before the rename and writes just after it.
				switch {
				case !strings.HasPrefix(step, "carry:"):
				case s == "compact:journaled":
					var err error
					early, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
					return err
				case s == "compact:renamed":
					_, err := early.WriteString(late(root) + "\n")
					early.Close()
					return err
				}
				if s == step {
					return errKilled
				}
				return nil
			}
			if strings.HasPrefix(step, "carry:") {
				// Appended after the torn tail, which its writer never
				// finished: the two make one line, as on any registry.
				intended += late(root) + "\n"
			}
			if _, err := e.Run(context.Background(), Request{Action: model.ActionCompact, Node: "s"}); !errors.Is(err, errKilled) {
				t.Fatalf("compaction did not stop at %s: %v", step, err)
			}
			// The registry as every reader sees it: `.children`, then what
			// the drain had not carried over yet.
			v, err := protocol.ReadView(filepath.Dir(path), maxRegistrySize)
			if err != nil {
				t.Fatal(err)
			}
			got := append(v.Registry, v.Pending...)
			switch string(got) {
			case original:
			case intended:
				if !journalRemoved(t, root, "s", removed) {
					t.Fatalf("after a kill at %s the registry lost lines the journal does not hold: %+v", step, journalFor(t, root, "s"))
				}
			default:
				t.Fatalf("after a kill at %s the registry is neither as it was nor as intended:\n%s", step, got)
			}
			e.hook = nil
			if _, err := e.Run(context.Background(), Request{Action: model.ActionCompact, Node: "s"}); err != nil {
				t.Fatal(err)
			}
			got, _ = os.ReadFile(path)
			if string(got) != intended {
				t.Fatalf("the next compaction left:\n%s\nwant:\n%s", got, intended)
			}
			if !journalRemoved(t, root, "s", removed) {
				t.Fatalf("the journal does not hold the removed lines: %+v", journalFor(t, root, "s"))
			}
			if left, _ := filepath.Glob(filepath.Join(root, "s", ".children.*")); len(left) != 0 {
				t.Fatalf("files left after the next compaction: %v", left)
			}
		})
	}
}

// late is the registry line register writes for s/late.
func late(root string) string {
	b, _ := json.Marshal(map[string]any{"heartbeat": filepath.Join(root, "s/late/.heartbeat"), "team": "late", "task_id": "2", "status": "active"})
	return string(b)
}

// SPEC §5: the removed lines reach the journal before they leave the
// registry; a rename that then fails appends a line that says the registry
// was left as it was.
func TestCompactionWhoseRenameFailsJournalsThatTheRegistryWasLeft(t *testing.T) {
	root := t.TempDir()
	path, _, _, removed := killableRegistry(t, root)
	e := testEngine(root, model.Thresholds{}, Config{})
	e.hook = func(s string) error {
		if s == "compact:journaled" {
			// Something takes the registry's name: the rename cannot replace it.
			if err := os.Rename(path, path+".moved"); err != nil {
				return err
			}
			return os.MkdirAll(filepath.Join(path, "sub"), 0o755)
		}
		return nil
	}
	res, err := e.Run(context.Background(), Request{Action: model.ActionCompact, Node: "s"})
	if err == nil || res.Outcome != OutcomeFailed {
		t.Fatalf("compaction over a directory: %v %s %q", err, res.Outcome, res.Message)
	}
	js := journalFor(t, root, "s")
	if len(js) != 2 || strings.Join(js[0].Removed, "\n") != strings.Join(removed, "\n") {
		t.Fatalf("journal: %+v", js)
	}
	if js[1].Outcome != OutcomeFailed || !strings.Contains(js[1].Message, "left as it was") || len(js[1].Removed) != 0 {
		t.Fatalf("the line after a failed rename: %+v", js[1])
	}
	if left, _ := filepath.Glob(filepath.Join(root, "s", protocol.CompactTempPrefix+"*")); len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

// SPEC §5.3: which registry entries compaction removes, and that every
// other byte (unparseable lines, CRLF, a torn last line) stays.
func TestCompactRemovesTerminalAndNeverStartedEntriesOnly(t *testing.T) {
	tests := []struct {
		name       string
		nodeStatus string        // the compacted node's own heartbeat status
		regAge     time.Duration // age of its .children
		wantGone   []string      // children whose lines go
	}{
		{name: "running node, fresh registry keeps never-started lines", nodeStatus: "running", regAge: 0,
			wantGone: []string{"done", "withdrawn", "gone-completed", "badpid-completed"}},
		{name: "running node, registry older than stale drops never-started lines", nodeStatus: "running", regAge: 10 * time.Minute,
			wantGone: []string{"done", "withdrawn", "gone-completed", "badpid-completed", "never"}},
		{name: "finished node drops never-started lines at once", nodeStatus: "completed", regAge: 0,
			wantGone: []string{"done", "withdrawn", "gone-completed", "badpid-completed", "never"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			self := startHelper(t, "sleep")
			writeNode(t, root, nodeSpec{dir: "s", pid: self.Process.Pid, started: testproc.Started(t, self.Process.Pid), status: tc.nodeStatus})
			writeNode(t, root, nodeSpec{dir: "s/done", pid: 0, status: "completed", parent: "s"})
			writeNode(t, root, nodeSpec{dir: "s/withdrawn", pid: 0, status: "withdrawn", parent: "s"})
			writeNode(t, root, nodeSpec{dir: "s/live", pid: self.Process.Pid, started: testproc.Started(t, self.Process.Pid), status: "running", parent: "s"})
			// A started child with an unparseable heartbeat: not gone, kept.
			if err := os.MkdirAll(filepath.Join(root, "s/garbled"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "s/garbled/.heartbeat"), []byte("{\"pid\":"), 0o644); err != nil {
				t.Fatal(err)
			}
			// A completed child with one bad field: finished all the same
			// (the scanner keeps what could be read), so its line goes too.
			if err := os.MkdirAll(filepath.Join(root, "s/badpid-completed"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "s/badpid-completed/.heartbeat"), []byte(`{"pid": -1, "status": "completed"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			// A registered child whose infra dir exists but has no heartbeat yet.
			if err := os.MkdirAll(filepath.Join(root, "s/booting"), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, c := range []string{"done", "withdrawn", "live", "garbled", "badpid-completed", "booting", "never"} {
				register(t, root, "s", "s/"+c, "team "+c, "task-"+c, "active")
			}
			register(t, root, "s", "s/gone-completed", "t", "x", "completed")
			reg := filepath.Join(root, "s", ".children")
			f, _ := os.OpenFile(reg, os.O_WRONLY|os.O_APPEND, 0)
			f.WriteString("garbage line\r\n{\"heartbeat\": \"torn")
			f.Close()
			age(t, reg, tc.regAge)
			before, _ := os.ReadFile(reg)

			e := testEngine(root, model.Thresholds{}, Config{})
			res, err := e.Run(context.Background(), Request{Action: model.ActionCompact, Node: "s"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != OutcomeDone {
				t.Fatalf("outcome %s: %s", res.Outcome, res.Message)
			}
			after, _ := os.ReadFile(reg)
			var wantAfter []byte
			var wantRemoved []string
			for _, line := range bytes.SplitAfter(before, []byte("\n")) {
				gone := false
				for _, c := range tc.wantGone {
					if bytes.Contains(line, []byte(`/s/`+c+`/.heartbeat"`)) {
						gone = true
					}
				}
				if gone {
					wantRemoved = append(wantRemoved, strings.TrimSuffix(string(line), "\n"))
					continue
				}
				wantAfter = append(wantAfter, line...)
			}
			if !bytes.Equal(after, wantAfter) {
				t.Fatalf("registry after compaction:\n%s\nwant:\n%s", after, wantAfter)
			}
			js := journalFor(t, root, "s")
			if len(js) != 1 {
				t.Fatalf("journal holds %d lines for s, want 1", len(js))
			}
			if strings.Join(js[0].Removed, "\n") != strings.Join(wantRemoved, "\n") {
				t.Fatalf("journal removed lines:\n%s\nwant verbatim:\n%s", strings.Join(js[0].Removed, "\n"), strings.Join(wantRemoved, "\n"))
			}
		})
	}
}

// SPEC §5.3 (compact --all): every registry under the roots is compacted.
func TestCompactAllCompactsEveryRegistry(t *testing.T) {
	root := t.TempDir()
	for _, s := range []string{"a", "b"} {
		writeNode(t, root, nodeSpec{dir: s, pid: 0, status: "completed"})
		writeNode(t, root, nodeSpec{dir: s + "/c", pid: 0, status: "completed", parent: s})
		register(t, root, s, s+"/c", "t", "1", "active")
	}
	e := testEngine(root, model.Thresholds{}, Config{})
	if _, err := e.Run(context.Background(), Request{Action: model.ActionCompact, All: true}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a", "b"} {
		b, err := os.ReadFile(filepath.Join(root, s, ".children"))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != 0 {
			t.Fatalf("%s/.children still holds %q", s, b)
		}
	}
}

// startOpener starts a helper that opens path for appending and waits
// until it says it has.
func startOpener(t *testing.T, mode string, args ...string) *exec.Cmd {
	t.Helper()
	c := helperCmd(mode, args...)
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "open\n" {
		t.Fatalf("helper %s: %q %v: %s", mode, line, err, stderr.String())
	}
	return c
}

// SPEC §5.3: an appender that opened the registry before the rename and
// writes well after it (a slow agent) writes into the replaced file; the
// drain carries its line over as long as it holds that file open.
func TestCompactionCarriesLinesWrittenLongAfterTheRenameThroughOldDescriptors(t *testing.T) {
	for _, delay := range []time.Duration{50 * time.Millisecond, 200 * time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ".children")
			kept := `{"heartbeat":"/nowhere/kept/.heartbeat","team":"t","task_id":"1","status":"active"}`
			late := `{"heartbeat":"/nowhere/late/.heartbeat","team":"t","task_id":"2","status":"active"}`
			seed := `{"heartbeat":"/nowhere/old/.heartbeat","team":"t","task_id":"0","status":"drop"}` + "\n" + kept + "\n"
			if err := os.WriteFile(path, []byte(seed), 0o644); err != nil {
				t.Fatal(err)
			}
			e := testEngine(dir, model.Thresholds{}, Config{})
			var appender *exec.Cmd
			e.hook = func(step string) error {
				if step == "compact:journaled" {
					// Opened after the check for writers, before the rename.
					appender = startOpener(t, "append-late", path, delay.String(), late)
				}
				return nil
			}
			got, err := e.compactFile(context.Background(), path, dropMarked, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.removed) != 1 || len(got.heldOpen) != 0 {
				t.Fatalf("removed %d line(s), held open by %v", len(got.removed), got.heldOpen)
			}
			if err := appender.Wait(); err != nil {
				t.Fatalf("appender: %v", err)
			}
			b, _ := os.ReadFile(path)
			if want := kept + "\n" + late + "\n"; string(b) != want {
				t.Fatalf("registry after compaction:\n%s\nwant:\n%s", b, want)
			}
		})
	}
}

// SPEC §5.3: compaction waits for writers, not for readers: a process
// that holds the registry open for reading only (tail -f) neither delays
// the compaction nor is named.
func TestCompactionDoesNotWaitForReaders(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".children")
	seed := `{"heartbeat":"/nowhere/old/.heartbeat","team":"t","task_id":"0","status":"drop"}` + "\n"
	if err := os.WriteFile(path, []byte(seed), 0o644); err != nil {
		t.Fatal(err)
	}
	c := exec.Command("tail", "-f", path)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	if !waitFor(5*time.Second, func() bool { return holdsOpen(c.Process.Pid, path) }) {
		t.Fatal("tail did not open the registry")
	}
	e := testEngine(dir, model.Thresholds{}, Config{})
	e.drainHold = 400 * time.Millisecond
	start := time.Now()
	got, err := e.compactFile(context.Background(), path, dropMarked, nil)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); got.refused != "" || len(got.heldOpen) != 0 || len(got.removed) != 1 || took >= e.drainHold {
		t.Fatalf("with a reader: refused %q, held open by %v, removed %d, after %s", got.refused, got.heldOpen, len(got.removed), took)
	}
}

// holdsOpen reports whether pid has path open.
func holdsOpen(pid int, path string) bool {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		if l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); l == path {
			return true
		}
	}
	return false
}

// SPEC §5, §5.3 (compact --all): each registry is compacted by the rule of
// its node's state at that moment, not at the time of the one scan that
// listed them: a node that started running meanwhile keeps its fresh
// never-started registrations.
func TestCompactAllRechecksEachNodeAtItsOwnCompaction(t *testing.T) {
	root := t.TempDir()
	writeNode(t, root, nodeSpec{dir: "a", status: "completed", age: time.Minute})
	writeNode(t, root, nodeSpec{dir: "a/done", status: "completed", parent: "a", age: time.Minute})
	register(t, root, "a", "a/done", "t", "1", "active")
	writeNode(t, root, nodeSpec{dir: "b", status: "completed", age: time.Minute})
	register(t, root, "b", "b/never", "t", "2", "active")
	e := testEngine(root, model.Thresholds{}, Config{})
	started := false
	e.hook = func(step string) error {
		if step == "compact:read" && !started {
			// While a is compacted, b is resumed and runs again.
			started = true
			p := startHelper(t, "sleep")
			writeNode(t, root, nodeSpec{dir: "b", pid: p.Process.Pid, started: testproc.Started(t, p.Process.Pid), status: "running"})
		}
		return nil
	}
	if _, err := e.Run(context.Background(), Request{Action: model.ActionCompact, All: true}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a", ".children")); len(b) != 0 {
		t.Fatalf("a/.children still holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "b", ".children")); !strings.Contains(string(b), "b/never") {
		t.Fatalf("b runs again, yet its fresh registration was dropped: %q", b)
	}
}
