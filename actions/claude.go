package actions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
)

// A Claude Code session keeps no dir of its own that dispatchtop may write:
// its store is Claude Code's and its cwd the user's project. The source
// gives it a dir of dispatchtop's own instead, under the root's journal
// dir (claudecode.ResumeDir), which holds the resume's marker, retry count
// and log, and which does not exist before the first resume; the command
// runs in the session's cwd, where `claude --resume <sessionId>` finds the
// session (SPEC §5.2, §5.5).

// sessionIDField names, per source, the SourceFields entry that holds the
// agent's session id in its system ({session_id}).
var sessionIDField = map[sources.Kind]string{sources.ClaudeCode: "session id"}

// ownsDir reports whether n's dir is dispatchtop's own, made by the first
// resume: a Claude Code session's, under the root's journal dir.
func ownsDir(n *model.Node) bool {
	if sources.Kind(sourceName(n)) != sources.ClaudeCode || n.InfraDir == "" {
		return false
	}
	for _, part := range strings.Split(filepath.ToSlash(n.InfraDir), "/") {
		if part == protocol.JournalDir {
			return true
		}
	}
	return false
}

// resolveDir resolves n's dir's symlinks; a dir of dispatchtop's own that
// does not exist yet resolves as its nearest ancestor that does, followed
// by the names still to be made (none of them can be a symlink).
func resolveDir(n *model.Node) (string, error) {
	real, err := filepath.EvalSymlinks(n.InfraDir)
	if err == nil || !ownsDir(n) || !errors.Is(err, fs.ErrNotExist) {
		return real, err
	}
	rest := ""
	for dir := n.InfraDir; ; {
		parent := filepath.Dir(dir)
		rest = filepath.Join(filepath.Base(dir), rest)
		if parent == dir {
			return "", err
		}
		if real, perr := filepath.EvalSymlinks(parent); perr == nil {
			return filepath.Join(real, rest), nil
		} else if !errors.Is(perr, fs.ErrNotExist) {
			return "", perr
		}
		dir = parent
	}
}

// makeOwnDir makes n's dir when it is dispatchtop's own and is not there
// yet, and checks again that it lies inside a root once made: a symlink
// planted on its way since the first check is caught here.
func (e *Engine) makeOwnDir(n *model.Node) error {
	if !ownsDir(n) {
		return nil
	}
	if err := os.MkdirAll(n.InfraDir, 0o700); err != nil {
		return fmt.Errorf("node %s: make its resume dir: %w", n.ID, err)
	}
	if why := e.confined(n); why != "" {
		return errors.New(why)
	}
	return nil
}

// workDir is where n's command runs: its dir, or for a Claude Code
// session its cwd, which must be an absolute path to a directory that
// exists (the session resumes where it ran; nothing is written there by
// dispatchtop).
func workDir(n *model.Node) (string, error) {
	if !ownsDir(n) {
		return n.InfraDir, nil
	}
	cwd := fieldNamed(n, "cwd")
	if !filepath.IsAbs(cwd) {
		return "", fmt.Errorf("node %s: its session's cwd %q is not an absolute path: nowhere to resume it", n.ID, cwd)
	}
	st, err := os.Stat(cwd)
	if err != nil {
		return "", fmt.Errorf("node %s: its session's cwd: %w: nowhere to resume it", n.ID, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("node %s: its session's cwd %s is not a directory: nowhere to resume it", n.ID, cwd)
	}
	return cwd, nil
}

// fieldNamed is the value of n's source field name ("" when absent).
func fieldNamed(n *model.Node, name string) string {
	for _, f := range n.SourceFields() {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// claudeAnswerRefusal says why a Claude Code node's question cannot be
// answered from here: Claude Code reads a session's answer in its own
// terminal, and a teammate's plan approval is the lead's reply in the
// team's inbox, a file of Claude Code's that dispatchtop never writes.
func claudeAnswerRefusal(n *model.Node) string {
	where := "in the terminal that runs it"
	if n.Blocked != nil && strings.HasPrefix(n.Blocked.Question, "plan approval") {
		where = "by its team's lead, in the lead's session (the reply goes to the team's inbox, a file of Claude Code's)"
	} else if n.Blocked != nil && n.Blocked.Kind == "claude-code job" {
		where = "in `claude agents`, which owns the job"
	}
	return fmt.Sprintf("answer %s: Claude Code takes its answer only %s; it offers dispatchtop no channel to write, and its store is never written: answer it there", n.ID, where)
}

// sharedDirRuns says why n, dead, must not be resumed while another node
// of its dir runs, or "": a Claude Code session resumed once has two
// files in sessions/, the one its killed process left (a pid since
// reused keeps it dead, not finished) and its new process's, both of the
// session's one dir. Resuming the old would start the session twice.
func sharedDirRuns(snap *model.Snapshot, n *model.Node) string {
	if n.InfraDir == "" || snap == nil {
		return ""
	}
	why := ""
	for _, s := range snap.Sessions {
		s.Walk(func(o *model.Node) {
			if why == "" && o != n && o.InfraDir == n.InfraDir && o.State == model.StateRunning {
				why = fmt.Sprintf("node %s: its session runs again as %s (pid %d): already resumed", n.ID, o.ID, o.PID())
			}
		})
	}
	return why
}
