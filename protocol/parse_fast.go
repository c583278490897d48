package protocol

// The fast reading of the formats a scan reads for nearly every node
// (heartbeats, registry lines, CfA states): SPEC §8's cold scan. encoding/json
// was a seventh of the CPU of `--once --json`, a map or reflection and a
// copy for every value; this reads the usual document once, through
// jsonflat.go, and by the format's own field table (fields.go). It answers
// only what it is sure of: anything else (an escaped string, an odd number,
// a key given twice) gives the document up to the plain reading, which
// defines the format. fuzz_test.go and parse_fast_test.go hold the two equal.

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// unknownKeys is what the fast reading does with a key its table lacks.
type unknownKeys uint8

const (
	// refuseUnknown gives the document up: the plain reading keeps the
	// key (a heartbeat's Extra).
	refuseUnknown unknownKeys = iota
	// skipUnknown skips it, as the plain reading does (a registry line).
	skipUnknown
	// skipUnfoldedUnknown skips it unless encoding/json would match it to
	// a row whatever its case (CfA, read plain into a struct); a key not
	// all ASCII is given up too.
	skipUnfoldedUnknown
)

// readFast is the fast reading of the one JSON object b holds: each
// member the table names, once, decoded by its kind into vals (present
// has its bit), as readPlain decodes it. ok is false for anything the
// plain reading must read.
func readFast(b []byte, table []fieldSpec, unknown unknownKeys, vals []fieldValue) (present uint32, ok bool) {
	o := openObject(b)
	for {
		key, v, more := o.next()
		if !more {
			break
		}
		i := fieldIndex(table, key)
		if i < 0 {
			if unknown == refuseUnknown || unknown == skipUnfoldedUnknown && foldsToRow(table, key) {
				return 0, false
			}
			continue
		}
		if present&(1<<i) != 0 {
			return 0, false // given twice: the plain reading says which counts
		}
		if !table[i].kind.fast(v, &vals[i]) {
			return 0, false
		}
		present |= 1 << i
	}
	return present, o.done()
}

// foldsToRow reports whether encoding/json might match key to one of the
// rows: in any case, or (a key not all ASCII) by Unicode's folding.
func foldsToRow(table []fieldSpec, key []byte) bool {
	if !isASCII(key) {
		return true
	}
	for i := range table {
		if strings.EqualFold(string(key), table[i].name) {
			return true
		}
	}
	return false
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// fast decodes v into dst as k's plain reading does; false when it
// cannot be sure.
func (k fieldKind) fast(v flatValue, dst *fieldValue) bool {
	if v.kind == kindNull {
		dst.null = true
		return true
	}
	str := v.kind == kindString && !v.escaped
	switch k {
	case text:
		if !str {
			return false
		}
		dst.text = word(v.raw)
		return true
	case id:
		if !str && v.kind != kindNumber {
			return false
		}
		dst.text = string(v.raw) // a number as written
		return true
	case pid, integer:
		if v.kind != kindNumber || !isInteger(v.raw) {
			return false
		}
		n, err := strconv.Atoi(string(v.raw)) // an int's range, or an error
		dst.n = n
		return err == nil && (k == integer || n >= 0 && n <= math.MaxInt32)
	case number:
		if v.kind != kindNumber {
			return false
		}
		f, err := strconv.ParseFloat(string(v.raw), 64)
		dst.f = f
		return err == nil
	case list:
		dst.raw = v.raw
		return v.kind == kindArray
	}
	return false
}

// readCfaFast is the fast reading of a CfA state into f: its rows kept as
// encoding/json keeps them in cfaFile, the history only when keepHistory.
func readCfaFast(b []byte, keepHistory bool, f *cfaFile) (present uint32, ok bool) {
	var vals [cfaRows]fieldValue
	if present, ok = readFast(b, cfaFields[:], skipUnfoldedUnknown, vals[:]); !ok {
		return 0, false
	}
	*f = cfaFile{
		State:          vals[cfaState].text,
		BacktrackCount: vals[cfaBacktracks].n,
		TaskID:         vals[cfaTaskID].text,
		Phase:          vals[cfaPhase].text,
		Actor:          vals[cfaActor].text,
		ParentID:       vals[cfaParentID].text,
		TeamID:         vals[cfaTeamID].text,
		Depth:          vals[cfaDepth].n,
	}
	if h := vals[cfaHistory]; keepHistory && !h.null && h.raw != nil {
		f.History, ok = splitArray(h.raw)
	}
	return present, ok
}

// splitArray is each element of the JSON array text arr, verbatim, as
// []json.RawMessage decodes it (`[]` gives an empty, non-nil list); the
// elements share one copy of the array.
func splitArray(arr []byte) ([]json.RawMessage, bool) {
	arr = bytes.Clone(arr)
	o := flatObject{b: arr, i: 1}
	out := []json.RawMessage{}
	o.space()
	if o.i < len(arr) && arr[o.i] == ']' {
		return out, true
	}
	for {
		start := o.i
		if _, ok := o.value(1); !ok {
			return nil, false
		}
		out = append(out, json.RawMessage(arr[start:o.i:o.i]))
		o.space()
		if o.i >= len(arr) {
			return nil, false
		}
		switch arr[o.i] {
		case ',':
			o.i++
			o.space()
		case ']':
			return out, true
		default:
			return nil, false
		}
	}
}
