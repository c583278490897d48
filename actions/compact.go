package actions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// maxRegistrySize bounds the registry compaction will rewrite; compaction
// carries every byte it keeps, so it reads the whole file.
const maxRegistrySize = 512 << 20

// Drain tuning: before the rename, a process that holds the registry open
// for writing is waited for up to defaultDrainHold, looked at every
// holderPoll, and the compaction is refused if it still does; after the
// rename, the replaced file is read while a process still holds it open
// for writing (up to defaultDrainHold, after which it is left for the next
// run), then until it has been quiet this many polls in a row, each this
// far apart — longer where who holds it cannot be seen; a torn tail is
// waited for this long before it is carried over as it is.
const (
	defaultDrainHold     = 5 * time.Second
	holderPoll           = 10 * time.Millisecond
	drainQuietPolls      = 3
	drainQuietPollsBlind = 50
	drainPoll            = 2 * time.Millisecond
	drainTornWait        = 200 * time.Millisecond
	// drainSettle: the second look for writers comes at least this long
	// after the rename, also when a cancel hurries the drain, so that an
	// open that raced the rename has returned and shows in /proc.
	drainSettle = 10 * time.Millisecond
)

// compaction is what compactFile did: the lines it removed (none when the
// registry was left as it was, whatever the error); the processes that
// still held the replaced registry open for writing when the drain window
// ended (it stays as .children.compacting, and what they write is carried
// over by the next action or watcher); or why it refused to compact.
type compaction struct {
	removed  []removal
	heldOpen []protocol.Holder
	refused  string
}

// removal is a registry line compaction drops, and why.
type removal struct {
	line   []byte
	reason string
}

// compactNode rewrites one node's `.children` without its dead weight.
func (e *Engine) compactNode(ctx context.Context, req Request, n *model.Node) (Result, error) {
	res := Result{Action: model.ActionCompact, NodeID: n.ID, Root: n.Root, PID: n.PID()}
	if n.InfraDir == "" {
		// A record of another source with no dir: there is no registry,
		// and a relative path would name one of the working directory.
		res = refuse(res, fmt.Sprintf("node %s has no .children to compact: its %s record keeps its children in its store", n.ID, sourceName(n)))
		if req.quietNoop {
			return res, nil
		}
		return res, e.journalResult(req, res, nil)
	}
	path := filepath.Join(n.InfraDir, protocol.RegistryFile)
	st, err := os.Lstat(path)
	if err == nil && !st.Mode().IsRegular() {
		// A symlink could point out of the root: never rewritten.
		err = fmt.Errorf("%s is not a regular file (%s)", path, st.Mode().Type())
	}
	if err != nil {
		why := fmt.Sprintf("node %s has no registry to compact: %v", n.ID, err)
		if !isNative(n) {
			why = fmt.Sprintf("node %s has no .children to compact: its %s record keeps its children in its store (%v)", n.ID, sourceName(n), err)
		}
		res = refuse(res, why)
		if req.quietNoop {
			return res, nil
		}
		return res, e.journalResult(req, res, nil)
	}
	running := n.State == model.StateRunning
	old := e.now().Sub(st.ModTime()) > e.thresholds().Stale
	res.Checks = []string{
		fmt.Sprintf("state %s", n.State),
		fmt.Sprintf("registry mtime %s (older than stale: %t)", st.ModTime().UTC().Format(time.RFC3339), old),
	}
	decide := e.compactRule(n.InfraDir, running)
	if req.DryRun {
		b, err := readRegistryView(path)
		if err != nil {
			return res, err
		}
		_, removed := filterLines(b[:bytes.LastIndexByte(b, '\n')+1], old, decide)
		for _, r := range removed {
			res.Removed = append(res.Removed, string(r.line))
		}
		res.Outcome = OutcomeDryRun
		res.Plan = []string{fmt.Sprintf("rewrite %s without %d line(s), every other byte kept", path, len(removed))}
		for _, r := range removed {
			res.Plan = append(res.Plan, fmt.Sprintf("  drop (%s): %s", r.reason, r.line))
		}
		res.Message = fmt.Sprintf("would remove %d line(s) from %s", len(removed), path)
		return res, nil
	}
	// The removed lines reach the journal before they leave the registry:
	// a dispatchtop killed after the rename has recorded them already.
	journaled := false
	commit := func(removed []removal) error {
		done := res
		done.Outcome = OutcomeDone
		done.Message = fmt.Sprintf("removed %d line(s) from %s", len(removed), path)
		done.Removed = removedLines(removed)
		if err := e.journalResult(req, done, func(j *JournalEntry) { j.Removed = done.Removed }); err != nil {
			return err
		}
		journaled = true
		return nil
	}
	c, err := e.compactFile(ctx, path, decide, commit)
	if err == nil && c.refused != "" {
		return e.refused(req, res, c.refused)
	}
	res.Removed = removedLines(c.removed)
	if err != nil {
		res.Outcome, res.Message = OutcomeFailed, fmt.Sprintf("compact %s: %v", n.ID, err)
		if journaled && len(c.removed) == 0 {
			res.Message += "; the registry was left as it was: the lines journaled as removed are still in it"
		}
		// Past the rename the lines are gone: this line carries them too.
		return res, joinErrors(err, e.journalResult(req, res, func(j *JournalEntry) { j.Removed = res.Removed }))
	}
	res.Outcome = OutcomeDone
	res.Message = fmt.Sprintf("removed %d line(s) from %s", len(c.removed), path)
	for _, r := range c.removed {
		res.Plan = append(res.Plan, fmt.Sprintf("dropped (%s): %s", r.reason, r.line))
	}
	if len(c.heldOpen) > 0 {
		held := fmt.Sprintf("%s still held the replaced registry open for writing when the drain ended (at most %s): it stays as %s, shown with the registry, and what is written to it is carried over by the next action or the dashboard",
			protocol.HolderWords(c.heldOpen), e.drainHold, protocol.CompactingFile)
		res.Message += "; " + held
		note := res
		note.Message = held
		return res, e.journalResult(req, note, nil)
	}
	if journaled || len(c.removed) == 0 && req.quietNoop {
		return res, nil
	}
	return res, e.journalResult(req, res, nil)
}

