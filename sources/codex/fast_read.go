package codex

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dispatchtop/dispatchtop/sources/internal/sqlitestore"
)

// readFast is readPlain's fast path: the threads and their edges read in
// one query that SQLite answers in one row of two JSON arrays (its JSON
// functions, built in), json_group_array of each thread's json_array of
// its columns as readPlain selects them, and the same of each edge's
// parent, child and status, each in the table's order. A row a thread cost
// the driver a lock and an unlock of the connection a column (SQLite's
// serialized mode): some 5 ms of a read of a thousand threads, where one
// row costs one (SPEC §8, the agents' stores).
//
// The arrays are read by decodeRows, held to encoding/json by a difference
// test and a fuzz test; a text SQLite gives as it is stored, not valid
// UTF-8, is read as the scan reads it, its bytes as they are. ok is false,
// and readPlain reads the store, when the row is too big for SQLite to make
// or cannot be read.
func readFast(snap *sqlitestore.Snapshot, have map[string]bool, edges bool) (ts []*thread, ok bool, err error) {
	rows, err := snap.Query(fastQuery(have, edges))
	if err != nil {
		if sqlitestore.IsTooBig(err) {
			return nil, false, nil
		}
		return nil, false, err
	}
	defer rows.Close()
	var threadsJSON, edgesJSON string
	if rows.Next() {
		err = rows.Scan(&threadsJSON, &edgesJSON)
	}
	if err == nil {
		err = rows.Err()
	}
	if err != nil {
		if sqlitestore.IsTooBig(err) {
			return nil, false, nil
		}
		return nil, false, sqlitestore.Describe(snap.Path, err)
	}
	byID := map[string]*thread{}
	ok = decodeRows(threadsJSON, columnKinds, func(cells []cell) bool {
		t := &thread{}
		for i, c := range columns {
			switch f := c.field(t).(type) {
			case *string:
				*f = cells[i].text
			case *int64:
				*f = cells[i].num
			}
		}
		ts = append(ts, t)
		byID[t.id] = t
		return true
	})
	if !ok {
		return nil, false, nil
	}
	ok = decodeRows(edgesJSON, edgeKinds, func(cells []cell) bool {
		setEdge(byID, cells[0].text, cells[1].text, cells[2].text)
		return true
	})
	if !ok {
		return nil, false, nil
	}
	sortThreads(ts)
	return ts, true, nil
}

// fastQuery is readFast's statement.
func fastQuery(have map[string]bool, edges bool) string {
	edgeRows := `'[]'`
	if edges {
		edgeRows = `(SELECT json_group_array(json_array(IFNULL(CAST(parent_thread_id AS TEXT), ''),
			IFNULL(CAST(child_thread_id AS TEXT), ''), IFNULL(CAST(status AS TEXT), ''))) FROM ` + edgesTable + `)`
	}
	return `SELECT (SELECT json_group_array(json_array(` + sqlitestore.Select(have, sqlColumns) + `)) FROM ` + threadsTable + `), ` + edgeRows
}

// cellKind is what a cell holds: a string or an integer.
type cellKind uint8

const (
	kindText cellKind = iota
	kindInteger
)

// columnKinds are the threads' cells' kinds, of columns' types.
var columnKinds = func() []cellKind {
	out := make([]cellKind, len(columns))
	for i, c := range columns {
		if c.Type == "INTEGER" {
			out[i] = kindInteger
		}
	}
	return out
}()

// edgeKinds are an edge's three texts.
var edgeKinds = []cellKind{kindText, kindText, kindText}

// cell is one value of a row.
type cell struct {
	text string
	num  int64
}

// decodeRows reads s, a JSON array of rows, each an array of len(kinds)
// cells of those kinds (a string, an integer that fits an int64, or null,
// read as "" and 0: what encoding/json gives a cell decoded into a string
// or an int64), calling row with each row's cells. A string without an escape
// is a slice of s. It returns false when s is not such an array, or row
// returned false.
func decodeRows(s string, kinds []cellKind, row func([]cell) bool) bool {
	d := rowDecoder{s: s}
	cells := make([]cell, len(kinds))
	d.space()
	if !d.expect('[') {
		return false
	}
	d.space()
	if d.expect(']') {
		d.space()
		return d.i == len(s)
	}
	for {
		if !d.row(cells, kinds) || !row(cells) {
			return false
		}
		d.space()
		if d.expect(']') {
			d.space()
			return d.i == len(s)
		}
		if !d.expect(',') {
			return false
		}
		d.space()
	}
}

