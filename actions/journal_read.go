package actions

// Reading a journal one line at a time (SPEC §4, §8): a journal only
// grows, and a reader holds one line of it, never the file.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// MaxJournalLine is the longest journal line a reader takes: a compaction's
// line carries the registry lines it removed, and a registry is read up to
// protocol.MaxRegistryRead. A longer line is skipped, and said so in a
// problem that names it; it never ends the read.
const MaxJournalLine = protocol.MaxRegistryRead

// journalReadBuffer is what a reader holds for a line of usual length.
const journalReadBuffer = 64 << 10

// JournalReader reads the entries of one journal in the order they were
// appended, one line at a time: what it holds is the line being read.
type JournalReader struct {
	path string
	f    io.Closer
	r    *bufio.Reader
	// end is the journal's size when it was opened: the reader stops
	// there, so that two reads of one journal see the same lines.
	end      int64
	read     int64
	lineNo   int
	long     []byte // a line longer than the buffer, being put together
	maxLine  int
	brief    bool
	node     string
	match    []byte // node as JSON writes it: a line without it is not decoded
	problems []model.Problem
	err      error
}

// JournalReadOptions narrow what a JournalReader returns.
type JournalReadOptions struct {
	// Node, when set, keeps the lines about that node only: a line that
	// does not name it is passed over without being decoded.
	Node string
	// Brief leaves out what only the journal's JSON shows (checks, removed
	// lines, signals): a line is decoded without them.
	Brief bool
	// Until, when positive, ends the read at that offset (a size End
	// returned): a second read of a journal sees the lines the first saw,
	// not those appended since.
	Until int64
	// MaxLine replaces MaxJournalLine (tests).
	MaxLine int
}

// OpenJournal opens the journal of root for reading. A root without a
// journal is a reader with no entries (a nil error); a journal that is not
// a regular file is an error that names it.
func OpenJournal(root string, opts JournalReadOptions) (*JournalReader, error) {
	path := JournalPath(root)
	jr := &JournalReader{path: path, maxLine: opts.MaxLine, brief: opts.Brief}
	if jr.maxLine <= 0 {
		jr.maxLine = MaxJournalLine
	}
	if opts.Node != "" {
		// The node's id as encoding/json writes it, quotes included.
		jr.node = opts.Node
		jr.match, _ = json.Marshal(opts.Node)
	}
	f, st, err := protocol.OpenReader(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return jr, nil
		}
		return nil, fmt.Errorf("read journal: %w", err)
	}
	jr.f, jr.end = f, st.Size
	if opts.Until > 0 && opts.Until < jr.end {
		jr.end = opts.Until
	}
	jr.r = bufio.NewReaderSize(io.LimitReader(f, jr.end), journalReadBuffer)
	return jr, nil
}

// Path is the journal's path.
func (jr *JournalReader) Path() string { return jr.path }

// End is the offset the read ends at: the journal's size when it was
// opened (0 when there is none).
func (jr *JournalReader) End() int64 { return jr.end }

// Next returns the next entry that parses (and names the node, when one
// was asked for); false at the end or on a read error (Err). Torn lines
// are skipped; a line over the cap is skipped with a problem.
func (jr *JournalReader) Next() (JournalEntry, bool) {
	for jr.r != nil && jr.err == nil {
		line, ok := jr.nextLine()
		if !ok {
			break
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 || jr.match != nil && !bytes.Contains(line, jr.match) {
			continue
		}
		j, ok := jr.decode(line)
		if !ok || jr.match != nil && j.Node != jr.node {
			continue
		}
		return j, true
	}
	return JournalEntry{}, false
}

// decode reads one line; false for a line that does not parse (torn by a
// crash mid-append).
func (jr *JournalReader) decode(line []byte) (JournalEntry, bool) {
	if !jr.brief {
		var j JournalEntry
		return j, json.Unmarshal(line, &j) == nil
	}
	var b briefEntry
	if json.Unmarshal(line, &b) != nil {
		return JournalEntry{}, false
	}
	return JournalEntry{Time: b.Time, User: b.User, Host: b.Host, Action: b.Action, Node: b.Node, PID: b.PID,
		Outcome: b.Outcome, Message: b.Message, Force: b.Force, By: b.By}, true
}

// briefEntry is JournalEntry without the lists only the JSON shows.
type briefEntry struct {
	Time    time.Time    `json:"time"`
	User    string       `json:"user"`
	Host    string       `json:"host"`
	Action  model.Action `json:"action"`
	Node    string       `json:"node"`
	PID     int          `json:"pid"`
	Outcome string       `json:"outcome"`
	Message string       `json:"message"`
	Force   bool         `json:"force"`
	By      int          `json:"by"`
}

// nextLine is the next line, its newline dropped; false at the end. A line
// over the cap is read past and recorded as a problem.
func (jr *JournalReader) nextLine() ([]byte, bool) {
	jr.release()
	jr.long = jr.long[:0]
	over := false
	for {
		chunk, err := jr.r.ReadSlice('\n')
		jr.read += int64(len(chunk))
		if !over {
			if len(jr.long)+len(chunk) > jr.maxLine+1 { // +1: its newline
				over = true
				jr.long = jr.long[:0]
			} else if err == bufio.ErrBufferFull || len(jr.long) > 0 {
				jr.long = append(jr.long, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(chunk) == 0 && len(jr.long) == 0 && !over {
			if err != nil && err != io.EOF {
				jr.err = fmt.Errorf("read journal %s: %w", jr.path, err)
			}
			return nil, false
		}
		jr.lineNo++
		if err != nil && err != io.EOF {
			jr.err = fmt.Errorf("read journal %s: %w", jr.path, err)
			return nil, false
		}
		if over {
			jr.problems = append(jr.problems, model.Problem{Path: jr.path,
				Error: fmt.Sprintf("line %d is longer than %d bytes: skipped", jr.lineNo, jr.maxLine)})
			if err == io.EOF {
				return nil, false
			}
			return []byte{}, true
		}
		line := chunk
		if len(jr.long) > 0 {
			line = jr.long
		}
		return bytes.TrimSuffix(line, []byte{'\n'}), true
	}
}

// release lets go of a long line's buffer once the caller is done with
// it: one line of tens of MiB must not stay held for the rest of the read.
func (jr *JournalReader) release() {
	if cap(jr.long) > journalReadBuffer {
		jr.long = nil
	}
}

// Problems are the lines skipped for their length so far.
func (jr *JournalReader) Problems() []model.Problem { return jr.problems }

// Err is the read error that ended Next early, or nil.
func (jr *JournalReader) Err() error { return jr.err }

// Close closes the journal.
func (jr *JournalReader) Close() error {
	if jr.f == nil {
		return nil
	}
	return jr.f.Close()
}