// readRegistryView reads the registry at path as the compaction will find
// it: with the lines an unfinished compaction left in
// .children.compacting, which it carries over first.
func readRegistryView(path string) ([]byte, error) {
	dir := filepath.Dir(path)
	if _, err := os.Lstat(filepath.Join(dir, protocol.CompactingFile)); err != nil {
		return protocol.ReadFile(path, maxRegistrySize)
	}
	v, err := protocol.ReadView(dir, maxRegistrySize)
	if err != nil {
		return nil, err
	}
	return append(v.Registry, v.Pending...), nil
}

func removedLines(removed []removal) []string {
	var out []string
	for _, r := range removed {
		out = append(out, string(r.line))
	}
	return out
}

// compactAll compacts every registry under the roots; the journal gets a
// line for each registry that lost lines.
func (e *Engine) compactAll(ctx context.Context, req Request) (Result, error) {
	res := Result{Action: model.ActionCompact, NodeID: "--all"}
	if e.opts.Readonly && !req.DryRun {
		return refuse(res, "read-only mode: no action can run"), nil
	}
	snap, err := e.scanRoots()
	if err != nil {
		return res, err
	}
	if !req.DryRun {
		e.finishCompactions(snap)
	}
	var errs []error
	total, files := 0, 0
	for _, s := range snap.Sessions {
		s.Walk(func(n *model.Node) {
			if !n.HasRegistry || n.HasScanFlag(model.FlagOutsideRoot) {
				return
			}
			if ctx.Err() != nil {
				return
			}
			// The scan is as old as the compactions before this one (each
			// may drain for seconds): re-read the node, cheaply, for the
			// running state the rule depends on.
			fresh, err := e.reread(n)
			if err != nil {
				errs = append(errs, err)
				return
			}
			if !fresh.HasRegistry || fresh.HasScanFlag(model.FlagOutsideRoot) {
				return
			}
			sub := req
			sub.All, sub.quietNoop = false, true
			r, err := e.compactNode(ctx, sub, fresh)
			if err != nil {
				errs = append(errs, err)
			}
			if r.Refused {
				res.Plan = append(res.Plan, "refused: "+r.Message)
			}
			if removed := len(r.Removed); removed > 0 {
				files++
				total += removed
				res.Plan = append(res.Plan, r.Message)
			}
		})
	}
	res.Message = fmt.Sprintf("removed %d line(s) from %d registr(ies)", total, files)
	res.Outcome = OutcomeDone
	if req.DryRun {
		res.Outcome = OutcomeDryRun
		res.Message = "would have " + res.Message
	}
	if len(errs) > 0 {
		res.Outcome = OutcomeFailed
	}
	return res, joinErrors(errs...)
}

