package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/dispatchtop/dispatchtop/actions"
	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// outputTailBytes is how much of the end of an output file is read: a
// screenful many times over, and cheap to read on every snapshot.
const outputTailBytes = 64 << 10

// outputTailLines is how many of those lines the detail pane shows; `o`
// shows the whole file.
const outputTailLines = 40

// outputLineMax cuts a very long line (a JSONL event) before it is wrapped.
const outputLineMax = 400

// OutputTail is the end of a node's newest output file.
type OutputTail struct {
	Path  string
	Size  int64
	Lines []string // terminal-safe, oldest first
	Cut   bool     // the file is longer than what was read
}

// OutputReader reads a node's output tail. It reads files, so the ui only
// calls it from a command; nil (a remote view) shows no output.
type OutputReader func(ctx context.Context, n *model.Node) (OutputTail, error)

// outputMsg is an output tail read for a node.
type outputMsg struct {
	id   string
	tail OutputTail
	err  error
}

// isOutputFile names the files a node's output goes to: its event streams,
// the logs of resume and merge, and what wrap captured.
func isOutputFile(name string) bool {
	switch name {
	case protocol.ResumeLogFile, protocol.MergeLogFile, protocol.WrapLogFile:
		return true
	}
	return strings.HasSuffix(name, protocol.StreamSuffix)
}

// newestOutputFile is the most recently modified output file in dir.
func newestOutputFile(dir string) (string, int64, error) {
	if dir == "" {
		return "", 0, errors.New("no infra dir")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", dir, err)
	}
	var best os.FileInfo
	for _, e := range entries {
		if !e.Type().IsRegular() || !isOutputFile(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // gone since the listing
		}
		if best == nil || info.ModTime().After(best.ModTime()) {
			best = info
		}
	}
	if best == nil {
		return "", 0, fmt.Errorf("no output file in %s", dir)
	}
	return filepath.Join(dir, best.Name()), best.Size(), nil
}

// ReadOutput is the OutputReader of local trees: the last 64 KiB of the
// newest output file in the node's infra dir, from the first whole line.
func ReadOutput(_ context.Context, n *model.Node) (OutputTail, error) {
	path, _, err := newestOutputFile(n.InfraDir)
	if err != nil {
		return OutputTail{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return OutputTail{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return OutputTail{}, err
	}
	tail := OutputTail{Path: path, Size: info.Size()}
	start := max(0, info.Size()-outputTailBytes)
	buf := make([]byte, info.Size()-start)
	got, err := f.ReadAt(buf, start)
	if err != nil && !errors.Is(err, io.EOF) {
		return OutputTail{}, fmt.Errorf("read %s: %w", path, err)
	}
	text := string(buf[:got])
	if start > 0 {
		tail.Cut = true
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = text[i+1:] // the read began inside a line
		}
	}
	text = strings.TrimRight(text, "\n")
	if text != "" {
		for _, l := range strings.Split(text, "\n") {
			tail.Lines = append(tail.Lines, termtext.Line(strings.TrimSuffix(l, "\r")))
		}
	}
	return tail, nil
}

// loadOutput reads the node's output tail in a command.
func (m *Model) loadOutput(n *model.Node) tea.Cmd {
	if m.opts.Output == nil {
		return nil
	}
	read, ctx, node := m.opts.Output, m.ctx, *n
	return func() tea.Msg {
		tail, err := read(ctx, &node)
		return outputMsg{id: node.ID, tail: tail, err: err}
	}
}

// outputLines is the detail pane's output section.
func (m *Model) outputLines(n *model.Node) []string {
	o, ok := m.output[n.ID]
	switch {
	case m.opts.Output == nil:
		return []string{"  (output is not readable from here)"}
	case !ok:
		return []string{"  loading…"}
	case o.err != nil:
		return []string{"  " + termtext.Line(o.err.Error())}
	}
	t := o.tail
	shown := t.Lines[max(0, len(t.Lines)-outputTailLines):]
	head := fmt.Sprintf("  %s, %d bytes; last %d lines (o opens it in $PAGER)", t.Path, t.Size, len(shown))
	out := []string{termtext.Line(head)}
	for _, l := range shown {
		if r := []rune(l); len(r) > outputLineMax {
			l = string(r[:outputLineMax]) + "…"
		}
		out = append(out, "  │ "+l)
	}
	if len(shown) == 0 {
		out = append(out, "  (empty)")
	}
	return out
}

// commandArgv splits the command an environment variable names ($PAGER,
// $EDITOR) into words at spaces — no shell, no quoting — and appends the
// file; fallback when the variable is empty.
func commandArgv(command, fallback, file string) []string {
	argv := strings.Fields(command)
	if len(argv) == 0 {
		argv = []string{fallback}
	}
	return append(argv, file)
}

// pagerArgv is how `o` runs $PAGER on path: split into words (no shell);
// less, the default, starts in its follow mode (+F: a tail that grows as
// the agent writes, until ctrl+c, then a pager as usual), unless $PAGER
// gives it a `+` command of its own.
func pagerArgv(pager, path string) []string {
	argv := commandArgv(pager, "less", path)
	if filepath.Base(argv[0]) != "less" {
		return argv
	}
	for _, a := range argv[1 : len(argv)-1] {
		if strings.HasPrefix(a, "+") {
			return argv
		}
	}
	return append(argv[:len(argv)-1:len(argv)-1], "+F", path)
}

// execDoneMsg is a pager or editor that returned.
type execDoneMsg struct {
	what, path string
	err        error
}

// openPager is `o`: the node's newest output file in $PAGER. The file is
// found in the command (IO), which then hands the terminal to the pager.
func (m *Model) openPager() tea.Cmd {
	n := m.selectedNode()
	if n == nil {
		return nil
	}
	if m.opts.Output == nil {
		m.setStatus("the output is not readable from here", true)
		return nil
	}
	dir, id, pager := n.InfraDir, n.ID, os.Getenv("PAGER")
	return func() tea.Msg {
		path, _, err := newestOutputFile(dir)
		if err != nil {
			return execDoneMsg{what: "output of " + id, err: err}
		}
		argv := pagerArgv(pager, path)
		c := exec.Command(argv[0], argv[1:]...)
		return tea.ExecProcess(c, func(err error) tea.Msg {
			return execDoneMsg{what: "pager " + argv[0], path: path, err: err}
		})()
	}
}

// answerPath is the reply file of a node waiting on the native protocol:
// answer.md beside its blocked.json. Other sources have their own channel.
func answerPath(n *model.Node) string { return actions.AnswerPath(n) }

// execDone reports how the pager or editor ended.
func (m *Model) execDone(msg execDoneMsg) {
	if msg.err != nil {
		m.setStatus(msg.what+": "+msg.err.Error(), true)
		return
	}
	m.setStatus(msg.what+" closed: "+msg.path, false)
}
