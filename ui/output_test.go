package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

func writeAged(t *testing.T, path, body string, age time.Duration) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	mt := time.Now().Add(-age)
	if err := os.Chtimes(path, mt, mt); err != nil {
		t.Fatal(err)
	}
}

// SPEC §6 Detail pane: the output tail is the newest of the node's output
// files — a *-stream.jsonl, .resume.log, .merge.log or .wrap.log — its last
// 64 KiB at most, cut at a line, made terminal-safe.
func TestReadOutputTail(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]time.Duration // name -> age
		bodies    map[string]string
		wantFile  string
		wantFirst string
		wantLast  string
		wantErr   string
	}{
		{name: "the newest stream wins", files: map[string]time.Duration{".plan-stream.jsonl": time.Hour, ".exec-stream.jsonl": time.Minute},
			bodies: map[string]string{".exec-stream.jsonl": "{\"a\":1}\n{\"b\":2}\n"}, wantFile: ".exec-stream.jsonl", wantFirst: `{"a":1}`, wantLast: `{"b":2}`},
		{name: "a resume log newer than the stream", files: map[string]time.Duration{".exec-stream.jsonl": time.Hour, protocol.ResumeLogFile: time.Second},
			bodies: map[string]string{protocol.ResumeLogFile: "resumed\n"}, wantFile: protocol.ResumeLogFile, wantFirst: "resumed", wantLast: "resumed"},
		{name: "the wrap log", files: map[string]time.Duration{protocol.WrapLogFile: time.Second, ".heartbeat": 0},
			bodies: map[string]string{protocol.WrapLogFile: "hello\n"}, wantFile: protocol.WrapLogFile, wantFirst: "hello", wantLast: "hello"},
		{name: "escapes are made harmless", files: map[string]time.Duration{protocol.MergeLogFile: time.Second},
			bodies: map[string]string{protocol.MergeLogFile: "a\x1b[2Jb\n"}, wantFile: protocol.MergeLogFile, wantFirst: "a\uFFFD[2Jb", wantLast: "a\uFFFD[2Jb"},
		{name: "only the last 64 KiB, from a whole line", files: map[string]time.Duration{protocol.WrapLogFile: time.Second},
			bodies:   map[string]string{protocol.WrapLogFile: strings.Repeat("old line\n", 10000) + "partial-start" + strings.Repeat("x", 100) + "\nnewest\n"},
			wantFile: protocol.WrapLogFile, wantFirst: "old line", wantLast: "newest"},
		{name: "no output file", files: map[string]time.Duration{".heartbeat": 0}, wantErr: "no output file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, age := range tt.files {
				writeAged(t, filepath.Join(dir, name), tt.bodies[name], age)
			}
			tail, err := ReadOutput(context.Background(), &model.Node{ID: "n", InfraDir: dir})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(tail.Path) != tt.wantFile {
				t.Errorf("file %s, want %s", tail.Path, tt.wantFile)
			}
			if len(tail.Lines) == 0 || tail.Lines[0] != tt.wantFirst || tail.Lines[len(tail.Lines)-1] != tt.wantLast {
				t.Errorf("lines %q…, want first %q, last %q", tail.Lines[:min(3, len(tail.Lines))], tt.wantFirst, tt.wantLast)
			}
			read := 0
			for _, l := range tail.Lines {
				read += len(l) + 1
			}
			if read > outputTailBytes {
				t.Errorf("%d bytes of lines, over %d", read, outputTailBytes)
			}
		})
	}
}

// SPEC §6: the details show the output tail, read in a command, and read
// it again when a new snapshot arrives.
func TestDetailsShowTheOutputTail(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, protocol.WrapLogFile)
	writeAged(t, log, "first words\n", 0)
	snap := exampleSnapshot()
	snap.Node("B/ask/3").InfraDir = dir
	m := newTestModel(t, 120, 40, Options{Initial: snap, Output: ReadOutput})
	m.moveTo(m.rowIndex("B/ask/3"))
	run(m, press(m, "enter"))
	press(m, "G")
	if !strings.Contains(stripped(m), "first words") {
		t.Fatalf("the output tail is not in the details:\n%s", stripped(m))
	}
	writeAged(t, log, "first words\nlater words\n", 0)
	snap2 := exampleSnapshot()
	snap2.Node("B/ask/3").InfraDir = dir
	_, cmd := m.Update(updateMsg{update: model.Update{Snapshot: snap2}})
	run(m, cmd)
	press(m, "G")
	if !strings.Contains(stripped(m), "later words") {
		t.Errorf("the output tail did not follow the file:\n%s", stripped(m))
	}
}

// SPEC §6 Keys: o runs $PAGER split into words (never a shell), with the
// output file as its last argument; less when $PAGER is unset.
func TestPagerArgv(t *testing.T) {
	tests := []struct {
		name, pager string
		want        []string
	}{
		{name: "unset is less", pager: "", want: []string{"less", "/x/.wrap.log"}},
		{name: "a command and its flags", pager: "less -R +G", want: []string{"less", "-R", "+G", "/x/.wrap.log"}},
		{name: "shell syntax is not interpreted", pager: "more; rm -rf /", want: []string{"more;", "rm", "-rf", "/", "/x/.wrap.log"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := commandArgv(tt.pager, "less", "/x/.wrap.log")
			if strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") {
				t.Errorf("argv %q, want %q", got, tt.want)
			}
		})
	}
}

