package protocol

// The reader of small JSON objects under the fast reading (parse_fast.go):
// it reads the object once, validating as it goes, and gives each member's
// value as a slice of the input. It answers only what it is sure of: a
// value it does not take (an escaped string, an odd number) makes the
// fast reading give the document up to the plain one, so every answer
// agrees with encoding/json's (FuzzFlatObject compares the two).

import (
	"unicode/utf8"

	"github.com/dispatchtop/dispatchtop/internal/jsonnum"
)

// Kinds of a JSON value.
const (
	kindString byte = 's' // raw: the contents, quotes off, no escapes in it
	kindNumber byte = 'n'
	kindNull   byte = 'z'
	kindBool   byte = 'b'
	kindObject byte = 'o'
	kindArray  byte = 'a'
)

// maxFlatDepth bounds the nesting a skipped value may have; deeper input
// goes to encoding/json, which allows more.
const maxFlatDepth = 64

// flatValue is one member's value: its kind and its bytes. A string that
// holds an escape is still valid JSON, but not taken: escaped is true and
// raw is its quoted text.
type flatValue struct {
	kind    byte
	raw     []byte
	escaped bool
}

// flatObject reads the members of the one JSON object b holds.
type flatObject struct {
	b   []byte
	i   int
	n   int  // members read
	bad bool // b is not one valid JSON object, or holds what this cannot read
	// closed: the object ended, and only white space followed it.
	closed bool
}

// openObject starts reading b, which must be one object; false when it does
// not start as one.
func openObject(b []byte) flatObject {
	o := flatObject{b: b}
	o.space()
	if o.i >= len(b) || b[o.i] != '{' {
		o.bad = true
		return o
	}
	o.i++
	return o
}

func (o *flatObject) space() {
	for o.i < len(o.b) {
		switch o.b[o.i] {
		case ' ', '\t', '\n', '\r':
			o.i++
		default:
			return
		}
	}
}

// next reads the next member; ok is false at the end of the object and on
// bad input (o.bad says which). The key is unescaped text: a key with an
// escape is bad, since it may spell a known key another way.
func (o *flatObject) next() (key []byte, v flatValue, ok bool) {
	if o.bad || o.closed {
		return nil, v, false
	}
	o.space()
	if o.i >= len(o.b) {
		o.bad = true
		return nil, v, false
	}
	if o.n == 0 && o.b[o.i] == '}' {
		o.i++
		o.finish()
		return nil, v, false
	}
	if o.n > 0 {
		switch o.b[o.i] {
		case '}':
			o.i++
			o.finish()
			return nil, v, false
		case ',':
			o.i++
			o.space()
		default:
			o.bad = true
			return nil, v, false
		}
	}
	k, ok := o.string()
	if !ok || k.escaped {
		o.bad = true
		return nil, v, false
	}
	o.space()
	if o.i >= len(o.b) || o.b[o.i] != ':' {
		o.bad = true
		return nil, v, false
	}
	o.i++
	o.space()
	v, ok = o.value(0)
	if !ok {
		o.bad = true
		return nil, v, false
	}
	o.n++
	return k.raw, v, true
}

// finish checks that nothing but white space follows the object.
func (o *flatObject) finish() {
	o.space()
	if o.i != len(o.b) {
		o.bad = true
	}
	o.closed = true
}

// done reports whether the whole object was read and was valid.
func (o *flatObject) done() bool { return o.closed && !o.bad }

// value reads one value at o.i.
func (o *flatObject) value(depth int) (flatValue, bool) {
	if o.i >= len(o.b) {
		return flatValue{}, false
	}
	start := o.i
	switch c := o.b[o.i]; {
	case c == '"':
		return o.string()
	case c == '-' || c >= '0' && c <= '9':
		if !o.number() {
			return flatValue{}, false
		}
		return flatValue{kind: kindNumber, raw: o.b[start:o.i]}, true
	case c == 'n', c == 't', c == 'f':
		return o.literal()
	case c == '{' || c == '[':
		if depth >= maxFlatDepth || !o.container(depth+1) {
			return flatValue{}, false
		}
		kind := kindObject
		if c == '[' {
			kind = kindArray
		}
		return flatValue{kind: kind, raw: o.b[start:o.i]}, true
	}
	return flatValue{}, false
}

