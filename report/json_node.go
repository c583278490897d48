package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/dispatchtop/dispatchtop/model"
)

// appendNode appends n as an indented encoding/json encoder writes it, the
// object's lines under prefix, without building its compact form first: at
// 10,000 nodes, marshalling each session and indenting it again was a tenth
// of `--once --json`. The rare values whose encoding is intricate (extra
// heartbeat fields) go through encoding/json; ok is false when one fails,
// and the caller encodes the node that way to get encoding/json's error.
// A non-finite float, which encoding/json refuses, is null: a value no
// one can verify, never a document that cannot be written.
func appendNode(b []byte, n *NodeJSON, prefix string) ([]byte, bool) {
	in := deeper(prefix)
	b, ok := appendNodeMembers(b, n, in)
	if !ok {
		return b, false
	}
	switch {
	case n.Children == nil:
		b = append(b, "null"...)
	case len(n.Children) == 0:
		b = append(b, "[]"...)
	default:
		b = append(b, "[\n"...)
		for i := range n.Children {
			if i > 0 {
				b = append(b, ",\n"...)
			}
			b = append(b, deeper(in)...)
			if b, ok = appendNode(b, &n.Children[i], deeper(in)); !ok {
				return b, false
			}
		}
		b = append(b, '\n')
		b = append(b, in...)
		b = append(b, ']')
	}
	return appendNodeEnd(b, prefix), true
}

// appendNodeMembers opens n's object and appends its members at in, all but
// its children: up to the key of "children", whose list the caller writes
// (from n's, or from the model node's children, one at a time).
func appendNodeMembers(b []byte, n *NodeJSON, in string) ([]byte, bool) {
	b = append(b, "{\n"...)
	b = appendKey(b, in, "id")
	b = appendString(b, n.ID)
	b = appendNext(b, in, "infra_dir")
	b = appendString(b, n.InfraDir)
	b = appendNext(b, in, "source")
	b = appendString(b, n.Source)
	b = appendNext(b, in, "heartbeat")
	b = appendStringPtr(b, n.Heartbeat)
	b = appendNext(b, in, "state")
	b = appendString(b, string(n.State))
	b = appendNext(b, in, "flags")
	if len(n.Flags) == 0 {
		if n.Flags == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, "[]"...)
		}
	} else {
		b = append(b, "[\n"...)
		for i, f := range n.Flags {
			if i > 0 {
				b = append(b, ",\n"...)
			}
			b = append(b, deeper(in)...)
			b = appendString(b, string(f))
		}
		b = append(b, '\n')
		b = append(b, in...)
		b = append(b, ']')
	}
	b = appendNext(b, in, "reason")
	b = appendString(b, n.Reason)
	b = appendNext(b, in, "action")
	b = appendString(b, string(n.Action))
	b = appendNext(b, in, "role")
	b = appendString(b, n.Role)
	b = appendNext(b, in, "team")
	b = appendString(b, n.Team)
	b = appendNext(b, in, "task_id")
	b = appendStringPtr(b, n.TaskID)
	b = appendNext(b, in, "pid")
	if n.PID == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*n.PID), 10)
	}
	b = appendNext(b, in, "started")
	b = appendFloatPtr(b, n.Started)
	b = appendNext(b, in, "status")
	b = appendStringPtr(b, n.Status)
	b = appendNext(b, in, "beat_age_s")
	b = appendFloatPtr(b, n.BeatAgeS)
	b = appendNext(b, in, "activity_age_s")
	b = appendFloatPtr(b, n.ActivityAgeS)
	var ok bool
	b = appendNext(b, in, "cfa")
	if n.Cfa == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, "{\n"...)
		b = appendKey(b, deeper(in), "state")
		b = appendString(b, n.Cfa.State)
		b = appendNext(b, deeper(in), "outcome")
		b = appendString(b, n.Cfa.Outcome)
		b = append(b, '\n')
		b = append(b, in...)
		b = append(b, '}')
	}
	b = appendNext(b, in, "retries")
	b = append(b, "{\n"...)
	b = appendKey(b, deeper(in), "total")
	b = strconv.AppendInt(b, int64(n.Retries.Total), 10)
	b = appendNext(b, deeper(in), "phase")
	b = strconv.AppendInt(b, int64(n.Retries.Phase), 10)
	b = appendNext(b, deeper(in), "left")
	b = strconv.AppendInt(b, int64(n.Retries.Left), 10)
	b = append(b, '\n')
	b = append(b, in...)
	b = append(b, '}')
	b = appendNext(b, in, "blocked")
	b = appendStringPtr(b, n.Blocked)
	b = appendNext(b, in, "parent")
	b = appendStringPtr(b, n.Parent)
	if len(n.OtherParents) > 0 {
		b = appendNext(b, in, "other_parents")
		b = append(b, "[\n"...)
		for i, p := range n.OtherParents {
			if i > 0 {
				b = append(b, ",\n"...)
			}
			b = append(b, deeper(in)...)
			b = appendString(b, p)
		}
		b = append(b, '\n')
		b = append(b, in...)
		b = append(b, ']')
	}
	if len(n.Problems) > 0 {
		b = appendNext(b, in, "problems")
		b = appendProblems(b, n.Problems, in)
	}
	if len(n.Extra) > 0 {
		b = appendNext(b, in, "extra")
		if b, ok = appendIndentedValue(b, n.Extra, in); !ok {
			return b, false
		}
	}
	if len(n.SourceFields) > 0 {
		b = appendNext(b, in, "source_fields")
		b = appendFields(b, n.SourceFields, in)
	}
	return appendNext(b, in, "children"), true
}

