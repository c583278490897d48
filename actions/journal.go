package actions

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// JournalEntry is one line of `<root>/.dispatchtop/journal.jsonl`: an action
// or a refusal, who did it, what was checked and what came of it.
type JournalEntry struct {
	Time    time.Time    `json:"time"`
	User    string       `json:"user"`
	Host    string       `json:"host"`
	Action  model.Action `json:"action"`
	Node    string       `json:"node"`
	PID     int          `json:"pid"` // the pid the node names
	Checks  []string     `json:"checks"`
	Outcome string       `json:"outcome"`
	Message string       `json:"message"`
	// Force is set when resume overrode the retry budget.
	Force bool `json:"force,omitempty"`
	// Removed holds compaction's removed registry lines, verbatim.
	Removed []string `json:"removed,omitempty"`
	// Signals lists the pids kill signalled, in order.
	Signals []string `json:"signals,omitempty"`
	// By is the pid of the dispatchtop that acted.
	By int `json:"by"`
}

// Line renders the entry as one human line for the detail pane.
func (j JournalEntry) Line() string {
	s := fmt.Sprintf("%s %s %s by %s@%s: %s", j.Time.Local().Format("2006-01-02 15:04:05"), j.Action, j.Outcome, j.User, j.Host, j.Message)
	if j.Force {
		s += " (forced past the retry budget)"
	}
	return s
}

// JournalPath is where the journal of root lives.
func JournalPath(root string) string {
	return filepath.Join(journalDir(root), protocol.JournalFile)
}

// journalDir is the directory of root's journal: under the root, or, for a
// store whose root is a file (a database), under the directory that holds
// it.
func journalDir(root string) string {
	if st, err := os.Stat(root); err == nil && st.Mode().IsRegular() {
		root = filepath.Dir(root)
	}
	return filepath.Join(root, protocol.JournalDir)
}

// journalLockWait bounds the wait for another dispatchtop's append (a few
// microseconds); a lock held longer is held by something else in the root,
// and the line is refused rather than waited for.
const journalLockWait = 2 * time.Second

// appendJournal writes one line to the journal of root, whole or not at all
// (see appendWhole); via, when set (tests), stands between it and the file.
func appendJournal(root string, entry JournalEntry, via func(io.Writer) io.Writer) error {
	line, err := json.Marshal(entry)
	if err != nil {
		return fmt.Errorf("journal: encode: %w", err)
	}
	line = append(line, '\n')
	dir := journalDir(root)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("journal: create %s: %w", dir, err)
	}
	// The root is writable by agents: a journal planted as a symlink must
	// not make us append elsewhere, nor one planted as a FIFO block us.
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("journal: %s is not a directory", dir)
	}
	path := filepath.Join(dir, protocol.JournalFile)
	// Read-write: the last byte tells whether an earlier line was torn.
	f, err := protocol.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	var w io.Writer = f
	if via != nil {
		w = via(f)
	}
	err = appendWhole(f, w, path, line)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("journal: close %s: %w", path, cerr)
	}
	return err
}

// appendWhole appends line to f (opened O_APPEND) through w in one write,
// under an exclusive lock that dispatchtops take around their appends. A
// write cut short (a full disk) is taken back, so no torn line is left for
// the next entry to be glued to; a torn line an earlier crash left is ended
// first, so this entry is a line of its own (the reader skips the torn one).
func appendWhole(f *os.File, w io.Writer, path string, line []byte) error {
	unlock, err := lockJournal(f, path)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("journal: stat %s: %w", path, err)
	}
	size := st.Size()
	if size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil {
			return fmt.Errorf("journal: read %s: %w", path, err)
		}
		if last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	n, err := w.Write(line)
	if err == nil && n < len(line) {
		err = io.ErrShortWrite
	}
	if err == nil {
		return nil
	}
	if n > 0 {
		// Only while the partial line is still the file's tail: an
		// appender that does not lock may have written after it.
		if now, serr := f.Stat(); serr != nil || now.Size() != size+int64(n) || f.Truncate(size) != nil {
			return fmt.Errorf("journal: append to %s: %w (a torn line is left; the next entry starts on a new line)", path, err)
		}
	}
	return fmt.Errorf("journal: append to %s: %w", path, err)
}

