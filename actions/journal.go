package actions

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	return filepath.Join(root, journalDirName, journalName)
}

// appendJournal writes one line to the journal of root: O_APPEND and a single
// write, so concurrent dispatchtops never interleave within a line.
func appendJournal(root string, entry JournalEntry) error {
	b, err := json.Marshal(entry)
	if err != nil {
		return fmt.Errorf("journal: encode: %w", err)
	}
	b = append(b, '\n')
	dir := filepath.Join(root, journalDirName)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("journal: create %s: %w", dir, err)
	}
	// The root is writable by agents: a journal planted as a symlink must
	// not make us append elsewhere, nor one planted as a FIFO block us.
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("journal: %s is not a directory", dir)
	}
	path := filepath.Join(dir, journalName)
	f, err := protocol.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("journal: append to %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("journal: close %s: %w", path, err)
	}
	return nil
}

// journalUsable says why the journal of root cannot take a line, or nil. It
// opens nothing; an action checks it before its first side effect, since an
// action that cannot be journaled must not run.
func journalUsable(root string) error {
	dir := filepath.Join(root, journalDirName)
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
	if extra != nil {
		extra(&entry)
	}
	return appendJournal(res.Root, entry)
}

// ReadJournal returns the journal lines of root that concern nodeID (all of
// them when nodeID is ""), oldest first. A missing journal is no lines;
// lines that do not parse are skipped.
func ReadJournal(root, nodeID string) ([]JournalEntry, error) {
	f, _, err := protocol.OpenReader(JournalPath(root))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read journal: %w", err)
	}
	defer f.Close()
	var out []JournalEntry
	sc := bufio.NewScanner(f)
	// Compaction lines carry whole registry lines: allow long ones.
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var j JournalEntry
		if json.Unmarshal(line, &j) != nil {
			continue
		}
		if nodeID == "" || j.Node == nodeID {
			out = append(out, j)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read journal %s: %w", JournalPath(root), err)
	}
	return out, nil
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
