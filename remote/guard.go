package remote

// What a host may send: the caps on its answer's bytes, nodes, values and
// strings, held while the answer is read, before the decoder has any of it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"
)

// The caps on one host's answer (SPEC §4.2, §8).
const (
	// DefaultMaxBody caps a host's answer, counted decompressed (a gzip
	// bomb meets it as a plain answer does): the document of the largest
	// fleet SPEC §8 budgets, 100,000 nodes, is about 110 MB.
	DefaultMaxBody = 128 << 20
	// DefaultMaxNodes caps the nodes of a host's answer: beyond what
	// DefaultMaxBody holds of real nodes (~1.1 KB each in the document), so
	// it binds only on small ones, whose cost is the decoded node, not its
	// bytes.
	DefaultMaxNodes = 150_000
	// valuesANode caps the values of an answer (array elements and object
	// members, counted by their commas and brackets) at 40 a node of the
	// node cap (a node of the benchmark tree has about 30): what decodes
	// to a value each (a list of a million one-letter strings) is held
	// to what the node cap allows.
	valuesANode = 40
	// maxString caps one string of an answer: every string of a document
	// comes from a file read at most 1 MiB of (SPEC §9), escaped (\u0000
	// is six bytes for one); a longer one is a buffer the decoder would
	// hold whole.
	maxString = 8 << 20
	// maxDepth is the deepest nesting read: encoding/json's own limit.
	maxDepth = 10_000
	// maxKey is as many bytes of a key as can spell "children" or
	// "sessions" (every letter escaped as \uXXXX is 48).
	maxKey = 64
)

// CapError is an answer over one of the caps: the host is marked with it.
type CapError struct {
	What capKind
	Cap  int64 // the cap exceeded
}

// capKind says which cap an answer met.
type capKind uint8

const (
	capBytes capKind = iota
	capNodes
	capValues
	capString
	capWindow
)

func (e *CapError) Error() string {
	switch e.What {
	case capNodes:
		return "the snapshot exceeds the " + thousands(e.Cap) + "-node cap"
	case capValues:
		return "the snapshot exceeds the " + thousands(e.Cap) + "-value cap"
	case capString:
		return "the snapshot has a string over the " + bytesName(e.Cap) + " cap"
	case capWindow:
		return "the watch stream exceeds its cap of " + bytesName(e.Cap) + " a minute"
	}
	return "the snapshot exceeds the " + bytesName(e.Cap) + " cap (counted decompressed)"
}