// literal reads null, true or false at o.i.
func (o *flatObject) literal() (flatValue, bool) {
	kind, word := kindBool, "true"
	switch o.b[o.i] {
	case 'n':
		kind, word = kindNull, "null"
	case 'f':
		word = "false"
	}
	if len(o.b)-o.i < len(word) || string(o.b[o.i:o.i+len(word)]) != word {
		return flatValue{}, false
	}
	o.i += len(word)
	return flatValue{kind: kind, raw: o.b[o.i-len(word) : o.i]}, true
}

// container skips an object or array at o.i, validating it.
func (o *flatObject) container(depth int) bool {
	closer := byte('}')
	if o.b[o.i] == '[' {
		closer = ']'
	}
	o.i++
	o.space()
	if o.i < len(o.b) && o.b[o.i] == closer {
		o.i++
		return true
	}
	for {
		if closer == '}' {
			if o.i >= len(o.b) || o.b[o.i] != '"' {
				return false
			}
			if _, ok := o.string(); !ok {
				return false
			}
			o.space()
			if o.i >= len(o.b) || o.b[o.i] != ':' {
				return false
			}
			o.i++
			o.space()
		}
		if _, ok := o.value(depth); !ok {
			return false
		}
		o.space()
		if o.i >= len(o.b) {
			return false
		}
		switch o.b[o.i] {
		case ',':
			o.i++
			o.space()
		case closer:
			o.i++
			return true
		default:
			return false
		}
	}
}

// string reads a string at o.i. Control characters are invalid JSON;
// invalid UTF-8 is valid JSON that encoding/json would replace, so such a
// string is marked escaped, not taken as it is.
func (o *flatObject) string() (flatValue, bool) {
	if o.i >= len(o.b) || o.b[o.i] != '"' {
		return flatValue{}, false
	}
	start := o.i
	o.i++
	escaped, ascii := false, true
	for o.i < len(o.b) {
		c := o.b[o.i]
		switch {
		case c == '"':
			raw := o.b[start+1 : o.i]
			o.i++
			if escaped || !ascii && !utf8.Valid(raw) {
				return flatValue{kind: kindString, raw: o.b[start:o.i], escaped: true}, true
			}
			return flatValue{kind: kindString, raw: raw}, true
		case c == '\\':
			escaped = true
			if !o.escape() {
				return flatValue{}, false
			}
			continue
		case c < 0x20:
			return flatValue{}, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		o.i++
	}
	return flatValue{}, false
}

// escape validates the escape at o.i and steps past it.
func (o *flatObject) escape() bool {
	if o.i+1 >= len(o.b) {
		return false
	}
	switch o.b[o.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		o.i += 2
		return true
	case 'u':
		if o.i+6 > len(o.b) {
			return false
		}
		for _, h := range o.b[o.i+2 : o.i+6] {
			if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
				return false
			}
		}
		o.i += 6
		return true
	}
	return false
}

// number steps past a number at o.i, as JSON's grammar has it.
func (o *flatObject) number() bool {
	end, _, ok := jsonnum.Scan(o.b, o.i)
	if ok {
		o.i = end
	}
	return ok
}

// isInteger reports whether a JSON number is written as an integer (no
// fraction, no exponent).
func isInteger(num []byte) bool {
	for _, c := range num {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}

// word is the string of b, shared for the words a scan reads on every node
// (statuses, roles, CfA states): at 100,000 nodes a copy of each is a
// hundred thousand small allocations to hold the same few words.
func word(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case "starting":
		return "starting"
	case "running":
		return "running"
	case "paused":
		return "paused"
	case "completed":
		return "completed"
	case "withdrawn":
		return "withdrawn"
	case "active":
		return "active"
	case "lead":
		return "lead"
	case "team-lead":
		return "team-lead"
	case "worker":
		return "worker"
	case "INTENT":
		return "INTENT"
	case "PLAN":
		return "PLAN"
	case "EXECUTE":
		return "EXECUTE"
	case "DONE":
		return "DONE"
	case "COMPLETED_WORK":
		return "COMPLETED_WORK"
	case "WITHDRAWN":
		return "WITHDRAWN"
	case "FAILURE":
		return "FAILURE"
	}
	return string(b)
}