// rowDecoder reads s from i.
type rowDecoder struct {
	s string
	i int
}

func (d *rowDecoder) space() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// expect takes c when it is next.
func (d *rowDecoder) expect(c byte) bool {
	if d.i < len(d.s) && d.s[d.i] == c {
		d.i++
		return true
	}
	return false
}

// row reads one row of len(cells) cells into cells.
func (d *rowDecoder) row(cells []cell, kinds []cellKind) bool {
	if !d.expect('[') {
		return false
	}
	for k := range cells {
		d.space()
		if k > 0 && (!d.expect(',') || !d.spaced()) {
			return false
		}
		cells[k] = cell{}
		if strings.HasPrefix(d.s[d.i:], "null") {
			d.i += len("null")
			continue
		}
		var ok bool
		if kinds[k] == kindText {
			cells[k].text, ok = d.str()
		} else {
			cells[k].num, ok = d.integer()
		}
		if !ok {
			return false
		}
	}
	d.space()
	return d.expect(']')
}

// spaced skips space and says true, for a condition's chain.
func (d *rowDecoder) spaced() bool {
	d.space()
	return true
}

// integer reads a JSON number that is an integer of an int64, as
// encoding/json reads one into an int64: no fraction, no exponent.
func (d *rowDecoder) integer() (int64, bool) {
	neg := d.expect('-')
	if d.i >= len(d.s) || d.s[d.i] < '0' || d.s[d.i] > '9' {
		return 0, false
	}
	// u counts to 1<<63, the magnitude of the least int64.
	const most = uint64(1) << 63
	var u uint64
	if d.s[d.i] == '0' {
		d.i++
	} else {
		for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
			digit := uint64(d.s[d.i] - '0')
			if u > (most-digit)/10 {
				return 0, false
			}
			u = u*10 + digit
			d.i++
		}
	}
	if d.i < len(d.s) {
		switch c := d.s[d.i]; {
		case c == '.' || c == 'e' || c == 'E' || '0' <= c && c <= '9':
			return 0, false // a fraction or an exponent (no int64), or digits after a 0
		}
	}
	if neg {
		return -int64(u), true // 1<<63 wraps to the least int64, as it should
	}
	if u == most {
		return 0, false
	}
	return int64(u), true
}

// str reads a JSON string: a slice of s when it has no escape, else its
// unescaped copy. A byte that is not of valid UTF-8 is kept as it is
// (where encoding/json would put U+FFFD): SQLite gives a stored text's
// bytes as they are, and so does the scan.
func (d *rowDecoder) str() (string, bool) {
	if !d.expect('"') {
		return "", false
	}
	start := d.i
	for d.i < len(d.s) {
		switch c := d.s[d.i]; {
		case c == '"':
			d.i++
			return d.s[start : d.i-1], true
		case c == '\\':
			return d.unescape(start)
		case c < 0x20:
			return "", false
		default:
			d.i++
		}
	}
	return "", false
}

// unescape reads on the string begun at start, at its first escape, as
// encoding/json's unquote does: a \u of a lone surrogate is U+FFFD.
func (d *rowDecoder) unescape(start int) (string, bool) {
	b := make([]byte, 0, d.i-start+16)
	b = append(b, d.s[start:d.i]...)
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			return string(b), true
		case c < 0x20:
			return "", false
		case c != '\\':
			b = append(b, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.s) {
			return "", false
		}
		switch e := d.s[d.i+1]; e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := d.u4()
			if r < 0 {
				return "", false
			}
			d.i += 6
			if utf16.IsSurrogate(r) {
				if r2 := d.u4(); r2 >= 0 {
					if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
						d.i += 6
						b = utf8.AppendRune(b, dec)
						continue
					}
				}
				r = unicode.ReplacementChar
			}
			b = utf8.AppendRune(b, r)
			continue
		default:
			return "", false
		}
		d.i += 2
	}
	return "", false
}

// u4 is the rune of the \uXXXX at i, -1 for none.
func (d *rowDecoder) u4() rune {
	if d.i+6 > len(d.s) || d.s[d.i] != '\\' || d.s[d.i+1] != 'u' {
		return -1
	}
	return hex4(d.s[d.i+2 : d.i+6])
}

// hex4 is the rune of the four hex digits s begins with, -1 for none.
func hex4(s string) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range []byte(s[:4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
