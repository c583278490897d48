package report

// The streaming writer of the document: what WriteJSON and EncodeDocument
// write is MarshalDocument's bytes (json_reference.go), byte for byte, but
// never held whole. Each session is written as it is walked, one node's
// values at a time (their memory in a nodeArena, json_arena.go; their
// bytes by json_node.go), handed to the writer every spillAt bytes, and
// the sessions are encoded a chunk at a time on every core, written in
// order (SPEC §8: `--once --json` at 10,000 nodes, a store's million rows).
// The one difference: a non-finite float, which encoding/json refuses, is
// written as null.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// WriteJSON writes the document, indented, with a trailing newline. Each
// session is written as it is walked, one node at a time (see
// appendModelNode): at 100,000 nodes a whole document of them held more
// than the forest itself, and a session of a million nodes (one TeaParty
// bus) held its NodeJSON tree and its bytes whole.
func WriteJSON(w io.Writer, snap *model.Snapshot) error {
	doc := documentHead(snap)
	nodes := func(i int) int { return modelNodes(snap.Sessions[i]) }
	return encodeDocument(w, doc, len(snap.Sessions), nodes, func(b []byte, i int, a *nodeArena, sp *spiller) ([]byte, error) {
		b, ok := appendModelNode(b, snap.Sessions[i], snap.GeneratedAt, "    ", a, sp)
		switch {
		case ok:
			return b, nil
		case sp.err != nil:
			return b, sp.err
		}
		return b, encodingError(nodeJSON(snap.Sessions[i], snap.GeneratedAt, nil))
	})
}

// appendModelNode appends n and its subtree as appendNode appends its
// NodeJSON, without building that tree: each node's values are made in the
// arena, written, and dropped (the arena reset) before its children are
// walked. sp takes the bytes as they pass spillAt. ok is false when a
// value cannot be encoded or sp's write failed (sp.err).
func appendModelNode(b []byte, n *model.Node, now time.Time, prefix string, a *nodeArena, sp *spiller) ([]byte, bool) {
	a.reset()
	j := nodeValues(n, now, a)
	in := deeper(prefix)
	b, ok := appendNodeMembers(b, &j, in)
	if !ok {
		return b, false
	}
	if len(n.Children) == 0 {
		b = append(b, "[]"...)
		return appendNodeEnd(b, prefix), true
	}
	b = append(b, "[\n"...)
	for i, c := range n.Children {
		if i > 0 {
			b = append(b, ",\n"...)
		}
		b = append(b, deeper(in)...)
		if b, ok = appendModelNode(b, c, now, deeper(in), a, sp); !ok {
			return b, false
		}
		if b = sp.spill(b); sp.err != nil {
			return b, false
		}
	}
	b = append(b, '\n')
	b = append(b, in...)
	b = append(b, ']')
	return appendNodeEnd(b, prefix), true
}

// spillAt is how many bytes of a session are held before they are
// written.
const spillAt = 256 << 10

// spiller takes the bytes of a session as it is encoded, once they pass
// spillAt: emit writes them (or hands them to the writer) and returns an
// empty buffer to go on in. A nil spiller holds every byte.
type spiller struct {
	emit func(b []byte) ([]byte, error)
	err  error
}

// spill emits b when it holds spillAt bytes, keeping emit's first error.
func (s *spiller) spill(b []byte) []byte {
	if s == nil || s.emit == nil || s.err != nil || len(b) < spillAt {
		return b
	}
	b, s.err = s.emit(b)
	return b
}

// encodingError is encoding/json's error for a node appendNode could not
// encode.
func encodingError(n NodeJSON) error {
	_, err := json.Marshal(n)
	if err == nil {
		err = fmt.Errorf("session %s: not encoded", n.ID)
	}
	return err
}

// EncodeDocument writes doc exactly as an indented json.Encoder would, one
// session at a time, but for a node's non-finite float, which encoding/json
// refuses (failing the whole document) and this writes as null: at 10,000 nodes the whole document is 11 MB, and
// encoding it in one piece held it twice over (compact, then indented) in
// freshly faulted memory, which cost more than the scan itself.
func EncodeDocument(w io.Writer, doc Document) error {
	nodes := func(i int) int { return jsonNodes(&doc.Sessions[i]) }
	return encodeDocument(w, doc, len(doc.Sessions), nodes, func(b []byte, i int, _ *nodeArena, _ *spiller) ([]byte, error) {
		b, ok := appendNode(b, &doc.Sessions[i], "    ")
		if !ok {
			return b, encodingError(doc.Sessions[i])
		}
		return b, nil
	})
}

