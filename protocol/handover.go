package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Handover carries the registry a compaction replaced (CompactingFile)
// into the registry that replaced it, recording how far it got after every
// carry, and removes it once finished.
type Handover struct {
	dir     string
	old     *os.File    // the replaced registry, read through this
	oldInfo os.FileInfo // what Holders look for
	reg     *os.File    // the registry, appended to (O_APPEND)
	rec     record
	// step, when set (tests), is called between the steps of an action;
	// an error stops it on the spot, as if the process had been killed.
	step func(string) error
}

func (h *Handover) stepped(name string) error {
	if h.step == nil {
		return nil
	}
	return h.step(name)
}

// Replace renames tmp (the rewritten registry, written through newReg,
// which must be open with O_APPEND) over dir's registry, which old has
// open: old[:carried] is already in tmp. Before the rename it records that
// and keeps the registry as CompactingFile, so that whatever is appended
// to it afterwards, by processes that opened it before, survives a kill
// until it is carried over (see Recover). step names the steps
// compact:recorded and compact:linked. On an error of its own the registry
// is left as it was, with no CompactingFile; one from step is a kill and
// cleans nothing up.
func Replace(dir string, old, newReg *os.File, tmp string, carried int64, step func(string) error) (*Handover, error) {
	path := filepath.Join(dir, RegistryFile)
	oldInfo, err := old.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	newInfo, err := newReg.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", tmp, err)
	}
	h := &Handover{dir: dir, old: old, oldInfo: oldInfo, reg: newReg, step: step,
		rec: record{Ino: inode(newInfo), Carried: carried, End: newInfo.Size()}}
	if err := writeRecord(dir, h.rec, true); err != nil {
		return nil, err
	}
	if err := h.stepped("compact:recorded"); err != nil {
		return nil, err
	}
	link := filepath.Join(dir, CompactingFile)
	if err := os.Link(path, link); err != nil {
		removeRecord(dir)
		return nil, fmt.Errorf("keep %s as %s: %w", path, CompactingFile, err)
	}
	if st, err := os.Lstat(link); err != nil || !os.SameFile(st, oldInfo) {
		os.Remove(link)
		removeRecord(dir)
		return nil, fmt.Errorf("%s was replaced during the compaction", path)
	}
	SyncDir(dir)
	if err := h.stepped("compact:linked"); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(link)
		removeRecord(dir)
		return nil, fmt.Errorf("rename %s over %s: %w", tmp, path, err)
	}
	return h, nil
}

// Carry appends to the registry what was appended to the replaced one
// since the last carry: complete lines only, or everything (a torn tail
// as it is) when whole is set, which is right only once no process holds
// the replaced file open for writing. It returns the bytes carried. Each
// carry is announced in the record, made in one write, then recorded.
func (h *Handover) Carry(whole bool) (int64, error) {
	size, err := fileSize(h.old)
	if err != nil || size <= h.rec.Carried {
		return 0, err
	}
	buf := make([]byte, size-h.rec.Carried)
	k, err := h.old.ReadAt(buf, h.rec.Carried)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("read %s: %w", h.old.Name(), err)
	}
	buf = buf[:k]
	if !whole {
		buf = buf[:bytes.LastIndexByte(buf, '\n')+1]
	}
	if len(buf) == 0 {
		return 0, nil
	}
	from, err := fileSize(h.reg)
	if err != nil {
		return 0, err
	}
	announce := h.rec
	announce.Carrying, announce.From = h.rec.Carried+int64(len(buf)), from
	if err := writeRecord(h.dir, announce, false); err != nil {
		return 0, err
	}
	if err := h.stepped("carry:announced"); err != nil {
		return 0, err
	}
	// One O_APPEND write: appenders to the registry see whole lines either
	// side of it, and resolve finds it in one piece.
	if _, err := h.reg.Write(buf); err != nil {
		return 0, fmt.Errorf("append to %s: %w", filepath.Join(h.dir, RegistryFile), err)
	}
	if err := h.stepped("carry:written"); err != nil {
		return 0, err
	}
	// After an O_APPEND write the offset is where it ended.
	end, err := h.reg.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, fmt.Errorf("seek %s: %w", filepath.Join(h.dir, RegistryFile), err)
	}
	done := record{Ino: h.rec.Ino, Carried: announce.Carrying, End: end}
	if err := writeRecord(h.dir, done, false); err != nil {
		return 0, err
	}
	h.rec = done
	return int64(len(buf)), nil
}

// Pending is how many bytes of the replaced registry are not carried yet
// (a torn tail, when Carry(false) just ran).
func (h *Handover) Pending() (int64, error) {
	size, err := fileSize(h.old)
	return size - h.rec.Carried, err
}

// Holders lists who holds the replaced registry open for writing.
func (h *Handover) Holders() []Holder { return Holders(h.oldInfo) }

// StillHolding keeps those of holders that still hold it.
func (h *Handover) StillHolding(holders []Holder) []Holder {
	return StillHolding(holders, h.oldInfo)
}

// Finish removes the replaced registry, then its record: to be called once
// no process holds it open for writing and Carry(true) carried the rest.
// Killed in between, what is left is a record alone, which the next
// recovery removes.
func (h *Handover) Finish() error {
	if err := h.reg.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", filepath.Join(h.dir, RegistryFile), err)
	}
	if err := os.Remove(filepath.Join(h.dir, CompactingFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", filepath.Join(h.dir, CompactingFile), err)
	}
	if err := h.stepped("compact:unlinked"); err != nil {
		return err
	}
	removeRecord(h.dir)
	SyncDir(h.dir)
	return nil
}

func fileSize(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	return st.Size(), nil
}

// openRegular opens path with flag, never through a symlink and never
// waiting on a FIFO, and refuses anything but a regular file.
func openRegular(path string, flag int) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	return f, fi, nil
}