// finishCompactions finishes what compactions that did not finish left in
// the registries of snap (SPEC §5.3): the next action of any kind after a
// compaction was killed carries over the lines appended to the replaced
// registry and removes it. A leftover a live compaction holds is its own;
// one a writer still holds, or that cannot be finished (the scan shows why
// as a problem of its node), stays and is shown with the registry. Nothing
// here decides the action at hand, so its errors do not fail it.
func (e *Engine) finishCompactions(snap *model.Snapshot) {
	for _, s := range snap.Sessions {
		s.Walk(func(n *model.Node) {
			if n.RegistryCompacting() != "" && !n.HasScanFlag(model.FlagOutsideRoot) {
				_, _ = protocol.Recover(n.InfraDir)
			}
		})
	}
}

// reread reads n again from disk: its own directory and what lies below
// (its state is its own heartbeat's and pid's), else the whole forest.
func (e *Engine) reread(n *model.Node) (*model.Node, error) {
	if snap, err := e.scanSession(n.InfraDir); err == nil {
		if fresh := snap.Node(n.ID); fresh != nil {
			return fresh, nil
		}
	}
	_, fresh, err := e.locate(n.InfraDir, "")
	return fresh, err
}

// compactRule decides, for a registry of the node at infra, which complete
// lines go: an entry whose heartbeat is terminal; an entry whose heartbeat
// is gone and whose line is terminal; and an entry whose heartbeat is gone
// and whose infra dir does not exist, but that one only when the registry
// is older than stale or the node is not running (an optimistic
// registration must have had time to start). Everything else stays,
// unparseable lines included.
func (e *Engine) compactRule(infra string, running bool) func(line []byte, fileOld bool) (bool, string) {
	return func(line []byte, fileOld bool) (bool, string) {
		parsed := protocol.ParseRegistry(line)
		if len(parsed) != 1 || parsed[0].Entry == nil || parsed[0].Entry.Heartbeat == "" {
			return false, ""
		}
		entry := parsed[0].Entry
		hbPath := entry.Heartbeat
		if !filepath.IsAbs(hbPath) {
			hbPath = filepath.Join(infra, hbPath)
		}
		b, err := protocol.ReadFile(hbPath, protocol.MaxDocumentSize)
		switch {
		case err == nil:
			// A heartbeat with a bad field still says its status, as the
			// classifier reads it (finished is finished).
			hb, perr := protocol.ParseHeartbeat(b)
			var bad *protocol.BadFieldsError
			if (perr == nil || errors.As(perr, &bad)) && model.TerminalStatus(hb.Status) {
				return true, "heartbeat " + hb.Status
			}
			return false, ""
		case !errors.Is(err, os.ErrNotExist):
			return false, "" // unreadable is not gone
		}
		if model.TerminalStatus(entry.Status) {
			return true, "registry says " + entry.Status + "; heartbeat gone"
		}
		if _, err := os.Lstat(filepath.Dir(hbPath)); !errors.Is(err, os.ErrNotExist) {
			return false, ""
		}
		if fileOld || !running {
			return true, "never started: no heartbeat, no infra dir"
		}
		return false, ""
	}
}

// filterLines splits b into its complete lines and keeps or drops each; a
// torn tail (no newline yet) is not looked at and not returned.
func filterLines(b []byte, fileOld bool, decide func([]byte, bool) (bool, string)) ([]byte, []removal) {
	var kept bytes.Buffer
	var removed []removal
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		line := b[:i+1]
		b = b[i+1:]
		content := bytes.TrimRight(line[:len(line)-1], "\r")
		if drop, why := decide(content, fileOld); drop {
			removed = append(removed, removal{line: append([]byte(nil), line[:len(line)-1]...), reason: why})
			continue
		}
		kept.Write(line)
	}
	return kept.Bytes(), removed
}