// lockJournal takes an exclusive flock on the journal, waiting at most
// journalLockWait. Where locks are not supported the append goes on without
// one: taking a short write back then checks the file's size first.
func lockJournal(f *os.File, path string) (func(), error) {
	fd := int(f.Fd())
	deadline := time.Now().Add(journalLockWait)
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return func() { _ = syscall.Flock(fd, syscall.LOCK_UN) }, nil
		case err != syscall.EWOULDBLOCK && err != syscall.EINTR:
			return func() {}, nil
		case time.Now().After(deadline):
			return nil, fmt.Errorf("journal: %s stayed locked for %v: the line was not written", path, journalLockWait)
		}
		time.Sleep(time.Millisecond)
	}
}

// journalUsable says why the journal of root cannot take a line, or nil. It
// opens nothing; an action checks it before its first side effect, since an
// action that cannot be journaled must not run.
func journalUsable(root string) error {
	dir := journalDir(root)
	if st, err := os.Lstat(dir); err == nil && !st.IsDir() {
		return fmt.Errorf("journal: %s is not a directory", dir)
	}
	if err := protocol.CheckRegular(JournalPath(root)); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

// journalResult records res (and the request's details) in its root's journal.
func (e *Engine) journalResult(req Request, res Result, extra func(*JournalEntry)) error {
	// A dry run changes nothing on disk, the journal included.
	if res.Root == "" || req.DryRun || res.Outcome == OutcomeDryRun {
		return nil
	}
	entry := e.entry(res)
	if extra != nil {
		extra(&entry)
	}
	if err := appendJournal(res.Root, entry, e.journalWriter); err != nil {
		return err
	}
	if e.opts.Journaled != nil {
		e.opts.Journaled(entry)
	}
	return nil
}

// entry is the journal line of res, before an action adds its details.
func (e *Engine) entry(res Result) JournalEntry {
	entry := JournalEntry{
		Time:    e.now().UTC(),
		User:    currentUser(),
		Host:    hostname(),
		Action:  res.Action,
		Node:    res.NodeID,
		PID:     res.PID,
		Checks:  res.Checks,
		Outcome: res.Outcome,
		Message: res.Message,
		By:      e.self,
	}
	if entry.Checks == nil {
		entry.Checks = []string{}
	}
	return entry
}

// Entry is the journal line of the outcome of req, as the journal records
// an action's own line: for a dry run, the line it would have written.
// (kill's line also lists the signals it sent: only the written one can.)
func (e *Engine) Entry(req Request, res Result) JournalEntry {
	entry := e.entry(res)
	entry.Force = req.Action == model.ActionResume && req.Force
	entry.Removed = res.Removed
	return entry
}

// ReadJournal returns the journal lines of root that concern nodeID (all of
// them when nodeID is ""), oldest first. A missing journal is no lines;
// lines that do not parse (a torn line a crash left) are skipped. Lines
// over MaxJournalLine are skipped too, and the error names them, after the
// entries read. It holds every entry: a reader of a journal of any size
// uses OpenJournal.
func ReadJournal(root, nodeID string) ([]JournalEntry, error) {
	jr, err := OpenJournal(root, JournalReadOptions{Node: nodeID})
	if err != nil {
		return nil, err
	}
	defer jr.Close()
	var out []JournalEntry
	for {
		j, ok := jr.Next()
		if !ok {
			break
		}
		out = append(out, j)
	}
	errs := []error{jr.Err()}
	for _, p := range jr.Problems() {
		errs = append(errs, fmt.Errorf("%s: %s", p.Path, p.Error))
	}
	return out, joinErrors(errs...)
}

func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	for _, k := range []string{"USER", "LOGNAME"} {
		if v := strings.TrimSpace(os.Getenv(k)); v != "" {
			return v
		}
	}
	return fmt.Sprintf("uid%d", os.Getuid())
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return h
}
