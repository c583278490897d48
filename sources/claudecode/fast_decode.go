package claudecode

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// decodeFast is decodeFields' fast path: the object b decoded into v in one
// pass of encoding/json, taken only when that gives what the plain decoder
// gives field by field (a difference test holds the two together). It is
// not taken, and v is left zero, when b is no object, when a key names a
// field other than exactly (encoding/json would take "PID" for pid; the
// plain decoder does not), when a key has escapes or is not ASCII (which
// encoding/json's folding could take for a field), or when anything fails:
// a field of a type this reader does not know is a problem the plain
// decoder names, the rest of the record still read.
func decodeFast(b []byte, v any) bool {
	rv := reflect.ValueOf(v).Elem()
	keys, ok := objectKeys(b)
	if !ok {
		return false
	}
	tf := fieldsOf(rv.Type())
	for _, k := range keys {
		for _, name := range tf.names {
			if string(k) != name && asciiEqualFold(k, name) {
				return false
			}
		}
	}
	if err := json.Unmarshal(b, v); err != nil {
		rv.SetZero()
		return false
	}
	// A null the plain decoder skips; encoding/json hands it to a
	// json.RawMessage as the text null.
	for _, i := range tf.raw {
		if string(rv.Field(i).Bytes()) == "null" {
			rv.Field(i).SetZero()
		}
	}
	return true
}

// typeFields is what decodeFast needs of a record's struct type: its
// fields' JSON names and which of them are json.RawMessage.
type typeFields struct {
	names []string
	raw   []int
}

// fieldTable holds each record type's fields, learnt at its first record
// (a type's fields never change; there are a handful of record types).
var fieldTable sync.Map // reflect.Type → *typeFields

func fieldsOf(rt reflect.Type) *typeFields {
	if tf, ok := fieldTable.Load(rt); ok {
		return tf.(*typeFields)
	}
	tf := &typeFields{names: make([]string, rt.NumField())}
	for i := range tf.names {
		tf.names[i], _, _ = strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if rt.Field(i).Type == rawMessage {
			tf.raw = append(tf.raw, i)
		}
	}
	got, _ := fieldTable.LoadOrStore(rt, tf)
	return got.(*typeFields)
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// asciiEqualFold reports whether the ASCII key k and the ASCII name are
// equal but for case (objectKeys refuses a key that is not ASCII, which
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

// objectKeys lists the keys of the JSON object b, without checking its
// values (encoding/json does, after): ok false when b is no object or a
// key has an escape or a byte that is not ASCII.
func objectKeys(b []byte) (keys [][]byte, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	keys = make([][]byte, 0, 16) // Claude Code's records have 10 to 14
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
		keys = append(keys, b[i+1:end])
		i = skipSpace(b, end+1)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		if i = skipValue(b, skipSpace(b, i+1)); i < 0 {
			return nil, false
		}
		i = skipSpace(b, i)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == '}':
			return keys, skipSpace(b, i+1) == len(b)
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
