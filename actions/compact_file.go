package actions

// The file side of a compaction (SPEC §5.3): rewriting one .children while
// writers that do not lock keep appending, and the drain that carries what
// they append to the replaced file. compact.go decides which lines go; this
// file makes the rewrite lossless under appenders and interruptions.

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

	"github.com/dispatchtop/dispatchtop/protocol"
)

// compactFile rewrites path without the lines decide drops, losing nothing
// that concurrent appenders (plain O_APPEND, no lock) write meanwhile:
//
//  1. finish what an earlier compaction left (protocol.RecoverLocked);
//  2. open the registry and read it up to its last complete line;
//  3. write the kept lines to a temp file in the same directory, fsync;
//  4. wait, up to drainHold, for the processes that hold the registry open
//     for writing to close it; refuse, naming them, if one still does:
//     what it writes after the rename would go to the replaced file for as
//     long as it likes;
//  5. copy the complete lines appended meanwhile, fsync;
//  6. hand the removed lines to commit (the journal: they must be recorded
//     before they leave the registry);
//  7. record how much of the registry the temp file holds, keep the
//     registry as .children.compacting (a hard link) and rename the temp
//     file over it (protocol.Replace);
//  8. drain: carry over what appenders that opened the registry before the
//     rename write to the replaced file, until no process holds it open
//     for writing, then once more, and remove it. A cancel (SIGINT or
//     SIGTERM through the cli's context) ends the wait for writers, not
//     the carrying: the final carry runs; a writer still holding it, or
//     the drain window passing, leaves it for the next action or watcher.
//
// Killed before 7 the registry is as it was (a stray temp file is cleared by
// the next compaction); from 7 on it is as intended, and the lines appended
// to the replaced file are carried over by the next run of any action or of
// the watcher, each once. Compactions of one directory are serialised with
// a lock on the directory itself.
func (e *Engine) compactFile(ctx context.Context, path string, decide func([]byte, bool) (bool, string), commit func([]removal) error) (compaction, error) {
	dir := filepath.Dir(path)
	unlock, err := lockDir(dir)
	if err != nil {
		return compaction{}, err
	}
	defer unlock()
	clearStaleTemps(dir)
	left, err := protocol.RecoverLocked(dir)
	if err != nil {
		return compaction{}, err
	}
	if len(left.Holders) > 0 {
		return compaction{refused: fmt.Sprintf("%s still holds %s open for writing, the registry an earlier compaction replaced: its lines are carried over until it closes it, and the registry is compacted again only then",
			protocol.HolderWords(left.Holders), filepath.Join(dir, protocol.CompactingFile))}, nil
	}

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
	tmpName := filepath.Join(dir, fmt.Sprintf("%s%d-%d%s", protocol.CompactTempPrefix, e.self, time.Now().UnixNano(), protocol.TempSuffix))
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
	holders := e.writersHolding(ctx, st)
	if err := ctx.Err(); err != nil {
		return compaction{}, fmt.Errorf("compact %s: %w", path, err) // nothing was changed yet
	}
	if len(holders) > 0 {
		return compaction{refused: fmt.Sprintf("%s holds %s open for writing past %s: what it writes after the rename would land in the replaced file for as long as it holds it; refused",
			protocol.HolderWords(holders), path, e.drainHold)}, nil
	}
	// Carry over what was appended while we filtered. Complete lines only
	// at first: a line must not be split between the old inode and the new
	// one. A torn tail is given time to complete; one that does not, with
	// no process holding the registry open for writing, is a dead writer's
	// leftover and is carried as it is, so that the registry is as
	// intended at the rename.
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
	h, err := protocol.Replace(dir, old, tmp, tmpName, copied, crash)
	if err != nil {
		return compaction{}, err
	}
	committed = true
	if err := crash("compact:renamed"); err != nil {
		return compaction{removed: removed}, err
	}
	held, err := e.drain(ctx, h)
	if err != nil {
		return compaction{removed: removed}, err
	}
	if len(held) > 0 {
		// The replaced file stays: the next action or watcher carries on.
		if err := tmp.Sync(); err != nil {
			return compaction{removed: removed}, fmt.Errorf("fsync %s: %w", path, err)
		}
		return compaction{removed: removed, heldOpen: held}, nil
	}
	if err := crash("compact:drained"); err != nil {
		return compaction{removed: removed}, err
	}
	if err := h.Finish(); err != nil {
		return compaction{removed: removed}, err
	}
	return compaction{removed: removed}, nil
}

