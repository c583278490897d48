package protocol

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// settle is how long after its last change (the rename, or a write) a
// replaced registry is looked at for writers before recovery removes it:
// an open that raced the rename shows in /proc only once it returns.
const settle = 20 * time.Millisecond

// Recovery is what Recover did with what a compaction left in a directory.
type Recovery struct {
	// Busy: a compaction (or another action) holds the directory's lock;
	// a live compaction finishes its own.
	Busy bool
	// Carried is how many bytes were carried over now.
	Carried int64
	// Holders still hold the replaced registry open for writing: it stays,
	// carried up to now, and readers see the rest (ReadView).
	Holders []Holder
}

// Recover finishes what a compaction that did not finish (killed, or gave
// up on a writer) left in dir: it carries into the registry what the
// replaced one holds beyond the record, and removes it and the record
// once no process holds it open for writing. It takes dir's lock without
// waiting; Busy when another holds it. Run it again and it carries nothing
// twice.
func Recover(dir string) (Recovery, error) {
	if _, err := os.Lstat(filepath.Join(dir, CompactingFile)); errors.Is(err, fs.ErrNotExist) {
		return Recovery{}, nil
	}
	unlock, ok, err := TryLockDir(dir)
	if err != nil {
		return Recovery{}, err
	}
	if !ok {
		return Recovery{Busy: true}, nil
	}
	defer unlock()
	return RecoverLocked(dir)
}

// RecoverLocked is Recover for a caller that holds dir's lock (LockDir).
// It also clears a record left alone (a kill between the removals).
func RecoverLocked(dir string) (Recovery, error) {
	h, err := resume(dir)
	if h == nil {
		return Recovery{}, err
	}
	defer h.close()
	var res Recovery
	n, err := h.Carry(false)
	res.Carried += n
	if err != nil {
		return res, err
	}
	if wait := settle - time.Since(changed(h.oldInfo)); wait > 0 {
		time.Sleep(wait)
	}
	if res.Holders = h.Holders(); len(res.Holders) > 0 {
		n, err := h.Carry(false)
		res.Carried += n
		return res, err
	}
	// Nobody writes to it any more: the rest, a torn tail as it is.
	n, err = h.Carry(true)
	res.Carried += n
	if err != nil {
		return res, err
	}
	return res, h.Finish()
}

// resume opens what a compaction left in dir for carrying, with the record
// brought up to date (an announced carry resolved); nil when there is
// nothing to carry. A replaced registry linked but never renamed over (the
// compaction died before its rename) is the registry itself: its link and
// record are removed.
func resume(dir string) (*Handover, error) {
	link := filepath.Join(dir, CompactingFile)
	path := filepath.Join(dir, RegistryFile)
	old, oldInfo, err := openRegular(link, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		removeRecord(dir)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("finish the compaction of %s: %w", path, err)
	}
	reg, regInfo, err := openRegular(path, os.O_RDWR|os.O_APPEND)
	if err != nil {
		old.Close()
		return nil, fmt.Errorf("finish the compaction of %s: %w; %s left as it is", path, err, CompactingFile)
	}
	h := &Handover{dir: dir, old: old, oldInfo: oldInfo, reg: reg}
	if os.SameFile(oldInfo, regInfo) {
		h.close()
		if err := os.Remove(link); err != nil {
			return nil, fmt.Errorf("remove %s: %w", link, err)
		}
		removeRecord(dir)
		return nil, nil
	}
	rec, err := readRecord(dir)
	if err == nil && rec.Ino != inode(regInfo) {
		err = fmt.Errorf("its record is of another %s (inode %d, not %d)", RegistryFile, rec.Ino, inode(regInfo))
	}
	if err != nil {
		h.close()
		return nil, fmt.Errorf("cannot tell how much of %s is in %s: %w; left as it is", link, path, err)
	}
	carried, stale, err := resolveFiles(rec, old, reg, regInfo.Size())
	if err == nil && stale {
		err = fmt.Errorf("%s is shorter than its record says", path)
	}
	if err != nil {
		h.close()
		return nil, fmt.Errorf("finish the compaction of %s: %w", path, err)
	}
	h.rec = record{Ino: rec.Ino, Carried: carried, End: regInfo.Size()}
	if h.rec != rec {
		if err := writeRecord(dir, h.rec, false); err != nil {
			h.close()
			return nil, err
		}
	}
	return h, nil
}

