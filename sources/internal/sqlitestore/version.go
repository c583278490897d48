package sqlitestore

// A database's version without opening it as one: the commit mark SQLite
// keeps in the WAL index (the -shm) and whether the -wal holds frames past
// it. Both are SQLite's documented file formats (https://sqlite.org/walformat.html
// §2.1, the wal-index header; https://sqlite.org/fileformat2.html §4.1, the
// WAL's frames), read with two preads, never written.

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"strings"

	"github.com/dispatchtop/dispatchtop/sources"
)

// The wal-index header: two copies of 48 bytes at the start of the -shm,
// in the host's byte order, the second written first by a commit.
const (
	walIndexHdrSize = 48
	hdrPageSize     = 14 // u16: the page size (65536 as 1)
	hdrMaxFrame     = 16 // u32: the last committed frame
	hdrSalt         = 32 // 8 bytes: the WAL header's salts, as in the file
)

// The WAL: a 32-byte header, then frames of a 24-byte header and a page.
const (
	walHdrSize   = 32
	frameHdrSize = 24
	frameSalt    = 8 // 8 bytes: the salts of the WAL the frame belongs to
)

// WALVersion is the version of the database whose -wal is at wal (a path
// ending "-wal"): its Mark is the wal-index header, which every commit
// and every restart of the log rewrites; Pending is set when the frame
// after the last committed one belongs to the current log (a commit
// written, not yet marked; or a transaction that spilled or rolled back,
// whose frames the next commit writes over) or when the header's two
// copies differ (a commit marking it as it was read). No -shm (a database
// at rest, or not in WAL mode) is the zero Version: the files' own
// signatures say then what changed.
func WALVersion(wal string) sources.Version {
	db, ok := strings.CutSuffix(wal, "-wal")
	if !ok {
		return sources.Version{}
	}
	shm, err := os.Open(db + "-shm")
	if err != nil {
		return sources.Version{}
	}
	defer shm.Close()
	w, err := os.Open(wal)
	if err != nil {
		w = nil
	} else {
		defer w.Close()
	}
	return walVersion(shm, w)
}

// walVersion is WALVersion read from the open -shm and -wal (nil: none).
func walVersion(shm, wal *os.File) sources.Version {
	var hdr [2 * walIndexHdrSize]byte
	if !readAt(shm, hdr[:], 0) {
		return sources.Version{}
	}
	first, second := hdr[:walIndexHdrSize], hdr[walIndexHdrSize:]
	v := sources.Version{Mark: string(first)}
	if !bytes.Equal(first, second) {
		v.Pending = true
		return v
	}
	order := binary.NativeEndian
	size := int64(order.Uint16(first[hdrPageSize:]))
	size = size&0xfe00 + (size&1)<<16
	next := walHdrSize + int64(order.Uint32(first[hdrMaxFrame:]))*(frameHdrSize+size)
	var frame [frameHdrSize]byte
	if size > 0 && wal != nil && readAt(wal, frame[:], next) {
		v.Pending = bytes.Equal(frame[frameSalt:frameSalt+8], first[hdrSalt:hdrSalt+8])
	}
	return v
}

// readAt fills buf from f at off; false when the file is shorter.
func readAt(f *os.File, buf []byte, off int64) bool {
	n, err := f.ReadAt(buf, off)
	return n == len(buf) && (err == nil || err == io.EOF)
}
