package model

import (
	"strconv"
	"time"
)

// FormatAge is the one way an age is written: in the tree's beat column,
// in reasons, in the --once text. "4s", "2m05s", "1h02m", "3d04h": two
// units at most, the second two digits wide so a column of ages lines up.
// It truncates to whole units; a negative duration (an mtime in the
// future) is "0s".
func FormatAge(d time.Duration) string {
	var buf [16]byte
	return string(AppendAge(buf[:0], d))
}

// AppendAge appends FormatAge(d) to dst: an age written into a text
// being built costs no string of its own.
func AppendAge(dst []byte, d time.Duration) []byte {
	if d < time.Second {
		return append(dst, "0s"...)
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return append(strconv.AppendInt(dst, s, 10), 's')
	case s < 3600:
		return append(appendTwoDigits(append(strconv.AppendInt(dst, s/60, 10), 'm'), s%60), 's')
	case s < 86400:
		return append(appendTwoDigits(append(strconv.AppendInt(dst, s/3600, 10), 'h'), s%3600/60), 'm')
	}
	return append(appendTwoDigits(append(strconv.AppendInt(dst, s/86400, 10), 'd'), s%86400/3600), 'h')
}

func appendTwoDigits(dst []byte, v int64) []byte {
	if v < 10 {
		dst = append(dst, '0')
	}
	return strconv.AppendInt(dst, v, 10)
}

// ReasonAge is the one age in a node's Reason that moves with the clock:
// the beat's, in "last beat 12s ago", "alive but not beating for 3m05s",
// ".running written 4s ago". Reason[At:At+Len] is that age as the
// classifier wrote it, measured from Since at the classification. Other
// ages a reason quotes ("lead dead since 08:55:01 (2m00s ago)", "kill
// candidate in 1m30s") are plain text, as of the classification; QuotesClock
// says a reason has such text. The zero ReasonAge: nothing in the reason
// moves.
type ReasonAge struct {
	// Since is an Instant, At and Len int32: ReasonAge is in every node,
	// 24 bytes so, 40 with a time.Time and ints.
	Since   Instant
	At, Len int32
	// QuotesClock: the reason also quotes an age as plain text (another
	// age, or a countdown), which holds as of the classification. The live
	// engine classifies such a node again every 30 ticks (SPEC §8), so that
	// text is never older than that; a reason without one reads true at any
	// time through ReasonAt. A wall time ("since 08:55:01") stays true.
	QuotesClock bool
}

// ReasonAt is n's reason as of now: its moving age (ReasonAge) measured at
// now, the rest as the classifier wrote it. Every view renders a reason
// through it, at its own now — the ui at its clock, serve at the request,
// --once at its scan — so none of them reads ages back out of the text.
func (n *Node) ReasonAt(now time.Time) string {
	a := n.ReasonAge
	at, end := int(a.At), int(a.At)+int(a.Len)
	if a.Len <= 0 || a.Since.IsZero() || at < 0 || end > len(n.Reason) {
		return n.Reason
	}
	return n.Reason[:at] + FormatAge(now.Sub(a.Since.Time())) + n.Reason[end:]
}