// writersHolding waits, up to drainHold, for the processes that hold the
// registry (target) open for writing to close it, and returns those that
// still do. Appenders that open, write and close are seen at most for a
// moment; a process that keeps its descriptor is what it finds.
func (e *Engine) writersHolding(ctx context.Context, target os.FileInfo) []protocol.Holder {
	holders := protocol.Holders(target)
	deadline := time.Now().Add(e.drainHold)
	for len(holders) > 0 && ctx.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(holderPoll)
		holders = protocol.StillHolding(holders, target)
	}
	return holders
}

// drain carries over what is appended to the replaced registry through
// descriptors opened before the rename. It keeps going while a process
// holds it open for writing, up to drainHold, and returns
// the holders left then; once none does (or where that cannot be seen),
// until it has been quiet a few polls and a second look finds no holder,
// and then carries once more, a torn tail included (its writer is gone).
// A cancelled ctx ends the waiting, never the carrying.
func (e *Engine) drain(ctx context.Context, h *protocol.Handover) ([]protocol.Holder, error) {
	quietPolls := drainQuietPolls
	if !protocol.HoldersVisible {
		quietPolls = drainQuietPollsBlind
	}
	renamed := time.Now()
	holders := h.Holders()
	// An open racing the rename may show in /proc only just after it: look
	// once more before calling the file quiet.
	rescanned := !protocol.HoldersVisible
	deadline := renamed.Add(e.drainHold)
	quiet := 0
	var tornSince time.Time
	for {
		carried, err := h.Carry(false)
		if err != nil {
			return nil, err
		}
		pending, err := h.Pending()
		if err != nil {
			return nil, err
		}
		switch {
		case carried > 0:
			quiet, tornSince = 0, time.Time{}
		case pending > 0 && ctx.Err() == nil:
			// A torn tail: an append in flight, given time to complete.
			if tornSince.IsZero() {
				tornSince = time.Now()
			}
			if time.Since(tornSince) < drainTornWait {
				quiet = 0
			} else {
				quiet++
			}
		default:
			quiet++
		}
		holders = h.StillHolding(holders)
		if len(holders) > 0 {
			if ctx.Err() != nil || time.Now().After(deadline) {
				return holders, nil
			}
			quiet = 0
		} else if quiet >= quietPolls || ctx.Err() != nil {
			if rescanned {
				break
			}
			rescanned = true
			time.Sleep(drainSettle - time.Since(renamed))
			holders = h.Holders()
			continue
		}
		time.Sleep(drainPoll)
	}
	_, err := h.Carry(true)
	return nil, err
}

// carryTail carries old's complete lines from offset on to dst, waits up
// to drainTornWait for a torn tail to complete, and carries the tail as it
// is when it does not. It returns the new offset.
func carryTail(old, dst *os.File, offset int64) (int64, error) {
	deadline := time.Now().Add(drainTornWait)
	for {
		var err error
		if offset, err = carryLines(old, dst, offset, false); err != nil {
			return offset, err
		}
		st, err := old.Stat()
		if err != nil {
			return offset, fmt.Errorf("stat %s: %w", old.Name(), err)
		}
		if st.Size() <= offset {
			return offset, nil
		}
		if time.Now().After(deadline) {
			return carryLines(old, dst, offset, true)
		}
		time.Sleep(drainPoll)
	}
}

// carryLines appends old's bytes from offset on to dst, in one write:
// complete lines only, unless all is set. It returns the new offset.
func carryLines(old, dst *os.File, offset int64, all bool) (int64, error) {
	st, err := old.Stat()
	if err != nil {
		return offset, fmt.Errorf("stat %s: %w", old.Name(), err)
	}
	if st.Size() <= offset {
		return offset, nil
	}
	buf := make([]byte, st.Size()-offset)
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
	if _, err := dst.Write(buf); err != nil {
		return offset, fmt.Errorf("append to %s: %w", dst.Name(), err)
	}
	return offset + int64(len(buf)), nil
}

// lockDir takes an exclusive flock on dir, serialising compactions, resumes
// and merges of the node in it (appenders never lock and are not slowed).
func lockDir(dir string) (func(), error) { return protocol.LockDir(dir) }

// clearStaleTemps removes temp files a killed compaction left; called under
// the directory lock, so none of them belongs to a live compaction.
func clearStaleTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), protocol.CompactTempPrefix) && strings.HasSuffix(en.Name(), protocol.TempSuffix) {
			_ = os.Remove(filepath.Join(dir, en.Name()))
		}
	}
}
