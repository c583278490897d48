package claudecode

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"
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
// record, and a number field (*float64, *int) is parsed in place, each
// pointed at from one array a record: encoding/json would allocate each
// field and copy each string on its own; a json.RawMessage is the value's
// bytes in the record read, a []json.RawMessage (a team's members) its
// items' bytes. Any other field, or a string with an escape,
// is decoded by encoding/json, its value alone.
func decodeFast(b []byte, v any) bool {
	rv := reflect.ValueOf(v).Elem()
	if !decodeMembers(b, rv) {
		rv.SetZero()
		return false
	}
	return true
}

// decodeMembers reads the object b in one pass: each member's key and
// value are checked as JSON as they are met (validValue, held to
// json.Valid), and the member is decoded into its field at once, with no
// list of the members made first and no second pass of json.Valid over
// the record. A failure anywhere leaves the caller to zero the record.
func decodeMembers(b []byte, rv reflect.Value) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	tf := fieldsOf(rv.Type())
	d := memberDecoder{b: b, rv: rv, base: rv.Addr().UnsafePointer(), tf: tf}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		end := i + 1
		for end < len(b) && b[end] != '"' {
			// An escape or a byte that is not ASCII: encoding/json's folding
			// could take such a key for a field. A control byte: no JSON.
			if c := b[end]; c == '\\' || c >= 0x80 || c < 0x20 {
				return false
			}
			end++
		}
		if end >= len(b) {
			return false
		}
		key := b[i+1 : end]
		i = skipSpace(b, end+1)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		start := skipSpace(b, i+1)
		if i = validValue(b, start, 0); i < 0 {
			return false
		}
		if !d.member(key, start, i) {
			return false
		}
		i = skipSpace(b, i)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// memberDecoder decodes one record's members into its fields.
type memberDecoder struct {
	b      []byte
	rv     reflect.Value
	base   unsafe.Pointer // rv's address
	tf     *typeFields
	text   string // b as a string, made at the first string or number field
	strs   []string
	floats []float64
	ints   []int
}

// member decodes the member key whose value is b[start:end] (valid JSON);
// false when the record is not the fast path's.
func (d *memberDecoder) member(key []byte, start, end int) bool {
	i, ok := d.tf.find(key)
	switch {
	case !ok:
		// A key another name's case away from a field's: encoding/json
		// would take it for that field; the plain decoder does not.
		return !d.tf.foldsToAField(key)
	case d.tf.caseTwin[i]:
		return false // a field's name another's but for case
	}
	value := d.b[start:end]
	f := d.rv.Field(i)
	// Where the field lies in the record: a field of a kind below is set
	// through its address as its kind's type (fieldsOf told the kind by
	// the field's exact type), where reflect's Addr looked its pointer
	// type up in a shared map, a member at a time.
	at := unsafe.Add(d.base, d.tf.offsets[i])
	if string(value) == "null" {
		// encoding/json sets a pointer nil; the plain decoder skips a
		// null, and a json.RawMessage left as null reads as absent.
		f.SetZero()
		return true
	}
	switch d.tf.kinds[i] {
	case kindString:
		if value[0] != '"' {
			return false // another type: a problem the plain decoder names
		}
		body := value[1 : len(value)-1]
		if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
			return json.Unmarshal(value, f.Addr().Interface()) == nil
		}
		if d.text == "" {
			d.text = string(d.b)
		}
		if d.strs == nil {
			d.strs = make([]string, len(d.tf.names))
		}
		d.strs[i] = d.text[start+1 : end-1]
		*(**string)(at) = &d.strs[i]
	case kindFloat:
		if c := value[0]; c != '-' && (c < '0' || c > '9') {
			return false
		}
		if d.text == "" {
			d.text = string(d.b)
		}
		n, err := strconv.ParseFloat(d.text[start:end], 64)
		if err != nil {
			return false // out of range: encoding/json's type error
		}
		if d.floats == nil {
			d.floats = make([]float64, len(d.tf.names))
		}
		d.floats[i] = n
		*(**float64)(at) = &d.floats[i]
	case kindInt:
		if c := value[0]; c != '-' && (c < '0' || c > '9') {
			return false
		}
		if d.text == "" {
			d.text = string(d.b)
		}
		// encoding/json's reading of an int: a number with no fraction
		// or exponent, in range; any other is its type error.
		n, err := strconv.ParseInt(d.text[start:end], 10, strconv.IntSize)
		if err != nil {
			return false
		}
		if d.ints == nil {
			d.ints = make([]int, len(d.tf.names))
		}
		d.ints[i] = int(n)
		*(**int)(at) = &d.ints[i]
	case kindRaw:
		// The value's text, as encoding/json copies it, held in the
		// record's own bytes (read for this record alone).
		*(*json.RawMessage)(at) = value[:len(value):len(value)]
	case kindRawList:
		// A list's items, each its bytes in the record (validValue has
		// checked the list): encoding/json would check the list again and
		// copy each item.
		if value[0] != '[' {
			return false
		}
		items := make([]json.RawMessage, 0, 4)
		j := skipSpace(value, 1)
		for j < len(value) && value[j] != ']' {
			e := validValue(value, j, 0)
			if e < 0 {
				return false
			}
			items = append(items, value[j:e:e])
			if j = skipSpace(value, e); j < len(value) && value[j] == ',' {
				j = skipSpace(value, j+1)
			}
		}
		*(*[]json.RawMessage)(at) = items
	default:
		return json.Unmarshal(value, f.Addr().Interface()) == nil
	}
	return true
}

// fieldKind is how decodeFast decodes a field.
type fieldKind uint8

