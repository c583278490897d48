package remote

// The fast reading of a watch event (SPEC §8: the fleet view under churn).
// encoding/json, by reflection, was half the viewer's CPU while 1 % of
// 200,000 remote nodes changed every second; this reads the shapes serve
// writes (an event's members, a node's, a CfA state, retries, a list of
// strings) in one pass, by the tables below. It answers only what it is
// sure of: an unknown key (encoding/json would match it in any case), a
// key given twice (the last one wins there), a number it would not read
// the same, a node with problems or extras, makes it give the event up to
// the plain reading, decodeEventPlain, which defines it. A string with an
// escape or invalid UTF-8 is read by encoding/json alone, so both readings
// unquote it alike. fast_watch_test.go and FuzzWatchEventFastEqualsPlain
// hold the two equal.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/dispatchtop/dispatchtop/internal/jsonnum"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
	"github.com/dispatchtop/dispatchtop/serve"
)

// decodeEventPlain is the plain reading of one watch event: the one its
// fast twin is held to.
func decodeEventPlain(b []byte, ev *serve.WatchEvent) error {
	return json.Unmarshal(b, ev)
}

// events reads the events of one line of a stream: the one event it
// holds, fast when it can; when the fast reading gives the line up, every
// value in it as encoding/json's stream decoder reads them (a host may
// send two with no break between, or a line cut short).
func (d *eventDecoder) events(line []byte) ([]*serve.WatchEvent, error) {
	ev := &serve.WatchEvent{}
	if d.fast(line, ev) {
		return []*serve.WatchEvent{ev}, nil
	}
	var evs []*serve.WatchEvent
	dec := json.NewDecoder(bytes.NewReader(line))
	for {
		ev := &serve.WatchEvent{}
		if err := dec.Decode(ev); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// eventDecoder reads the events of one stream; it keeps one copy of the
// short strings events repeat (states, roles, reasons), so that reading
// them allocates nothing. Not safe for concurrent use.
type eventDecoder struct {
	words map[string]string
}

// Bounds of an eventDecoder's words: the fleet's interner keeps the words
// a host's nodes hold; these only spare the decoding its allocations, so
// a host whose reasons never repeat costs a stream little.
const (
	maxDecodedWords   = 512
	maxDecodedWordLen = 64
)

// fast reads b into ev (zero), reporting false when it gives b up.
func (d *eventDecoder) fast(b []byte, ev *serve.WatchEvent) bool {
	r := fastReader{b: b, words: d}
	if !r.eventInto(ev) {
		return false
	}
	r.space()
	return r.i == len(b)
}

// word is the kept copy of the string raw (unescaped, valid) spells.
func (d *eventDecoder) word(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	if len(raw) > maxDecodedWordLen {
		return string(raw)
	}
	if w, ok := d.words[string(raw)]; ok {
		return w
	}
	s := string(raw)
	if len(d.words) < maxDecodedWords {
		if d.words == nil {
			d.words = map[string]string{}
		}
		d.words[s] = s
	}
	return s
}

// fastReader reads JSON at b[i:].
type fastReader struct {
	b     []byte
	i     int
	words *eventDecoder
}

func (r *fastReader) space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// eat steps past c (after white space), reporting whether it was there.
func (r *fastReader) eat(c byte) bool {
	r.space()
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

// null steps past a null, reporting whether one was there.
func (r *fastReader) null() bool {
	r.space()
	if len(r.b)-r.i >= 4 && string(r.b[r.i:r.i+4]) == "null" {
		r.i += 4
		return true
	}
	return false
}

// object reads an object's members, calling member with each key (its
// raw bytes, no escape in them: a key with one is given up); member reads
// the value. seen bits say which of at most 64 known keys came already.
func (r *fastReader) object(member func(key []byte) bool) bool {
	if !r.eat('{') {
		return false
	}
	if r.eat('}') {
		return true
	}
	for {
		r.space()
		key, plain, ok := r.rawString()
		if !ok || !plain || !r.eat(':') {
			return false
		}
		r.space()
		if !member(key) {
			return false
		}
		if r.eat('}') {
			return true
		}
		if !r.eat(',') {
			return false
		}
	}
}

// list reads an array, calling elem for each element; null is false for
// a caller that wants to tell it (nil) from [] (empty).
func (r *fastReader) list(elem func() bool) (null, ok bool) {
	if r.null() {
		return true, true
	}
	if !r.eat('[') {
		return false, false
	}
	if r.eat(']') {
		return false, true
	}
	for {
		r.space()
		if !elem() {
			return false, false
		}
		if r.eat(']') {
			return false, true
		}
		if !r.eat(',') {
			return false, false
		}
	}
}

// rawString steps past the string at r.i: its contents, and plain when
// they hold no escape and are valid UTF-8 (then they are the string).
func (r *fastReader) rawString() (raw []byte, plain, ok bool) {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return nil, false, false
	}
	start := r.i + 1
	// The usual string: up to the next quote, no escape, no control
	// character, ASCII.
	if end := bytes.IndexByte(r.b[start:], '"'); end >= 0 {
		raw = r.b[start : start+end]
		simple := true
		for _, c := range raw {
			if c < 0x20 || c == '\\' || c >= utf8.RuneSelf {
				simple = false
				break
			}
		}
		if simple {
			r.i = start + end + 1
			return raw, true, true
		}
	}
	plain, ascii := true, true
	for i := start; i < len(r.b); i++ {
		switch c := r.b[i]; {
		case c == '"':
			r.i = i + 1
			raw = r.b[start:i]
			if !ascii && !utf8.Valid(raw) {
				plain = false
			}
			return raw, plain, true
		case c == '\\':
			plain = false
			i++ // the escaped byte; encoding/json checks the escape
		case c < 0x20:
			return nil, false, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false, false
}

// str reads a string (null leaves *dst, as encoding/json does).
func (r *fastReader) str(dst *string) bool { return r.strKept(dst, false) }

// word reads a string a node repeats (a state, a role): kept once.
func (r *fastReader) word(dst *string) bool { return r.strKept(dst, true) }

func (r *fastReader) strKept(dst *string, keep bool) bool {
	if r.null() {
		return true
	}
	s, ok := r.stringValue(keep)
	if ok {
		*dst = s
	}
	return ok
}

// stringValue reads a string: kept once when keep and plain, as
// encoding/json unquotes it when not plain.
func (r *fastReader) stringValue(keep bool) (string, bool) {
	start := r.i
	raw, plain, ok := r.rawString()
	if !ok {
		return "", false
	}
	switch {
	case plain && keep:
		return r.words.word(raw), true
	case plain:
		return string(raw), true
	}
	var s string
	if json.Unmarshal(r.b[start:r.i], &s) != nil {
		return "", false
	}
	return s, true
}

// strPtr reads a string or null into a pointer (kept once when keep).
func (r *fastReader) strPtr(dst **string, keep bool) bool {
	if r.null() {
		*dst = nil
		return true
	}
	s, ok := r.stringValue(keep)
	if ok {
		*dst = &s
	}
	return ok
}

// strings reads a list of strings ([] is empty, null is nil).
func (r *fastReader) strings(dst *[]string) bool {
	var out []string
	null, ok := r.list(func() bool {
		s, ok := r.stringValue(false)
		out = append(out, s)
		return ok
	})
	if !ok {
		return false
	}
	if out == nil && !null {
		out = []string{}
	}
	*dst = out
	return true
}

// number steps past a number as JSON's grammar has it, reporting its bytes
// and whether it is an integer (no fraction, no exponent).
func (r *fastReader) number() (num []byte, integer, ok bool) {
	end, integer, ok := jsonnum.Scan(r.b, r.i)
	if !ok {
		return nil, false, false
	}
	num = r.b[r.i:end]
	r.i = end
	return num, integer, true
}

// integer reads an int: one written otherwise (1.0, 1e3) or out of range
// is given up, as encoding/json refuses it.
func (r *fastReader) integer(dst *int) bool {
	if r.null() {
		return true
	}
	num, integer, ok := r.number()
	if !ok || !integer {
		return false
	}
	v, err := strconv.Atoi(string(num))
	if err != nil {
		return false
	}
	*dst = v
	return true
}

// intPtr reads an int or null into a pointer.
func (r *fastReader) intPtr(dst **int) bool {
	if r.null() {
		*dst = nil
		return true
	}
	var v int
	if !r.integer(&v) {
		return false
	}
	*dst = &v
	return true
}

// floatPtr reads a number or null into a pointer: one out of range is
// given up, as encoding/json refuses it.
func (r *fastReader) floatPtr(dst **float64) bool {
	if r.null() {
		*dst = nil
		return true
	}
	num, _, ok := r.number()
	if !ok {
		return false
	}
	v, err := strconv.ParseFloat(string(num), 64)
	if err != nil {
		return false
	}
	*dst = &v
	return true
}

// skip steps past any one value, as the flat reader of the protocol
// does, to depth maxFastDepth (deeper is given up): its bytes are read by
// encoding/json after.
func (r *fastReader) skip(depth int) bool {
	r.space()
	if r.i >= len(r.b) || depth > maxFastDepth {
		return false
	}
	switch c := r.b[r.i]; {
	case c == '"':
		_, _, ok := r.rawString()
		return ok
	case c == '-' || c >= '0' && c <= '9':
		_, _, ok := r.number()
		return ok
	case c == 'n':
		return r.null()
	case c == 't' || c == 'f':
		word := "true"
		if c == 'f' {
			word = "false"
		}
		if len(r.b)-r.i < len(word) || string(r.b[r.i:r.i+len(word)]) != word {
			return false
		}
		r.i += len(word)
		return true
	case c == '{':
		return r.object(func([]byte) bool { return r.skip(depth + 1) })
	case c == '[':
		_, ok := r.list(func() bool { return r.skip(depth + 1) })
		return ok
	}
	return false
}

// countOver is the bytes left of an event past which its list of nodes
// is counted before it is read.
const countOver = 256 << 10

// minNodeBytes is the fewest bytes an estimate of a list's nodes counts
// a node: a hostile first node of a few bytes makes no more room than
// nodes of this size could fill.
const minNodeBytes = 64

// estimateNodes is how many more nodes a list whose first took firstBytes
// holds in the left bytes of its event, if the others are as long. A list
// past countOver is counted instead, so an estimate makes room for at
// most 4,096 nodes (1.5 MB), whatever the stream sends.
func estimateNodes(left, firstBytes int) int {
	return left / max(firstBytes, minNodeBytes)
}

// maxFastDepth bounds the nesting of a value the fast reading skips
// (a head); a deeper one goes to encoding/json.
const maxFastDepth = 64

// The members of an event, a bit each: a key given twice is given up.
const (
	evType = 1 << iota
	evRev
	evHead
	evSessions
	evNodes
	evRemoved
)

// eventInto reads an event's object into ev.
func (r *fastReader) eventInto(ev *serve.WatchEvent) bool {
	var seen uint
	once := func(bit uint) bool {
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	}
	return r.object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return once(evType) && r.word(&ev.Type)
		case "rev":
			return once(evRev) && r.str(&ev.Rev)
		case "head":
			if !once(evHead) {
				return false
			}
			if r.null() {
				return true
			}
			start := r.i
			if !r.skip(0) {
				return false
			}
			// Once an event's, and small: read plain.
			var head report.Document
			if json.Unmarshal(r.b[start:r.i], &head) != nil {
				return false
			}
			ev.Head = &head
			return true
		case "sessions":
			if !once(evSessions) {
				return false
			}
			if r.null() {
				return true
			}
			var ids []string
			if !r.strings(&ids) {
				return false
			}
			ev.Sessions = &ids
			return true
		case "nodes":
			if !once(evNodes) {
				return false
			}
			// A long list (a snapshot's) is counted first: 10,000 nodes
			// grown into by doubling were twice their bytes again in
			// garbage. A diff's few are not worth the second pass.
			count, first := 0, 0
			if len(r.b)-r.i > countOver {
				start := r.i
				if _, ok := r.list(func() bool { count++; return r.skip(0) }); !ok {
					return false
				}
				r.i = start
			}
			var nodes []serve.WatchNode
			if count > 0 {
				nodes = make([]serve.WatchNode, 0, count)
			} else {
				nodes = takeDiffNodes()
			}
			null, ok := r.list(func() bool {
				if len(nodes) == 1 && count == 0 {
					// A diff's list is sized by its first node's bytes
					// (serve's nodes are alike): grown by doubling, a
					// diff of 50 made 127 nodes, 41 % of the bytes its
					// reading allocated.
					nodes = slices.Grow(nodes, estimateNodes(len(r.b)-r.i, r.i-first))
				}
				if len(nodes) == 0 {
					first = r.i
				}
				nodes = append(nodes, serve.WatchNode{})
				return r.nodeInto(&nodes[len(nodes)-1])
			})
			if !ok {
				return false
			}
			if nodes == nil && !null {
				nodes = []serve.WatchNode{}
			}
			ev.Nodes = nodes
			return true
		case "removed":
			return once(evRemoved) && r.strings(&ev.Removed)
		}
		return false
	})
}

// diffNodes holds the lists of nodes of diffs the fleet has applied, for
// the lists of the next ones read (SPEC §8: under churn each host's 17
// diffs a second were a list each, a tenth of what the viewer allocated).
var diffNodes sync.Pool

// maxPooledNodes is the longest list kept: a diff's, not a snapshot's.
const maxPooledNodes = 512

// takeDiffNodes is an empty list of nodes with room, or nil.
func takeDiffNodes() []serve.WatchNode {
	if p, ok := diffNodes.Get().(*[]serve.WatchNode); ok {
		return (*p)[:0]
	}
	return nil
}

// giveDiffNodes hands back the list of an event applied and let go: its
// nodes' strings are dropped, and nothing may read it after.
func giveDiffNodes(nodes []serve.WatchNode) {
	if cap(nodes) == 0 || cap(nodes) > maxPooledNodes {
		return
	}
	clear(nodes)
	nodes = nodes[:0]
	diffNodes.Put(&nodes)
}

// nodeField is the bit of a member of a node the fast reading takes, or
// 0; problems, extra and a node's children other than [] or null are
// given up: serve sends every child as a node of its own, and the rest is
// rare.
func nodeField(key []byte) uint32 {
	switch string(key) {
	case "id":
		return 1 << 0
	case "infra_dir":
		return 1 << 1
	case "source":
		return 1 << 2
	case "heartbeat":
		return 1 << 3
	case "state":
		return 1 << 4
	case "flags":
		return 1 << 5
	case "reason":
		return 1 << 6
	case "action":
		return 1 << 7
	case "role":
		return 1 << 8
	case "team":
		return 1 << 9
	case "task_id":
		return 1 << 10
	case "pid":
		return 1 << 11
	case "started":
		return 1 << 12
	case "status":
		return 1 << 13
	case "beat_age_s":
		return 1 << 14
	case "activity_age_s":
		return 1 << 15
	case "cfa":
		return 1 << 16
	case "retries":
		return 1 << 17
	case "blocked":
		return 1 << 18
	case "parent":
		return 1 << 19
	case "other_parents":
		return 1 << 20
	case "source_fields":
		return 1 << 21
	case "children":
		return 1 << 22
	case "kids":
		return 1 << 23
	}
	return 0
}

// nodeInto reads a node's object into n.
func (r *fastReader) nodeInto(n *serve.WatchNode) bool {
	var seen uint32
	return r.object(func(key []byte) bool {
		bit := nodeField(key)
		ok := bit != 0
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		j := &n.NodeJSON
		switch string(key) {
		case "id":
			return r.str(&j.ID)
		case "infra_dir":
			return r.str(&j.InfraDir)
		case "source":
			return r.word(&j.Source)
		case "heartbeat":
			return r.strPtr(&j.Heartbeat, false)
		case "state":
			return r.word((*string)(&j.State))
		case "flags":
			var fs []model.Flag
			null, ok := r.list(func() bool {
				s, ok := r.stringValue(true)
				fs = append(fs, model.Flag(s))
				return ok
			})
			if !ok {
				return false
			}
			if fs == nil && !null {
				fs = []model.Flag{}
			}
			j.Flags = fs
			return true
		case "reason":
			return r.word(&j.Reason)
		case "action":
			return r.word((*string)(&j.Action))
		case "role":
			return r.word(&j.Role)
		case "team":
			return r.word(&j.Team)
		case "task_id":
			return r.strPtr(&j.TaskID, false)
		case "pid":
			return r.intPtr(&j.PID)
		case "started":
			return r.floatPtr(&j.Started)
		case "status":
			return r.strPtr(&j.Status, true)
		case "beat_age_s":
			return r.floatPtr(&j.BeatAgeS)
		case "activity_age_s":
			return r.floatPtr(&j.ActivityAgeS)
		case "cfa":
			if r.null() {
				j.Cfa = nil
				return true
			}
			var c report.CfaJSON
			var got uint
			if !r.object(func(key []byte) bool {
				switch string(key) {
				case "state":
					got, ok = got|1, got&1 == 0
					return ok && r.word(&c.State)
				case "outcome":
					got, ok = got|2, got&2 == 0
					return ok && r.word(&c.Outcome)
				}
				return false
			}) {
				return false
			}
			j.Cfa = &c
			return true
		case "retries":
			if r.null() {
				return true
			}
			var got uint
			return r.object(func(key []byte) bool {
				switch string(key) {
				case "total":
					got, ok = got|1, got&1 == 0
					return ok && r.integer(&j.Retries.Total)
				case "phase":
					got, ok = got|2, got&2 == 0
					return ok && r.integer(&j.Retries.Phase)
				case "left":
					got, ok = got|4, got&4 == 0
					return ok && r.integer(&j.Retries.Left)
				}
				return false
			})
		case "blocked":
			return r.strPtr(&j.Blocked, false)
		case "parent":
			return r.strPtr(&j.Parent, false)
		case "other_parents":
			return r.strings(&j.OtherParents)
		case "source_fields":
			var fs []report.FieldJSON
			null, ok := r.list(func() bool {
				var f report.FieldJSON
				var got uint
				ok := r.object(func(key []byte) bool {
					switch string(key) {
					case "name":
						got, ok = got|1, got&1 == 0
						return ok && r.word(&f.Name)
					case "value":
						got, ok = got|2, got&2 == 0
						return ok && r.str(&f.Value)
					}
					return false
				})
				fs = append(fs, f)
				return ok
			})
			if !ok {
				return false
			}
			if fs == nil && !null {
				fs = []report.FieldJSON{}
			}
			j.SourceFields = fs
			return true
		case "children":
			if r.null() {
				j.Children = nil
				return true
			}
			if !r.eat('[') || !r.eat(']') {
				return false
			}
			j.Children = []report.NodeJSON{}
			return true
		case "kids":
			return r.strings(&n.Kids)
		}
		return false
	})
}
