package protocol

// The field tables: each JSON format of the contract is one table of its
// fields (the key as the file has it, the kind of value, where the value is
// kept), which both of its readings use. The plain reading (parse_*.go:
// encoding/json, the definition) decodes a member by its kind's plain
// rule; the fast reading (parse_fast.go, through jsonflat.go) decodes the same
// member by the same kind, or gives the document up to the plain reading.
// Both then keep the value through the row's store. A new field is one row.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// errEmpty is the error of an empty single-document file.
var errEmpty = errors.New("empty file")

// fieldKind is what a field's value may be; null is every kind's "not set".
type fieldKind uint8

const (
	// text: a string.
	text fieldKind = iota
	// pid: a non-negative integer that fits a pid (32 bits); 1234.0 is
	// read as 1234, as writers in other languages may write it.
	pid
	// number: any JSON number, as a float64.
	number
	// id: a string or a number, kept as text (a number as it is written).
	id
	// textOrJSON: a string, or any other value kept as its JSON text.
	textOrJSON
	// integer: an int. Only CfA's fields are integers; its plain reading
	// is encoding/json's into its struct, which the table is held to.
	integer
	// list: an array, each element kept verbatim (CfA's history, read
	// plain the same way).
	list
)

// fieldValue is one member's value, decoded by its kind.
type fieldValue struct {
	null bool
	text string  // text, id, textOrJSON
	n    int     // pid, integer
	f    float64 // number
	raw  []byte  // list: the array's text, as the fast reading found it
}

// fieldSpec is one row of a format's table: the key as the file has it and
// the kind of its value. A format numbers its rows with constants, reads
// a document into one fieldValue a row (by either reading), and keeps
// them in its model value in one function both readings share.
type fieldSpec struct {
	name string
	kind fieldKind
}

// fieldIndex is the row of table named key, or -1.
func fieldIndex(table []fieldSpec, key []byte) int {
	for i := range table {
		if table[i].name == string(key) {
			return i
		}
	}
	return -1
}

// fieldError is a member that could not be read.
type fieldError struct {
	name string
	err  error
}

// readPlain is the plain reading of a format read member by member: b
// must be one JSON object (not null); each member the table names is
// decoded by its kind into vals (present has its bit), each that cannot
// be is in bad (in the table's order, its value left unset), and members
// is every member, for what a format keeps of the others.
func readPlain(b []byte, table []fieldSpec, vals []fieldValue) (present uint32, bad []fieldError, members map[string]json.RawMessage, err error) {
	if err := json.Unmarshal(b, &members); err != nil {
		return 0, nil, nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if members == nil { // the document was `null`
		return 0, nil, nil, errors.New("not a JSON object: null")
	}
	for i, f := range table {
		raw, ok := members[f.name]
		if !ok {
			continue
		}
		v, err := f.kind.plain(raw)
		if err != nil {
			bad = append(bad, fieldError{f.name, err})
			continue
		}
		vals[i], present = v, present|1<<i
	}
	return present, bad, members, nil
}

// plain decodes raw as encoding/json reads a value of kind k; the error
// says what was wanted and what was written.
func (k fieldKind) plain(raw json.RawMessage) (fieldValue, error) {
	if isNull(raw) {
		return fieldValue{null: true}, nil
	}
	var v fieldValue
	var err error
	switch k {
	case text:
		v.text, err = jsonString(raw)
	case pid:
		if v.n, err = jsonInt(raw); err == nil && v.n < 0 {
			v.n, err = 0, fmt.Errorf("negative pid %d", v.n)
		}
	case number:
		v.f, err = jsonFloat(raw)
	case id:
		v.text, err = jsonStringOrNumber(raw)
	case textOrJSON:
		if v.text, err = jsonString(raw); err != nil {
			v.text, err = string(raw), nil
		}
	default: // integer, list: encoding/json reads them into the format's struct
		err = fmt.Errorf("no plain reading of kind %d", k)
	}
	return v, err
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

func jsonString(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("want a string, got %s", truncate(string(raw), 40))
	}
	return s, nil
}

// jsonStringOrNumber accepts ids that writers emit as strings or numbers.
func jsonStringOrNumber(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), nil
	}
	return jsonString(raw)
}

func jsonInt(raw []byte) (int, error) {
	if isNull(raw) {
		return 0, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf("want an integer, got %s", truncate(string(raw), 40))
	}
	if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil && i >= math.MinInt32 && i <= math.MaxInt32 {
		return int(i), nil
	}
	// Writers in other languages may emit 1234.0.
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return 0, fmt.Errorf("want an integer, got %s", truncate(n.String(), 40))
	}
	return int(f), nil
}

func jsonFloat(raw json.RawMessage) (float64, error) {
	if isNull(raw) {
		return 0, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, fmt.Errorf("want a number, got %s", truncate(string(raw), 40))
	}
	return f, nil
}

// describeJSONError names the field of a type mismatch.
func describeJSONError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("field %q: want %s, got %s: %w", te.Field, te.Type, te.Value, err)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte %d: %w", se.Offset, err)
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// truncate shortens s for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