// sessionWriter appends the list line of session i to b, its values held
// in a, its bytes handed to sp as they pass spillAt.
type sessionWriter func(b []byte, i int, a *nodeArena, sp *spiller) ([]byte, error)

// modelNodes is how many nodes n's subtree holds, n with them.
func modelNodes(n *model.Node) int {
	total := 1
	for _, c := range n.Children {
		total += modelNodes(c)
	}
	return total
}

// jsonNodes is modelNodes of a NodeJSON.
func jsonNodes(n *NodeJSON) int {
	total := 1
	for i := range n.Children {
		total += jsonNodes(&n.Children[i])
	}
	return total
}

// encodeDocument writes doc with the sessions session(0..count-1) writes,
// in place of its own, each holding nodes(i) nodes; session may be called
// from several goroutines at once, each with an arena and a spiller of its
// own.
func encodeDocument(w io.Writer, doc Document, count int, nodes func(i int) int, session sessionWriter) error {
	e := docEncoder{w: bufio.NewWriterSize(w, 64<<10)}
	e.w.WriteString("{\n")
	e.field("schema", doc.Schema)
	e.field("generated_at", doc.GeneratedAt)
	e.field("roots", doc.Roots)
	e.field("root_sources", doc.RootSources)
	e.field("thresholds", doc.Thresholds)
	e.field("pid_check", doc.PidCheck)
	e.field("summary", doc.Summary)
	if count == 0 {
		e.field("sessions", doc.Sessions)
	} else {
		e.w.WriteString(`  "sessions": [` + "\n")
		e.sessions(chunkStarts(count, nodes), session)
		e.w.WriteString("  ],\n")
	}
	e.w.WriteString(`  "problems": `)
	e.value(doc.Problems, "  ")
	e.w.WriteString("\n}\n")
	if e.err != nil {
		return e.err
	}
	return e.w.Flush()
}

// chunkNodes is how many nodes one encoder writes at a time, at the
// least: a chunk is a run of sessions that holds this many (a session
// larger than that is a chunk of its own). Chunks of four sessions each,
// as they were, made writing a forest of small sessions on two cores
// slower than on one: each chunk of a few nodes, handed from its encoder
// to the writer and back, cost more in that handing than in its encoding.
const chunkNodes = 64

// chunkBuffer is the room an encoder's buffer is made with: a part spilled
// at spillAt and the node that took it past. Grown from nothing, the four
// buffers of two encoders were copied on every doubling, and allocated
// three times the bytes they came to hold; memory made and not written
// costs nothing.
const chunkBuffer = spillAt + 64<<10

// chunkStarts are the first sessions of the chunks count sessions are
// written in, each holding nodes(i) nodes, followed by count: chunk k is
// sessions starts[k] to starts[k+1]-1.
func chunkStarts(count int, nodes func(i int) int) []int {
	starts := []int{0}
	held := 0
	for i := range count {
		if held += nodes(i); held >= chunkNodes && i+1 < count {
			starts = append(starts, i+1)
			held = 0
		}
	}
	return append(starts, count)
}

// sessions writes the sessions, each line of the list after the first
// joined by a comma; starts are their chunks' (chunkStarts). They are
// encoded a chunk at a time by an encoder on every core, chunk k by
// encoder k mod n, and written in order: one encoder was a tenth of
// `--once --json`, alone after the parallel scan. A chunk larger than
// spillAt reaches the writer in parts, in order, as it is encoded.
func (e *docEncoder) sessions(starts []int, session sessionWriter) {
	count, chunks := starts[len(starts)-1], len(starts)-1
	if encoders := min(runtime.GOMAXPROCS(0), chunks); encoders > 1 {
		e.sessionsInParallel(starts, encoders, session)
		return
	}
	var a nodeArena
	sp := &spiller{emit: func(b []byte) ([]byte, error) {
		_, err := e.w.Write(b)
		return b[:0], err
	}}
	for k := 0; k < chunks && e.err == nil; k++ {
		e.buf, e.err = appendSessions(e.buf[:0], starts[k], starts[k+1], count, session, &a, sp)
		if e.err == nil {
			_, e.err = e.w.Write(e.buf)
		}
	}
}

