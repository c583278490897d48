// Package termtext makes text that dispatchtop did not write itself — node
// ids (directory names), roles, reasons, registry lines, error messages —
// safe to print as one line of a terminal. It is the one place that rule
// lives: the command line, the text report, the dashboard, the classifier's
// reasons and the scanner's problems all call it.
//
// It lives in its own package, below model, because it is about printing,
// not about nodes, and imports nothing of ours: every package can use it.
package termtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Replacement stands where a character was that a terminal would act on
// instead of showing: visible, so a name that carried an escape sequence
// does not pass for a plain one, and one cell wide, so it splits no word.
const Replacement = '\uFFFD'

// Line returns s with nothing in it that a terminal would act on: a line
// break, tab or other whitespace control becomes a space; any other control
// character (ESC and the rest of C0, DEL, C1) and the bidirectional
// overrides become [Replacement]. Everything else, runs of spaces included,
// stays as it is, so indentation and column widths survive: it suits text
// the caller lays out itself.
func Line(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case isBreak(r):
			b.WriteByte(' ')
		case isHostile(r):
			b.WriteRune(Replacement)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// OneLine is [Line] for text folded into a sentence (a reason, a message,
// an error): every run of whitespace, line breaks included, becomes one
// space, the ends are trimmed, and at most max runes are kept, the cut
// marked with an ellipsis ("…"). max <= 0 keeps everything.
func OneLine(s string, max int) string {
	if max <= 0 {
		max = len(s) // a rune is at least a byte: no cap
	}
	if isTidy(s, max) {
		return s
	}
	var b strings.Builder
	space, runes := false, 0
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if isHostile(r) {
			r = Replacement
		}
		need := 1
		if space {
			need = 2
		}
		if runes+need > max {
			b.WriteRune('…')
			break
		}
		if space {
			b.WriteByte(' ')
			runes++
			space = false
		}
		b.WriteRune(r)
		runes++
	}
	return b.String()
}

// isBreak reports whether r is whitespace a terminal moves the cursor for
// (a line break, tab, form feed) rather than prints.
func isBreak(r rune) bool {
	return unicode.IsSpace(r) && (unicode.IsControl(r) || r == '\u2028' || r == '\u2029')
}

// isHostile reports whether a terminal would act on r rather than show it:
// a control character that is not a break (ESC starts every escape
// sequence; C1 holds the 8-bit forms), or a bidirectional embedding,
// override or isolate, which reorders what follows it on the line.
func isHostile(r rune) bool {
	switch {
	case isBreak(r):
		return false
	case unicode.IsControl(r):
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// isPlain reports whether Line would return s unchanged: printable ASCII,
// the common case, needs no copy; anything else takes the rune-aware path.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// isTidy reports whether OneLine would return s unchanged: printable ASCII
// without leading, trailing or doubled spaces, within max.
func isTidy(s string, max int) bool {
	if s == "" {
		return true
	}
	if len(s) > max {
		return false
	}
	prevSpace := true // a leading space is trimmed
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c < 0x20 || c == 0x7f || (c == ' ' && prevSpace) {
			return false
		}
		prevSpace = c == ' '
	}
	return !prevSpace
}
