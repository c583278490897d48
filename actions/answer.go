package actions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
)

// AnswerPath is where blocked node n's system reads an answer: for the
// native protocol `answer.md` beside its sentinel (SPEC §6 Answer); "" for
// a node that is not blocked or whose system's reply channel is its own.
func AnswerPath(n *model.Node) string {
	if n == nil || n.Blocked == nil || n.Blocked.Path == "" || (n.Source != "" && n.Source != "native") {
		return ""
	}
	return filepath.Join(filepath.Dir(n.Blocked.Path), protocol.AnswerFile)
}

// AnswerRefusal is why blocked node n cannot be answered from here, for a
// node whose AnswerPath is "": its system reads answers through a channel
// of its own, which it names where it can (Claude Code's).
func AnswerRefusal(n *model.Node) string {
	if sources.Kind(n.Source) == sources.ClaudeCode {
		return claudeAnswerRefusal(n)
	}
	return fmt.Sprintf("answer %s: %s reads answers through its own channel; dispatchtop writes none of it", n.ID, n.Source)
}

// Answer writes text as the answer to blocked node n where its system
// reads it (AnswerPath), whole or not at all, and journals it. A node of
// another source is refused: its reply channel is the system's own, and
// another system's store is never written. It returns the path written.
func Answer(n *model.Node, text string, now time.Time) (string, error) {
	if n == nil || n.Blocked == nil {
		return "", fmt.Errorf("answer: the node is not waiting for an answer")
	}
	path := AnswerPath(n)
	if path == "" {
		return "", errors.New(AnswerRefusal(n))
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return "", fmt.Errorf("answer %s: the answer is empty; nothing written", n.ID)
	}
	if err := journalUsable(n.Root); err != nil {
		return "", fmt.Errorf("answer %s: no answer is written that cannot be journaled: %w", n.ID, err)
	}
	if err := protocol.WriteFileAtomic(path, []byte(text+"\n")); err != nil {
		return "", fmt.Errorf("answer %s: %w", n.ID, err)
	}
	entry := JournalEntry{
		Time: now.UTC(), User: currentUser(), Host: hostname(), Action: model.ActionAnswer, Node: n.ID,
		PID: n.PID(), Checks: []string{"blocked: " + n.Blocked.Path}, Outcome: "done",
		Message: fmt.Sprintf("answered %s: %d bytes in %s", n.ID, len(text)+1, path), By: os.Getpid(),
	}
	if err := appendJournal(n.Root, entry, nil); err != nil {
		return path, fmt.Errorf("answer %s: written to %s, not journaled: %w", n.ID, path, err)
	}
	return path, nil
}