// bytesName is n in MiB or KiB when it is a whole number of them.
func bytesName(n int64) string {
	switch {
	case n > 0 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n > 0 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + "-byte"
}

// thousands writes n with its thousands separated by commas.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// guard passes an answer through to the decoder, failing the read with a
// CapError once it passes its caps: more bytes, nodes or values, or a
// longer string:
// it follows the JSON's structure as the bytes go by, counting each object
// in a list of nodes (the value of a "sessions" or "children" key, spelled
// as encoding/json would match it), so a node over the cap is never
// decoded. It passes each run of whitespace outside strings on as one
// space: the decoder holds fewer bytes of an indented document, and a
// run of a hundred MiB (a gzip bomb's) costs it nothing, where its search
// for the next token rescans a run from its start at every refill. It
// does not check the JSON: the decoder does. In a stream of events, the
// run after a value at the top level is passed on as one line break, and
// none is passed on inside one: each event is one line.
type guard struct {
	r      io.Reader
	caps   caps
	left   int64 // bytes still allowed
	nodes  int
	values int
	strLen int   // the bytes of the string being read
	err    error // the cap met, returned by every later read

	inString, escaped bool
	space             bool   // the last byte passed on is a space outside strings
	isKey             bool   // the string being read is an object's key
	key               []byte // its bytes so far, up to maxKey
	keyEscaped        bool   // the key holds an escape
	stack             []frame

	// A stream of events (a watch) holds each event to the caps, and all
	// of them to window: at most its bytes a minute.
	events bool
	window windowCap
}

// windowCap bounds the bytes of a stream a minute.
type windowCap struct {
	max   int64
	start time.Time
	used  int64
	now   func() time.Time
}

// take counts n bytes, reporting false past the cap.
func (w *windowCap) take(n int) bool {
	if w.max <= 0 {
		return true
	}
	now := w.now()
	if now.Sub(w.start) >= time.Minute {
		w.start, w.used = now, 0
	}
	w.used += int64(n)
	return w.used <= w.max
}

// newEventGuard guards a stream of JSON values, each held to c, all of
// them to perMinute bytes a minute.
func newEventGuard(r io.Reader, c caps, perMinute int64, now func() time.Time) *guard {
	g := newGuard(r, c)
	g.events = true
	g.window = windowCap{max: perMinute, start: now(), now: now}
	return g
}

// frame is one object or list the scan is in.
type frame struct {
	object  bool
	wantKey bool // an object's next string is a key
	nodeKey bool // an object's last key names a list of nodes
	nodes   bool // a list whose objects are nodes
}

// caps are what a guard holds an answer to.
type caps struct {
	body               int64
	nodes, values, str int
}

// capsOf are the caps of an answer of at most maxBody bytes and maxNodes
// nodes.
func capsOf(maxBody int64, maxNodes int) caps {
	return caps{body: maxBody, nodes: maxNodes, values: valuesANode * maxNodes, str: maxString}
}

func newGuard(r io.Reader, c caps) *guard {
	return &guard{r: r, left: c.body, caps: c}
}

func (g *guard) Read(p []byte) (int, error) {
	for {
		if g.err != nil {
			return 0, g.err
		}
		q := p
		if int64(len(q)) > g.left+1 {
			q = q[:g.left+1] // one byte past the cap says the answer is longer
		}
		n, err := g.r.Read(q)
		if int64(n) > g.left {
			n = int(g.left)
			g.err = &CapError{What: capBytes, Cap: g.caps.body}
		}
		g.left -= int64(n)
		if g.events && !g.window.take(n) && g.err == nil {
			g.err = &CapError{What: capWindow, Cap: g.window.max}
			return 0, g.err
		}
		n = g.scan(q[:n])
		if g.err != nil {
			return n, g.err
		}
		if n > 0 || err != nil || len(p) == 0 {
			return n, err
		}
		// All whitespace, folded into the space already passed on.
	}
}

// quoteOrBackslash is the index of the first '"' or '\\' in b, or -1:
// bytes.IndexAny's, as two searches of one byte (a set of two is made
// anew at each call of IndexAny; most strings hold no backslash).
func quoteOrBackslash(b []byte) int {
	q := bytes.IndexByte(b, '"')
	end := q
	if q < 0 {
		end = len(b)
	}
	if k := bytes.IndexByte(b[:end], '\\'); k >= 0 {
		return k
	}
	return q
}

// stringEnd is quoteOrBackslash, looked for a byte at a time through the
// first bytes: most strings of an event (its keys, states, ids) end
// within them, where a search's call costs more than the loop.
func stringEnd(b []byte) int {
	for i := range min(len(b), 32) {
		if c := b[i]; c == '"' || c == '\\' {
			return i
		}
	}
	if len(b) <= 32 {
		return -1
	}
	if j := quoteOrBackslash(b[32:]); j >= 0 {
		return 32 + j
	}
	return -1
}

// scan follows the structure through b and compacts it in place, each run
// of whitespace outside strings one space; it returns the bytes kept.
func (g *guard) scan(b []byte) int {
	w := 0
	for i := 0; i < len(b) && g.err == nil; i++ {
		if g.inString {
			if g.escaped {
				// b[i] is escaped: \" or \\ is part of the string.
				g.escaped = false
				g.strLen += 2 // with its backslash
				g.keyBytes(b[i : i+1])
				b[w] = b[i]
				w++
				continue
			}
			// Up to the next quote or backslash; a key keeps its bytes.
			j := stringEnd(b[i:])
			k := j
			if k < 0 {
				k = len(b) - i
			}
			if g.strLen += k; g.strLen > g.caps.str {
				g.err = &CapError{What: capString, Cap: int64(g.caps.str)}
				return w
			}
			if g.isKey {
				g.keyBytes(b[i : i+k])
			}
			if j < 0 {
				w += copy(b[w:], b[i:])
				return w
			}
			if w != i { // a run of whitespace folded before: the rest moves
				copy(b[w:], b[i:i+j+1])
			}
			w += j + 1
			i += j
			if b[i] == '\\' {
				g.escaped = true
				g.keyEscaped = g.keyEscaped || g.isKey
				g.keyBytes(b[i : i+1])
				continue
			}
			g.inString = false
			if g.isKey {
				g.endKey()
			}
			continue
		}
		c := b[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			if !g.space {
				b[w] = ' '
				if g.events && len(g.stack) == 0 {
					b[w] = '\n' // between events: the line ends
				}
				w++
				g.space = true
			}
			continue
		case '"':
			g.inString, g.strLen = true, 0
			top := g.top()
			g.isKey = top != nil && top.object && top.wantKey
			g.key, g.keyEscaped = g.key[:0], false
		case '{', '[', ',':
			if g.values++; g.values > g.caps.values {
				g.err = &CapError{What: capValues, Cap: int64(g.caps.values)}
				return w
			}
		}
		switch c {
		case '{':
			if top := g.top(); top != nil && top.nodes {
				if g.nodes++; g.nodes > g.caps.nodes {
					g.err = &CapError{What: capNodes, Cap: int64(g.caps.nodes)}
					return w
				}
			}
			g.push(frame{object: true, wantKey: true})
		case '[':
			top := g.top()
			g.push(frame{nodes: top != nil && top.object && top.nodeKey})
		case '}', ']':
			if len(g.stack) > 0 {
				g.stack = g.stack[:len(g.stack)-1]
				if g.events && len(g.stack) == 0 {
					// An event ends: the next is held to the caps anew.
					g.left, g.nodes, g.values = g.caps.body, 0, 0
				}
			}
		case ',':
			if top := g.top(); top != nil && top.object {
				top.wantKey, top.nodeKey = true, false
			}
		}
		g.space = false
		b[w] = c
		w++
	}
	return w
}

// keyBytes keeps b when the string being read is a key, up to maxKey
// bytes (a longer key names no list of nodes).
func (g *guard) keyBytes(b []byte) {
	if g.isKey && len(g.key) <= maxKey {
		g.key = append(g.key, b[:min(len(b), maxKey+1-len(g.key))]...)
	}
}

// endKey notes whether the key just read names a list of nodes.
func (g *guard) endKey() {
	top := g.top()
	top.wantKey, top.nodeKey = false, false
	key := g.key
	if len(key) > maxKey {
		return
	}
	if g.keyEscaped {
		var s string
		if err := json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &s); err != nil {
			return
		}
		key = []byte(s)
	}
	switch len(key) {
	case len(nodesKey):
		top.nodeKey = bytes.EqualFold(key, nodesKey)
	case len(sessionsKey):
		top.nodeKey = bytes.EqualFold(key, sessionsKey) || bytes.EqualFold(key, childrenKey)
	}
}

// The keys whose lists hold nodes: a document's, and a watch event's.
var sessionsKey, childrenKey, nodesKey = []byte("sessions"), []byte("children"), []byte("nodes")

func (g *guard) top() *frame {
	if len(g.stack) == 0 {
		return nil
	}
	return &g.stack[len(g.stack)-1]
}

func (g *guard) push(f frame) {
	if len(g.stack) >= maxDepth {
		g.err = fmt.Errorf("the snapshot nests deeper than %d levels", maxDepth)
		return
	}
	g.stack = append(g.stack, f)
}