// resolveFiles is record.resolve over the files: reg's first size bytes.
func resolveFiles(rec record, old, reg io.ReaderAt, size int64) (int64, bool, error) {
	if rec.End > size {
		return 0, true, nil
	}
	if !rec.announced() {
		return rec.Carried, false, nil
	}
	chunk, err := readRange(old, rec.Carried, rec.Carrying)
	if err != nil {
		return 0, false, err
	}
	hay, err := readRange(reg, min(rec.From, size), size)
	if err != nil {
		return 0, false, err
	}
	carried, stale := rec.resolve(chunk, hay, size)
	return carried, stale, nil
}

// readRange reads [from, to) of r, short at its end.
func readRange(r io.ReaderAt, from, to int64) ([]byte, error) {
	if to <= from {
		return nil, nil
	}
	buf := make([]byte, to-from)
	k, err := r.ReadAt(buf, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:k], nil
}

func (h *Handover) close() {
	h.old.Close()
	h.reg.Close()
}

// View is dir's registry as a reader should see it while a compaction's
// replaced registry exists: Registry, then Pending, each line once.
type View struct {
	// Registry is `.children` as read, up to the limit.
	Registry []byte
	// Info is `.children`'s fstat.
	Info os.FileInfo
	// Pending is what of `.children.compacting` is not carried yet, from
	// the start of a line; nil when there is none (any more).
	Pending []byte
}

// viewTries bounds how often ReadView reads on while compaction carries.
const viewTries = 4

// ReadView reads dir's registry and what of a compaction's replaced
// registry is not carried over yet, up to limit bytes of each. It writes
// nothing and takes no lock: the record says which of the replaced
// registry's lines the registry as read holds. The registry is read first,
// the record after: a carry recorded as ended beyond what was read means
// the registry is read on, and a carry only announced is looked for in it.
// An error with Info set concerns the replaced registry only.
func ReadView(dir string, limit int64) (View, error) {
	path := filepath.Join(dir, RegistryFile)
	reg, _, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return View{}, err
	}
	defer reg.Close()
	var v View
	for try := 1; ; try++ {
		if v.Info, err = reg.Stat(); err != nil {
			return View{}, fmt.Errorf("stat %s: %w", path, err)
		}
		more, err := readRange(reg, int64(len(v.Registry)), min(v.Info.Size(), limit))
		if err != nil {
			return View{}, fmt.Errorf("read %s: %w", path, err)
		}
		v.Registry = append(v.Registry, more...)
		pending, stale, err := pendingOf(dir, v.Info, reg, int64(len(v.Registry)), limit)
		if !stale || try == viewTries {
			v.Pending = pending
			return v, err
		}
	}
}

// pendingOf is what of dir's replaced registry the registry (regInfo, its
// first size bytes readable through reg) does not hold; stale when reg
// must be read on first.
func pendingOf(dir string, regInfo os.FileInfo, reg io.ReaderAt, size, limit int64) ([]byte, bool, error) {
	link := filepath.Join(dir, CompactingFile)
	old, oldInfo, err := openRegular(link, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil // finished meanwhile: its last carry may lie past what was read
	}
	if err != nil {
		return nil, false, err
	}
	defer old.Close()
	if os.SameFile(oldInfo, regInfo) {
		return nil, false, nil // not renamed over: what was read is the file itself
	}
	rec, err := readRecord(dir)
	if errors.Is(err, errNoRecord) {
		if _, lerr := os.Lstat(link); errors.Is(lerr, fs.ErrNotExist) {
			return nil, true, nil // finished between the two looks
		}
	}
	if err == nil && rec.Ino != inode(regInfo) {
		err = fmt.Errorf("its record is of another %s (inode %d, not %d)", RegistryFile, rec.Ino, inode(regInfo))
	}
	if err != nil {
		return nil, false, fmt.Errorf("cannot tell which lines of %s are in %s: %w", link, RegistryFile, err)
	}
	carried, stale, err := resolveFiles(rec, old, reg, size)
	if err != nil || stale {
		return nil, stale, err
	}
	tail, err := readRange(old, rec.Carried, min(oldInfo.Size(), rec.Carried+limit))
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", link, err)
	}
	// A carry cut mid-line is shown from the line's start.
	start := carried - rec.Carried
	start = int64(lastLineStart(tail[:min(start, int64(len(tail)))]))
	if int(start) >= len(tail) {
		return nil, false, nil
	}
	return tail[start:], false, nil
}

// lastLineStart is the offset after the last newline of b (0 without one).
func lastLineStart(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			return i + 1
		}
	}
	return 0
}
