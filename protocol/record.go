package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// maxRecordSize caps the read of CarriedFile (a record is one short line).
const maxRecordSize = 4 << 10

// errNoRecord: CompactingFile exists without its record.
var errNoRecord = errors.New("no record of how much of it was carried over")

// record is CarriedFile: how much of the replaced registry (old) is in the
// registry (reg). It is replaced whole (temp file + rename) at every step.
//
// Why a record rather than matching content: a registry may hold the same
// line twice (a parent registers a child again), and lines appended to
// reg meanwhile interleave with the carried ones, so content alone cannot
// tell a line already carried from another copy of it. The record says it
// exactly, but for one carry in flight: each carry first announces itself
// (Carrying, From), appends in one write, then records where it ended
// (Carried, End). A kill between the two leaves a carry that may or may not
// have happened; only then is content looked at, and only for that one
// write, which lands in one piece (O_APPEND) at or after From (see
// resolve). What is left to chance: another writer appending the very
// bytes of that write between the kill and the recovery, which would be
// taken for it.
type record struct {
	// Ino is reg's inode: a record of another registry is void.
	Ino uint64 `json:"registry_ino"`
	// Carried: old[:Carried] is in reg[:End] (what old held before the
	// rename went into reg by filtering, the rest by carrying).
	Carried int64 `json:"carried"`
	End     int64 `json:"end"`
	// Carrying, when above Carried, announces one append of
	// old[Carried:Carrying] to reg, which was From bytes long then.
	Carrying int64 `json:"carrying,omitempty"`
	From     int64 `json:"from,omitempty"`
}

// announced reports whether r announces a carry it did not record as done.
func (r record) announced() bool { return r.Carrying > r.Carried }

// pageSize is the granularity at which the kernel may cut a write that a
// SIGKILL interrupts (the page cache copies page by page, or folio by
// folio, whose sizes are multiples of it; the file offset where it stops
// is then a multiple of it too).
const pageSize = 4096

// resolve says up to where old is carried into reg, given reg's first size
// bytes: hay is reg from r.From up to size (only read when r announces a
// carry), chunk is old[r.Carried:r.Carrying]. stale means reg was read
// before the last recorded carry ended: read more of it and ask again.
//
// An announced carry is found by content: chunk whole in hay means it
// happened. A kill in the middle of that write may have cut it at a page
// boundary: the part that landed is then found at an offset of reg that is
// a multiple of pageSize, and carrying goes on from there. At the end of
// reg, carrying the rest completes the line; where other appenders wrote
// after it, the cut line is carried again from its start (the fragment
// stays, as any torn line does). Nothing found: it did not happen.
func (r record) resolve(chunk, hay []byte, size int64) (carried int64, stale bool) {
	if r.End > size {
		return 0, true
	}
	if !r.announced() {
		return r.Carried, false
	}
	if len(chunk) == 0 || bytes.Contains(hay, chunk) {
		return r.Carrying, false
	}
	for q := 0; q < len(hay); q++ {
		k := bytes.IndexByte(hay[q:], chunk[0])
		if k < 0 {
			break
		}
		q += k
		m := commonPrefix(hay[q:], chunk)
		if (r.From+int64(q+m))%pageSize != 0 {
			continue
		}
		if q+m == len(hay) {
			return r.Carried + int64(m), false // carrying the rest completes it
		}
		return r.Carried + int64(bytes.LastIndexByte(chunk[:m], '\n')+1), false
	}
	return r.Carried, false
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// readRecord reads dir's CarriedFile.
func readRecord(dir string) (record, error) {
	path := filepath.Join(dir, CarriedFile)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return record{}, errNoRecord
		}
		return record{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRecordSize))
	if err != nil {
		return record{}, fmt.Errorf("read %s: %w", path, err)
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return record{}, fmt.Errorf("parse %s: %w", path, err)
	}
	if r.Carried < 0 || r.End < 0 || r.Carrying < 0 || r.From < 0 {
		return record{}, fmt.Errorf("parse %s: offsets out of range", path)
	}
	return r, nil
}

// writeRecord replaces dir's CarriedFile by r: a reader sees the old record
// or the new one, never a mix. sync makes it durable before it is renamed.
func writeRecord(dir string, r record, sync bool) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, carriedTemp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return fmt.Errorf("record the carry in %s: %w", dir, err)
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, CarriedFile))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("record the carry in %s: %w", dir, err)
	}
	return nil
}

// removeRecord removes dir's record and its temp file.
func removeRecord(dir string) {
	os.Remove(filepath.Join(dir, CarriedFile))
	os.Remove(filepath.Join(dir, carriedTemp))
}

// inode is fi's inode number.
func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