// encoded is a chunk's bytes, or a part of them whose next part follows
// (more).
type encoded struct {
	b    []byte
	err  error
	more bool
}

// chunkEncoder encodes every encoders-th chunk from its first, into one of
// its two buffers while the other is written.
type chunkEncoder struct {
	out  chan encoded
	free chan []byte
	stop <-chan struct{}
}

// sessionsInParallel has encoders encoders encode the chunks, chunk c by
// encoder c mod encoders, and writes them in order.
func (e *docEncoder) sessionsInParallel(starts []int, encoders int, session sessionWriter) {
	chunks := len(starts) - 1
	stop := make(chan struct{})
	var wg sync.WaitGroup
	encs := make([]chunkEncoder, encoders)
	for k := range encs {
		encs[k] = chunkEncoder{out: make(chan encoded, 1), free: make(chan []byte, 2), stop: stop}
		encs[k].free <- make([]byte, 0, chunkBuffer)
		encs[k].free <- make([]byte, 0, chunkBuffer)
		wg.Go(func() { encs[k].encode(k, encoders, starts, session) })
	}
	for c := 0; c < chunks && e.err == nil; c++ {
		enc := &encs[c%encoders]
		for {
			got := <-enc.out
			if e.err = got.err; e.err == nil {
				_, e.err = e.w.Write(got.b)
			}
			enc.free <- got.b
			if !got.more || e.err != nil {
				break
			}
		}
	}
	close(stop)
	wg.Wait()
}

// encode encodes chunks first, first+step, ... of the chunks that start
// at starts, until they are done or the writing stopped.
func (c *chunkEncoder) encode(first, step int, starts []int, session sessionWriter) {
	count, chunks := starts[len(starts)-1], len(starts)-1
	var a nodeArena
	sp := &spiller{emit: c.emitPart}
	for k := first; k < chunks; k += step {
		var b []byte
		select {
		case b = <-c.free:
		case <-c.stop:
			return
		}
		b, err := appendSessions(b[:0], starts[k], starts[k+1], count, session, &a, sp)
		if errors.Is(err, errStopped) {
			return
		}
		select {
		case c.out <- encoded{b: b, err: err}:
		case <-c.stop:
			return
		}
	}
}

// emitPart hands a part of a chunk to the writer and goes on in the
// encoder's other buffer.
func (c *chunkEncoder) emitPart(b []byte) ([]byte, error) {
	select {
	case c.out <- encoded{b: b, more: true}:
	case <-c.stop:
		return nil, errStopped
	}
	select {
	case next := <-c.free:
		return next[:0], nil
	case <-c.stop:
		return nil, errStopped
	}
}

// errStopped ends an encoder whose output is no longer written.
var errStopped = errors.New("the document's writing stopped")

// appendSessions appends the list lines of sessions lo to hi-1 of count.
func appendSessions(b []byte, lo, hi, count int, session sessionWriter, a *nodeArena, sp *spiller) ([]byte, error) {
	for i := lo; i < hi; i++ {
		b = append(b, "    "...)
		var err error
		if b, err = session(b, i, a, sp); err != nil {
			return b, err
		}
		if i < count-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	return b, nil
}

// docEncoder writes indented JSON values, keeping the first error.
type docEncoder struct {
	w      *bufio.Writer
	indent bytes.Buffer
	buf    []byte
	err    error
}

// field writes one member of the top-level object, followed by a comma.
func (e *docEncoder) field(name string, v any) {
	e.w.WriteString(`  "` + name + `": `)
	e.value(v, "  ")
	e.w.WriteString(",\n")
}

// value writes v indented by two spaces a level under prefix. The buffers
// are reused from value to value.
func (e *docEncoder) value(v any, prefix string) {
	if e.err != nil {
		return
	}
	compact, err := json.Marshal(v)
	if err != nil {
		e.err = err
		return
	}
	e.indent.Reset()
	if err := json.Indent(&e.indent, compact, prefix, "  "); err != nil {
		e.err = err
		return
	}
	e.w.Write(e.indent.Bytes())
}