// SPEC §6 Answer: a blocked node's details show the whole question, line
// breaks kept and wrapped, and where the answer goes.
func TestDetailsShowTheWholeQuestion(t *testing.T) {
	snap := exampleSnapshot()
	long := "Ship it to production now?\nThe canary " + strings.Repeat("looked fine ", 20) + "END-OF-QUESTION"
	snap.Node("B/ask/3").Blocked.Question = long
	m := newTestModel(t, 80, 40, Options{Initial: snap})
	m.moveTo(m.rowIndex("B/ask/3"))
	run(m, press(m, "enter"))
	frame := stripped(m)
	for _, want := range []string{"Ship it to production now?", "END-OF-QUESTION", "answer to", "/srv/fleet/.sessions/B/ask/3/answer.md"} {
		if !strings.Contains(frame, want) {
			t.Errorf("%q not in the details:\n%s", want, frame)
		}
	}
}

// SPEC §6 Keys: a opens $EDITOR on the reply file next to a native
// sentinel; elsewhere the status line says how to answer.
func TestAnswerKey(t *testing.T) {
	tests := []struct {
		name       string
		node       string
		source     string
		wantExec   bool
		wantStatus string
	}{
		{name: "a native blocked node opens the editor", node: "B/ask/3", wantExec: true},
		{name: "a node not waiting says so", node: "A/test/3", wantStatus: "A/test/3 is not waiting for an answer"},
		{name: "another source's node says where to answer", node: "B/ask/3", source: "middle", wantStatus: "answer B/ask/3: middle reads answers through its own channel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := exampleSnapshot()
			snap.Node(tt.node).Source = tt.source
			answers := &fakeAnswers{}
			m := newTestModel(t, 80, 24, Options{Initial: snap, Editor: "true", Answer: answers.write})
			m.moveTo(m.rowIndex(tt.node))
			cmd := press(m, "a")
			if tt.wantExec {
				if cmd == nil {
					t.Fatal("a gave no command")
				}
				// The draft is written, then the editor opens on it.
				draft, ok := cmd().(answerDraftMsg)
				if !ok || draft.err != nil {
					t.Fatalf("a drafts %+v", draft)
				}
				defer os.Remove(draft.path)
				_, cmd = m.Update(draft)
				if msg := cmd(); !isExec(msg) {
					t.Errorf("a runs %T, want the editor through tea.ExecProcess", msg)
				}
				return
			}
			if !strings.Contains(stripped(m), tt.wantStatus) {
				t.Errorf("status does not say %q:\n%s", tt.wantStatus, stripped(m))
			}
		})
	}
}

// isExec reports whether msg is what tea.ExecProcess's command gives.
func isExec(msg tea.Msg) bool {
	want := tea.ExecProcess(nil, nil)()
	return msg != nil && strings.HasSuffix(typeName(msg), typeName(want))
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

// SPEC §6 Keys: o hands the terminal to $PAGER on the node's output file
// and takes it back when the pager ends (here `true`, which ends at once).
func TestEndToEndPagerOpensTheOutput(t *testing.T) {
	t.Setenv("PAGER", "true")
	dir := t.TempDir()
	writeAged(t, filepath.Join(dir, protocol.WrapLogFile), "hello\n", 0)
	snap := exampleSnapshot()
	snap.Node("B/ask/3").InfraDir = dir
	m := New(Options{Initial: snap, Output: ReadOutput, Now: fixedNow, Tick: -1})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	waitOutput(t, tm, "asker")
	for range m.rowIndex("B/ask/3") {
		tm.Send(keyMsg("j"))
	}
	tm.Send(keyMsg("o"))
	waitOutput(t, tm, "pager true closed")
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

// SPEC §6 Keys: o follows the output as it grows: less (the default, or
// a $PAGER that is less) starts in its follow mode (+F) unless $PAGER gives
// it a command of its own; another pager is run as given.
func TestPagerFollowsTheOutput(t *testing.T) {
	tests := []struct {
		name, pager string
		want        []string
	}{
		{name: "unset follows in less", pager: "", want: []string{"less", "+F", "/x/.wrap.log"}},
		{name: "less with flags follows", pager: "less -R", want: []string{"less", "-R", "+F", "/x/.wrap.log"}},
		{name: "less by its path follows", pager: "/usr/bin/less", want: []string{"/usr/bin/less", "+F", "/x/.wrap.log"}},
		{name: "less given a command of its own keeps it", pager: "less -R +G", want: []string{"less", "-R", "+G", "/x/.wrap.log"}},
		{name: "another pager as given", pager: "more", want: []string{"more", "/x/.wrap.log"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pagerArgv(tt.pager, "/x/.wrap.log")
			if strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") {
				t.Errorf("argv %q, want %q", got, tt.want)
			}
		})
	}
}
