// Package jsonnum steps past a JSON number, as the grammar of RFC 8259
// has it: the one scanner of the fast readings (protocol's flat objects,
// the fleet's watch events), which give anything it refuses to
// encoding/json.
package jsonnum

// Scan steps past the number that starts at b[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
// It returns where the number ends and whether it is written as an
// integer (no fraction, no exponent); ok is false when no number starts
// at i or it stops half-way (a "1." or a "2e").
func Scan(b []byte, i int) (end int, integer, ok bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return 0, false, false
	}
	integer = true
	if i < len(b) && b[i] == '.' {
		integer = false
		if i++; i >= len(b) || !isDigit(b[i]) {
			return 0, false, false
		}
		i = digits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integer = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return 0, false, false
		}
		i = digits(b, i)
	}
	return i, integer, true
}

func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