// appendNodeEnd closes the object appendNodeMembers opened, its children
// written.
func appendNodeEnd(b []byte, prefix string) []byte {
	b = append(b, '\n')
	b = append(b, prefix...)
	return append(b, '}')
}

// spaces holds the indents of the usual depths.
const spaces = "                                                                                                "

// deeper is the indent one level below prefix (spaces only), taken from
// spaces while it is deep enough: made anew, a node's indent was an
// allocation a node.
func deeper(prefix string) string {
	if n := len(prefix) + 2; n <= len(spaces) && prefix == spaces[:len(prefix)] {
		return spaces[:n]
	}
	return prefix + "  "
}

// appendKey appends the first member's indent and key.
func appendKey(b []byte, in, key string) []byte {
	b = append(b, in...)
	b = append(b, '"')
	b = append(b, key...)
	return append(b, `": `...)
}

// appendNext appends the comma and line break that end a member, then the
// next member's indent and key: joined as one string first, they were an
// allocation a member.
func appendNext(b []byte, in, key string) []byte {
	return appendKey(append(b, ",\n"...), in, key)
}

// appendFields writes a source's fields as encoding/json indents
// []FieldJSON.
func appendFields(b []byte, fs []FieldJSON, in string) []byte {
	return appendPairs(b, in, len(fs), "name", "value", func(i int) (string, string) { return fs[i].Name, fs[i].Value })
}

// appendProblems writes problems as encoding/json indents []model.Problem.
func appendProblems(b []byte, ps []model.Problem, in string) []byte {
	return appendPairs(b, in, len(ps), "path", "error", func(i int) (string, string) { return ps[i].Path, ps[i].Error })
}

// appendPairs writes n objects of two string fields, k1 and k2, as
// encoding/json indents a list of them at in; at(i) gives the i-th values.
func appendPairs(b []byte, in string, n int, k1, k2 string, at func(int) (string, string)) []byte {
	b = append(b, "[\n"...)
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ",\n"...)
		}
		v1, v2 := at(i)
		b = append(b, deeper(in)...)
		b = append(b, "{\n"...)
		b = appendKey(b, deeper(deeper(in)), k1)
		b = appendString(b, v1)
		b = appendNext(b, deeper(deeper(in)), k2)
		b = appendString(b, v2)
		b = append(b, '\n')
		b = append(b, deeper(in)...)
		b = append(b, '}')
	}
	b = append(b, '\n')
	b = append(b, in...)
	return append(b, ']')
}

// appendIndentedValue is encoding/json's marshal-then-indent of v.
func appendIndentedValue(b []byte, v any, prefix string) ([]byte, bool) {
	compact, err := json.Marshal(v)
	if err != nil {
		return b, false
	}
	out := bytes.NewBuffer(b)
	if err := json.Indent(out, compact, prefix, "  "); err != nil {
		return b, false
	}
	return out.Bytes(), true
}

func appendStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

// appendFloatPtr formats as encoding/json does; NaN and ±Inf, which it
// refuses, are null.
func appendFloatPtr(b []byte, f *float64) []byte {
	if f == nil || math.IsInf(*f, 0) || math.IsNaN(*f) {
		return append(b, "null"...)
	}
	v := *f
	format := byte('f')
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, v, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// plainASCII is htmlSafe of each ASCII byte, looked up: one load a byte of
// every string written, where htmlSafe's six comparisons were a tenth of
// writing a node.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = htmlSafe(byte(c))
	}
	return t
}()

// htmlSafe: an ASCII byte written as it is in a string with HTML escaping
// on: not a control character, a quote, a backslash, <, > or &.
func htmlSafe(c byte) bool {
	return c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// appendEscapedASCII appends the escape of an ASCII byte htmlSafe says is
// not written as it is: the short escapes where JSON has one, else \u00XX.
func appendEscapedASCII(b []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

// appendString quotes s as encoding/json does with HTML escaping on (its
// default): <, > and & as \u003c, \u003e and \u0026, invalid UTF-8 as
// \ufffd, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if plainASCII[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = appendEscapedASCII(b, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
