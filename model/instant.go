package model

import "time"

// Instant is a moment in 12 bytes, where a time.Time takes 24: its seconds
// since January 1, year 1, UTC, in two 32-bit words, and its nanoseconds.
// Its words are 32-bit so that it packs beside other 32-bit fields with no
// padding (ReasonAge: 24 bytes in every node, 40 with a time.Time). The
// zero Instant is the zero time.
//
// It keeps a time.Time's moment exactly, over the whole range of years a
// time.Time holds; it drops what no age measured from it reads: the
// location (Time returns one in the local zone) and the monotonic clock
// reading (an age from an Instant is one of wall clocks, as an age from a
// file's mtime is).
type Instant struct {
	sec  [2]uint32 // seconds since year 1, the high word first
	nsec uint32
}

// yearOneToUnix is the seconds from January 1, year 1 to the Unix epoch:
// the zero time.Time's Unix() is its negation.
const yearOneToUnix = 62135596800

// InstantOf is t as an Instant.
func InstantOf(t time.Time) Instant {
	s := uint64(t.Unix() + yearOneToUnix)
	return Instant{sec: [2]uint32{uint32(s >> 32), uint32(s)}, nsec: uint32(t.Nanosecond())}
}

// Time is i as a time.Time in the local zone, the zero time.Time for the
// zero Instant.
func (i Instant) Time() time.Time {
	if i.IsZero() {
		return time.Time{}
	}
	s := int64(uint64(i.sec[0])<<32|uint64(i.sec[1])) - yearOneToUnix
	return time.Unix(s, int64(i.nsec))
}

// IsZero reports whether i is the zero time.
func (i Instant) IsZero() bool {
	return i == Instant{}
}
