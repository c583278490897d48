package actions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// maxRegistrySize bounds the registry compaction will rewrite; compaction
// carries every byte it keeps, so it reads the whole file.
const maxRegistrySize = 512 << 20

// compactTempPrefix names compaction's temp files, so a later compaction can
// clear what a killed one left behind.
const compactTempPrefix = registryFile + ".compact-"

// Drain tuning: after the rename, the old file is read while a process
// still holds it open for writing (up to defaultDrainHold), then until it
// has been quiet this many polls in a row, each this far apart — longer
// where who holds it cannot be seen; a torn tail is waited for this long
// before it is carried over as it is.
const (
	defaultDrainHold     = 5 * time.Second
	drainQuietPolls      = 3
	drainQuietPollsBlind = 50
	drainPoll            = 2 * time.Millisecond
	drainTornWait        = 200 * time.Millisecond
)

// compaction is what compactFile did: the lines it removed (none when the
// registry was left as it was, whatever the error), and the pids
// that still held the old registry open for writing when the drain gave up
// on them (what they write from then on is not carried over).
type compaction struct {
	removed  []removal
	heldOpen []int
}

// removal is a registry line compaction drops, and why.
type removal struct {
	line   []byte
	reason string
}

// compactNode rewrites one node's `.children` without its dead weight.
func (e *Engine) compactNode(ctx context.Context, req Request, n *model.Node) (Result, error) {
	res := Result{Action: model.ActionCompact, NodeID: n.ID, Root: n.Root, PID: n.PID()}
	path := filepath.Join(n.InfraDir, registryFile)
	st, err := os.Lstat(path)
	if err == nil && !st.Mode().IsRegular() {
		// A symlink could point out of the root: never rewritten.
		err = fmt.Errorf("%s is not a regular file (%s)", path, st.Mode().Type())
	}
	if err != nil {
		res = refuse(res, fmt.Sprintf("node %s has no registry to compact: %v", n.ID, err))
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
		b, err := readFileCapped(path, maxRegistrySize)
		if err != nil {
			return res, fmt.Errorf("compact %s: %w", n.ID, err)
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
		held := fmt.Sprintf("%s still held the old registry open for writing after %s: a line written there from now on is lost", pidWords(c.heldOpen), e.drainHold)
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

func removedLines(removed []removal) []string {
	var out []string
	for _, r := range removed {
		out = append(out, string(r.line))
	}
	return out
}

// pidWords is "pid 7" or "pids 7, 9".
func pidWords(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = fmt.Sprint(p)
	}
	if len(pids) == 1 {
		return "pid " + s[0]
	}
	return "pids " + strings.Join(s, ", ")
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
	var errs []error
	total, files := 0, 0
	for _, s := range snap.Sessions {
		s.Walk(func(n *model.Node) {
			if n.RegistryPath == "" || n.HasScanFlag(model.FlagOutsideRoot) {
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
			if fresh.RegistryPath == "" || fresh.HasScanFlag(model.FlagOutsideRoot) {
				return
			}
			sub := req
			sub.All, sub.quietNoop = false, true
			r, err := e.compactNode(ctx, sub, fresh)
			if err != nil {
				errs = append(errs, err)
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
		parsed := scanner.ParseRegistry(line)
		if len(parsed) != 1 || parsed[0].Entry == nil || parsed[0].Entry.Heartbeat == "" {
			return false, ""
		}
		entry := parsed[0].Entry
		hbPath := entry.Heartbeat
		if !filepath.IsAbs(hbPath) {
			hbPath = filepath.Join(infra, hbPath)
		}
		b, err := readFileCapped(hbPath, maxReadSize)
		switch {
		case err == nil:
			// A heartbeat with a bad field still says its status, as the
			// classifier reads it (finished is finished).
			hb, perr := scanner.ParseHeartbeat(b)
			var bad *scanner.BadFieldsError
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

// compactFile rewrites path without the lines decide drops, losing nothing
// that concurrent appenders (plain O_APPEND, no lock) write meanwhile:
//
//  1. open the registry and read it up to its last complete line;
//  2. write the kept lines to a temp file in the same directory, fsync;
//  3. copy whatever complete lines were appended meanwhile, fsync;
//  4. hand the removed lines to commit (the journal: they must be recorded
//     before they leave the registry), then rename the temp file over it;
//  5. drain the old file through the descriptor opened in 1: appenders
//     that opened it before the rename write there, and those lines are
//     appended to the new file, for as long as one holds it open.
//
// Killed before 4 the registry is as it was (a stray temp file is cleared by
// the next compaction); from 4 on it is as intended. Compactions of one
// directory are serialised with a lock on the directory itself.
func (e *Engine) compactFile(ctx context.Context, path string, decide func([]byte, bool) (bool, string), commit func([]removal) error) (compaction, error) {
	dir := filepath.Dir(path)
	unlock, err := lockDir(dir)
	if err != nil {
		return compaction{}, err
	}
	defer unlock()
	clearStaleTemps(dir)

	old, err := os.Open(path)
	if err != nil {
		return compaction{}, fmt.Errorf("open %s: %w", path, err)
	}
	defer old.Close()
	st, err := old.Stat()
	if err != nil {
		return compaction{}, fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Size() > maxRegistrySize {
		return compaction{}, fmt.Errorf("%s is %d bytes, over the %d compaction handles", path, st.Size(), maxRegistrySize)
	}
	fileOld := e.now().Sub(st.ModTime()) > e.thresholds().Stale
	data, err := io.ReadAll(io.LimitReader(old, maxRegistrySize))
	if err != nil {
		return compaction{}, fmt.Errorf("read %s: %w", path, err)
	}
	copied := int64(bytes.LastIndexByte(data, '\n') + 1)
	kept, removed := filterLines(data[:copied], fileOld, decide)
	if len(removed) == 0 {
		return compaction{}, nil // nothing to drop: leave the file alone
	}
	if err := e.step("compact:read"); err != nil {
		return compaction{}, err
	}

	// O_APPEND: after the rename, appenders write to this file too, and our
	// carried-over lines must land after theirs, never over them.
	tmpName := filepath.Join(dir, fmt.Sprintf("%s%d-%d.tmp", compactTempPrefix, e.self, time.Now().UnixNano()))
	tmp, err := os.OpenFile(tmpName, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return compaction{}, fmt.Errorf("create temp file in %s: %w", dir, err)
	}
	committed := false
	crashed := false
	defer func() {
		tmp.Close()
		if !committed && !crashed {
			os.Remove(tmpName)
		}
	}()
	crash := func(step string) error {
		if err := e.step(step); err != nil {
			crashed = true // a killed process cleans nothing up
			return err
		}
		return nil
	}
	if err := tmp.Chmod(st.Mode().Perm()); err != nil {
		return compaction{}, fmt.Errorf("chmod %s: %w", tmpName, err)
	}
	// The agents that append must still own what they append to: keep the
	// owner when we may (a dispatchtop run as root), else it is ours anyway.
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		if err := tmp.Chown(int(sys.Uid), int(sys.Gid)); err != nil && !errors.Is(err, syscall.EPERM) {
			return compaction{}, fmt.Errorf("chown %s: %w", tmpName, err)
		}
	}
	if _, err := tmp.Write(kept); err != nil {
		return compaction{}, fmt.Errorf("write %s: %w", tmpName, err)
	}
	if err := crash("compact:written"); err != nil {
		return compaction{}, err
	}
	if err := tmp.Sync(); err != nil {
		return compaction{}, fmt.Errorf("fsync %s: %w", tmpName, err)
	}
	if err := crash("compact:synced"); err != nil {
		return compaction{}, err
	}
	// Carry over what was appended while we filtered. Complete lines only at
	// first: a line must not be split between the old inode and the new
	// one. A torn tail is given time to complete; one that does not is a
	// dead writer's leftover and is carried as it is, so that no byte
	// depends on the drain after the rename.
	if copied, err = carryTail(old, tmp, copied); err != nil {
		return compaction{}, err
	}
	if err := tmp.Sync(); err != nil {
		return compaction{}, fmt.Errorf("fsync %s: %w", tmpName, err)
	}
	if err := crash("compact:carried"); err != nil {
		return compaction{}, err
	}
	if commit != nil {
		if err := commit(removed); err != nil {
			return compaction{}, fmt.Errorf("record the removed lines, so the registry is left as it was: %w", err)
		}
	}
	if err := crash("compact:journaled"); err != nil {
		return compaction{}, err
	}
	if err := os.Rename(tmpName, path); err != nil {
		return compaction{}, fmt.Errorf("rename %s over %s: %w", tmpName, path, err)
	}
	committed = true
	if err := crash("compact:renamed"); err != nil {
		return compaction{removed: removed}, err
	}
	// Appenders that opened the old file before the rename write to it:
	// carry their lines over until none holds it open and it was quiet.
	heldOpen, err := e.drain(ctx, old, tmp, copied)
	if err != nil {
		return compaction{removed: removed}, err
	}
	if err := tmp.Sync(); err != nil {
		return compaction{removed: removed}, fmt.Errorf("fsync %s: %w", path, err)
	}
	syncDir(dir)
	return compaction{removed: removed, heldOpen: heldOpen}, nil
}

// drain carries to dst what is appended to old, the replaced registry,
// from offset on. While a process other than us holds old open for
// writing it keeps going, up to drainHold, and returns the pids still
// holding it then; once none does (or where that cannot be seen), until
// old has been quiet for a while.
func (e *Engine) drain(ctx context.Context, old, dst *os.File, offset int64) ([]int, error) {
	target, err := old.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", old.Name(), err)
	}
	base, skip := filepath.Base(old.Name()), int(old.Fd())
	quietPolls := drainQuietPolls
	if !writersVisible {
		quietPolls = drainQuietPollsBlind
	}
	writers := writersOf(target, base, skip)
	// An open racing the rename may show in /proc only just after it: look
	// once more before calling the file quiet.
	rescanned := !writersVisible
	deadline := time.Now().Add(e.drainHold)
	quiet := 0
	var tornSince time.Time
	for ctx.Err() == nil {
		before := offset
		if offset, err = carryLines(old, dst, offset, false); err != nil {
			return nil, err
		}
		size, err := fileSize(old)
		if err != nil {
			return nil, err
		}
		switch {
		case offset != before:
			quiet, tornSince = 0, time.Time{}
		case size > offset:
			// A torn tail: an append in flight, or one that died half-way.
			if tornSince.IsZero() {
				tornSince = time.Now()
			} else if time.Since(tornSince) > drainTornWait {
				if offset, err = carryLines(old, dst, offset, true); err != nil {
					return nil, err
				}
			}
		default:
			quiet++
		}
		writers = stillHolding(writers, target)
		if len(writers) > 0 {
			if time.Now().After(deadline) {
				break
			}
			quiet = 0
		} else if quiet >= quietPolls {
			if rescanned {
				break
			}
			rescanned = true
			writers = writersOf(target, base, skip)
		}
		time.Sleep(drainPoll)
	}
	if len(writers) == 0 {
		return nil, nil
	}
	// Given up on: carry what is there now, and say who may write more.
	if _, err := carryLines(old, dst, offset, false); err != nil {
		return nil, err
	}
	var pids []int
	for _, w := range writers {
		if len(pids) == 0 || pids[len(pids)-1] != w.pid {
			pids = append(pids, w.pid)
		}
	}
	return pids, nil
}

// stillHolding keeps the openers whose descriptor still refers to target.
func stillHolding(openers []opener, target os.FileInfo) []opener {
	kept := openers[:0]
	for _, o := range openers {
		if o.holds(target) {
			kept = append(kept, o)
		}
	}
	return kept
}

// carryTail carries old's complete lines from offset to dst, waits up to
// drainTornWait for a torn tail to complete, and carries the tail as it is
// when it does not.
func carryTail(old, dst *os.File, offset int64) (int64, error) {
	deadline := time.Now().Add(drainTornWait)
	for {
		var err error
		if offset, err = carryLines(old, dst, offset, false); err != nil {
			return offset, err
		}
		size, err := fileSize(old)
		if err != nil {
			return offset, err
		}
		if size <= offset {
			return offset, nil
		}
		if time.Now().After(deadline) {
			return carryLines(old, dst, offset, true)
		}
		time.Sleep(drainPoll)
	}
}

// carryLines appends old's bytes from offset to dst: complete lines only,
// unless all is set. It returns the new offset.
func carryLines(old, dst *os.File, offset int64, all bool) (int64, error) {
	size, err := fileSize(old)
	if err != nil {
		return offset, err
	}
	if size <= offset {
		return offset, nil
	}
	buf := make([]byte, size-offset)
	k, err := old.ReadAt(buf, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return offset, fmt.Errorf("read %s: %w", old.Name(), err)
	}
	buf = buf[:k]
	if !all {
		buf = buf[:bytes.LastIndexByte(buf, '\n')+1]
	}
	if len(buf) == 0 {
		return offset, nil
	}
	// One O_APPEND write: concurrent appenders to the new file see whole
	// lines either side of it.
	if _, err := dst.Write(buf); err != nil {
		return offset, fmt.Errorf("append to %s: %w", dst.Name(), err)
	}
	return offset + int64(len(buf)), nil
}

func fileSize(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	return st.Size(), nil
}

// lockDir takes an exclusive flock on dir, serialising compactions of the
// registries in it (appenders never lock and are not slowed).
func lockDir(dir string) (func(), error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX); err != nil {
		d.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() {
		_ = syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
		d.Close()
	}, nil
}

// clearStaleTemps removes temp files a killed compaction left; called under
// the directory lock, so none of them belongs to a live compaction.
func clearStaleTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), compactTempPrefix) && strings.HasSuffix(en.Name(), ".tmp") {
			_ = os.Remove(filepath.Join(dir, en.Name()))
		}
	}
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
