package claudecode

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// decodeFast is decodeFields' fast path: the object b decoded into v in one
// pass, taken only when that gives what the plain decoder gives field by
// field (a difference test holds the two together). It is not taken, and v
// is left zero, when b is not valid JSON or no object, when a key names a
// field other than exactly (encoding/json would take "PID" for pid; the
// plain decoder does not), when a key has escapes or is not ASCII (which
// encoding/json's folding could take for a field), or when anything fails:
// a field of a type this reader does not know is a problem the plain
// decoder names, the rest of the record still read.
//
// A string field whose text has no escape is a slice of one copy of the
// record, and a number field is parsed in place, each pointed at from one
// array a record: encoding/json would allocate each field and copy each
// string on its own. Any other field, or a string with an escape, is
// decoded by encoding/json, its value alone.
func decodeFast(b []byte, v any) bool {
	rv := reflect.ValueOf(v).Elem()
	if !decodeMembers(b, rv) {
		rv.SetZero()
		return false
	}
	return true
}

func decodeMembers(b []byte, rv reflect.Value) bool {
	members, ok := objectMembers(b)
	if !ok || !json.Valid(b) {
		return false
	}
	tf := fieldsOf(rv.Type())
	for _, m := range members {
		for _, name := range tf.names {
			if string(m.key) != name && asciiEqualFold(m.key, name) {
				return false
			}
		}
	}
	var text string // b as a string, made at the first string field
	var strs []string
	var floats []float64
	for _, m := range members {
		i := slices.Index(tf.names, string(m.key))
		if i < 0 || tf.names[i] == "" {
			continue
		}
		f := rv.Field(i)
		if string(m.value) == "null" {
			// encoding/json sets a pointer nil; the plain decoder skips a
			// null, and a json.RawMessage left as null reads as absent.
			f.SetZero()
			continue
		}
		switch tf.kinds[i] {
		case kindString:
			if m.value[0] != '"' {
				return false // another type: a problem the plain decoder names
			}
			body := m.value[1 : len(m.value)-1]
			if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
				if json.Unmarshal(m.value, f.Addr().Interface()) != nil {
					return false
				}
				continue
			}
			if text == "" {
				text = string(b)
			}
			if strs == nil {
				strs = make([]string, len(tf.names))
			}
			off := len(b) - len(m.value) - len(m.after) + 1
			strs[i] = text[off : off+len(body)]
			*f.Addr().Interface().(**string) = &strs[i]
		case kindFloat:
			if c := m.value[0]; c != '-' && (c < '0' || c > '9') {
				return false
			}
			if text == "" {
				text = string(b)
			}
			off := len(b) - len(m.value) - len(m.after)
			n, err := strconv.ParseFloat(text[off:off+len(m.value)], 64)
			if err != nil {
				return false // out of range: encoding/json's type error
			}
			if floats == nil {
				floats = make([]float64, len(tf.names))
			}
			floats[i] = n
			*f.Addr().Interface().(**float64) = &floats[i]
		default:
			if json.Unmarshal(m.value, f.Addr().Interface()) != nil {
				return false
			}
		}
	}
	return true
}

// fieldKind is how decodeFast decodes a field.
type fieldKind uint8

const (
	kindOther  fieldKind = iota // by encoding/json, its value alone
	kindString                  // *string
	kindFloat                   // *float64
)

// typeFields is what decodeFast needs of a record's struct type: its
// fields' JSON names and kinds.
type typeFields struct {
	names []string
	kinds []fieldKind
}

// fieldTable holds each record type's fields, learnt at its first record
// (a type's fields never change; there are a handful of record types).
var fieldTable sync.Map // reflect.Type → *typeFields

func fieldsOf(rt reflect.Type) *typeFields {
	if tf, ok := fieldTable.Load(rt); ok {
		return tf.(*typeFields)
	}
	tf := &typeFields{names: make([]string, rt.NumField()), kinds: make([]fieldKind, rt.NumField())}
	for i := range tf.names {
		tf.names[i], _, _ = strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		switch rt.Field(i).Type {
		case reflect.TypeFor[*string]():
			tf.kinds[i] = kindString
		case reflect.TypeFor[*float64]():
			tf.kinds[i] = kindFloat
		}
	}
	got, _ := fieldTable.LoadOrStore(rt, tf)
	return got.(*typeFields)
}

// asciiEqualFold reports whether the ASCII key k and the ASCII name are
// equal but for case (objectMembers refuses a key that is not ASCII, which
// encoding/json's Unicode folding could take for a name of another length).
func asciiEqualFold(k []byte, name string) bool {
	if len(k) != len(name) {
		return false
	}
	for i := range k {
		a, b := k[i], name[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// member is one key of an object and its value's text; after is what of
// the object follows the value (where the value is, in the object).
type member struct{ key, value, after []byte }

// objectMembers lists the members of the JSON object b, without checking
// their values (json.Valid does): ok false when b is no object or a key
// has an escape or a byte that is not ASCII.
func objectMembers(b []byte) (members []member, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	members = make([]member, 0, 16) // Claude Code's records have 10 to 14
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil, skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, false
		}
		end := i + 1
		for end < len(b) && b[end] != '"' {
			if b[end] == '\\' || b[end] >= 0x80 {
				return nil, false
			}
			end++
		}
		if end >= len(b) {
			return nil, false
		}
		key := b[i+1 : end]
		i = skipSpace(b, end+1)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		start := skipSpace(b, i+1)
		if i = skipValue(b, start); i < 0 {
			return nil, false
		}
		value := bytes.TrimRight(b[start:i], " \t\n\r")
		if len(value) == 0 {
			return nil, false
		}
		members = append(members, member{key: key, value: value, after: b[start+len(value):]})
		i = skipSpace(b, i)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == '}':
			return members, skipSpace(b, i+1) == len(b)
		default:
			return nil, false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index after the value at i (-1: none ends): a
// string, or anything up to the next ',' or '}' at its depth.
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			i++
			for i < len(b) && b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(b) {
				return -1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}