const (
	kindOther   fieldKind = iota // by encoding/json, its value alone
	kindString                   // *string
	kindFloat                    // *float64
	kindInt                      // *int
	kindRaw                      // json.RawMessage
	kindRawList                  // []json.RawMessage
)

// typeFields is what decodeFast needs of a record's struct type: its
// fields' JSON names and kinds.
type typeFields struct {
	names []string
	kinds []fieldKind
	// index is each named field's by its name; lower holds the names in
	// lower case (a key that folds to a name, looked up without a loop
	// over the names); caseTwin marks a name another folds to.
	index    map[string]int
	lower    map[string]bool
	caseTwin []bool
	offsets  []uintptr
	// slots find a name by its length and its first and last bytes
	// (slotOf), one comparison of the whole key: a field's index + 1, 0
	// for none, -1 for names that share a slot (found in index). A map's
	// hash of each key cost more than the rest of a member's decoding.
	slots [64]int8
}

func slotOf[T string | []byte](k T) int {
	return (len(k)*7 + int(k[0])*3 + int(k[len(k)-1])) & 63
}

// find is the index of the field named key.
func (tf *typeFields) find(key []byte) (int, bool) {
	if len(key) == 0 {
		return 0, false
	}
	switch s := tf.slots[slotOf(key)]; {
	case s > 0:
		return int(s - 1), tf.names[s-1] == string(key)
	case s < 0:
		i, ok := tf.index[string(key)]
		return i, ok
	}
	return 0, false
}

// foldsToAField reports whether the ASCII key k, no field's name, is one
// but for case.
func (tf *typeFields) foldsToAField(k []byte) bool {
	var buf [64]byte
	lower := append(buf[:0], k...) // on the stack but for a key longer than any name
	for i, c := range lower {
		if 'A' <= c && c <= 'Z' {
			lower[i] = c + 'a' - 'A'
		}
	}
	return tf.lower[string(lower)]
}

// fieldTable holds each record type's fields, learnt at its first record
// (a type's fields never change; there are a handful of record types).
var fieldTable sync.Map // reflect.Type → *typeFields

func fieldsOf(rt reflect.Type) *typeFields {
	if tf, ok := fieldTable.Load(rt); ok {
		return tf.(*typeFields)
	}
	n := rt.NumField()
	tf := &typeFields{names: make([]string, n), kinds: make([]fieldKind, n), index: map[string]int{}, lower: map[string]bool{},
		caseTwin: make([]bool, n), offsets: make([]uintptr, n)}
	for i := range tf.names {
		tf.names[i], _, _ = strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		tf.offsets[i] = rt.Field(i).Offset
		if _, twice := tf.index[tf.names[i]]; tf.names[i] != "" && !twice {
			tf.index[tf.names[i]] = i
			tf.lower[strings.ToLower(tf.names[i])] = true
		}
		switch rt.Field(i).Type {
		case reflect.TypeFor[*string]():
			tf.kinds[i] = kindString
		case reflect.TypeFor[*float64]():
			tf.kinds[i] = kindFloat
		case reflect.TypeFor[*int]():
			tf.kinds[i] = kindInt
		case reflect.TypeFor[json.RawMessage]():
			tf.kinds[i] = kindRaw
		case reflect.TypeFor[[]json.RawMessage]():
			tf.kinds[i] = kindRawList
		}
	}
	for name, i := range tf.index {
		switch slot := &tf.slots[slotOf(name)]; {
		case *slot == 0 && i < 127:
			*slot = int8(i + 1)
		default:
			*slot = -1
		}
	}
	for i, name := range tf.names {
		for j, other := range tf.names {
			tf.caseTwin[i] = tf.caseTwin[i] || i != j && name != "" && name != other && strings.EqualFold(name, other)
		}
	}
	got, _ := fieldTable.LoadOrStore(rt, tf)
	return got.(*typeFields)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// maxDepth is how deep validValue follows arrays and objects in a value;
// deeper, the record is left to the plain decoder (encoding/json's own
// limit is 10,000). Claude Code's records nest three deep.
const maxDepth = 64

// validValue returns the index after the JSON value at i (-1: none, or
// not valid JSON as encoding/json's scanner reads it: json.Valid's
// grammar, its strings' bytes unchecked as UTF-8). Space after the value
// is not skipped.
func validValue(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		return validString(b, i)
	case c == '-' || ('0' <= c && c <= '9'):
		return validNumber(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '[' || c == '{':
		if depth >= maxDepth {
			return -1
		}
		closer := byte(']')
		if c == '{' {
			closer = '}'
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1
		}
		for {
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return -1
				}
				if i = validString(b, i); i < 0 {
					return -1
				}
				if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
					return -1
				}
				i = skipSpace(b, i+1)
			}
			if i = validValue(b, i, depth+1); i < 0 {
				return -1
			}
			i = skipSpace(b, i)
			switch {
			case i < len(b) && b[i] == ',':
				i = skipSpace(b, i+1)
			case i < len(b) && b[i] == closer:
				return i + 1
			default:
				return -1
			}
		}
	}
	return -1
}

// validString returns the index after the JSON string at i.
func validString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return -1
				}
				for _, h := range b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

// validNumber returns the index after the JSON number at i: -?(0|[1-9]
// [0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	digits := func(i int) int {
		j := i
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		return j
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

// literal returns the index after word at i, -1 when b holds no such word
// there.
func literal(b []byte, i int, word string) int {
	if !bytes.HasPrefix(b[i:], []byte(word)) {
		return -1
	}
	return i + len(word)
}
