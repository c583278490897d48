package protocol

// The `.children` registry (SPEC §1): read whole or streamed within a
// budget, one RegistryLine a line, each line's fields, its plain reading
// (the definition) and what an entry keeps of each.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/dispatchtop/dispatchtop/model"
)

// MaxRegistryLine caps one `.children` line; a longer line is kept truncated
// and marked unparseable (the contract promises lines under 4 KiB).
const MaxRegistryLine = 64 << 10

// ParseRegistry parses a whole `.children` file. Every line is kept with its
// raw bytes (CR included, newline excluded); a line that does not parse
// keeps Err; a last line without a newline is Torn (an append in flight).
func ParseRegistry(b []byte) []model.RegistryLine {
	lines, _ := ReadRegistry(bytes.NewReader(b), int64(len(b)), math.MaxInt64)
	return lines
}

// MaxRegistryRead is the budget of one read of a `.children` file: the
// bytes read plus registryLineCost for each line kept. A registry of
// 100,000 lines (SPEC §9) takes about a third of it; a file grown past it
// by garbage is read up to it and the rest is left, with a problem.
const MaxRegistryRead = 64 << 20

// registryLineCost is about what holding one line costs beside its bytes
// (the RegistryLine, its parsed entry or error): a file of a million empty
// lines must not cost a million lines' worth of memory for a few bytes read.
const registryLineCost = 128

// registryBudgetError says where a registry read stopped.
type registryBudgetError struct {
	Lines  int   // lines read before the budget ran out
	Budget int64 // the budget, in bytes
}

func (e *registryBudgetError) Error() string {
	return fmt.Sprintf("read stopped after %d %s at the %d MiB budget: the rest is not read",
		e.Lines, plural(e.Lines, "line", "lines"), e.Budget>>20)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ReadRegistry streams a registry from r, line by line, so a registry of any
// length is read without holding more than one line beyond the result, and
// at most budget bytes are read (see MaxRegistryRead). sizeHint (the file
// size) keeps the buffer small for the usual short registry; longer lines
// are assembled across buffer fills, up to MaxRegistryLine.
func ReadRegistry(r io.Reader, sizeHint, budget int64) ([]model.RegistryLine, error) {
	if sizeHint >= 0 && sizeHint < wholeRegistry {
		// The usual registry is read whole, into one buffer its lines'
		// bytes are then slices of: a copy of each line was an allocation
		// a line on every scan.
		buf := make([]byte, sizeHint+1)
		n, err := io.ReadFull(r, buf)
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return splitRegistry(buf[:n], budget)
		case err == nil: // longer than the hint: read on from here
			r = io.MultiReader(bytes.NewReader(buf), r)
		default:
			r = io.MultiReader(bytes.NewReader(buf[:n]), errReader{err})
		}
	}
	br := bufio.NewReaderSize(r, int(min(max(sizeHint+1, 512), 64<<10)))
	var lines []model.RegistryLine
	var long []byte // accumulates a line longer than the buffer
	var spent int64
	for n := 1; ; {
		if spent > budget {
			return lines, &registryBudgetError{Lines: len(lines), Budget: budget}
		}
		chunk, err := br.ReadSlice('\n')
		spent += int64(len(chunk))
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long) < MaxRegistryLine+1 {
				long = append(long, chunk[:min(len(chunk), MaxRegistryLine+1-len(long))]...)
			}
			continue
		}
		if len(chunk) > 0 || len(long) > 0 {
			full := chunk
			if long != nil {
				if len(long) < MaxRegistryLine+1 {
					long = append(long, chunk[:min(len(chunk), MaxRegistryLine+1-len(long))]...)
				}
				full, long = long, nil
			}
			if spent += registryLineCost; spent > budget {
				return lines, &registryBudgetError{Lines: len(lines), Budget: budget}
			}
			// ReadSlice returns its delimiter exactly when err is nil.
			lines = append(lines, parseRegistryLine(n, full, err != nil, false))
			n++
		}
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return lines, err
		}
	}
}

// wholeRegistry is the size under which a registry is read whole, its
// lines slices of one buffer; a larger one is streamed line by line.
const wholeRegistry = 64 << 10

// errReader fails every read with err: a read error met while reading a
// registry whole is met again, in order, by the streaming read.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// splitRegistry parses a registry read whole, as ReadRegistry's streaming
// loop does (the same budget, the same lines), each line's Raw a slice of
// buf.
func splitRegistry(buf []byte, budget int64) ([]model.RegistryLine, error) {
	var lines []model.RegistryLine // nil when none, as the streaming loop's
	var spent int64
	for n := 1; len(buf) > 0; n++ {
		if spent > budget {
			return lines, &registryBudgetError{Lines: len(lines), Budget: budget}
		}
		chunk, torn := buf, true
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			chunk, torn = buf[:i+1], false
		}
		buf = buf[len(chunk):]
		if spent += int64(len(chunk)) + registryLineCost; spent > budget {
			return lines, &registryBudgetError{Lines: len(lines), Budget: budget}
		}
		if lines == nil {
			// This line and the rest: one a newline, and a torn last one.
			rest := bytes.Count(buf, []byte{'\n'})
			if len(buf) > 0 && buf[len(buf)-1] != '\n' {
				rest++
			}
			lines = make([]model.RegistryLine, 0, 1+rest)
		}
		lines = append(lines, parseRegistryLine(n, chunk[:len(chunk):len(chunk)], torn, true))
	}
	return lines, nil
}

// parseRegistryLine parses one line; raw may still end with its newline.
// Raw is raw itself when shared (a slice of a buffer read for the lines),
// else a copy.
func parseRegistryLine(n int, raw []byte, torn, shared bool) model.RegistryLine {
	raw = bytes.TrimSuffix(raw, []byte{'\n'})
	line := model.RegistryLine{Number: int32(n), Torn: torn}
	if len(raw) > MaxRegistryLine {
		line.Raw = bytes.Clone(raw[:MaxRegistryLine])
		line.Err = fmt.Sprintf("line longer than %d KiB", MaxRegistryLine>>10)
		return line
	}
	line.Raw = raw[:len(raw):len(raw)]
	if !shared {
		line.Raw = bytes.Clone(raw)
	}
	body := bytes.TrimSpace(raw) // tolerates CRLF and stray blanks
	if len(body) == 0 {
		line.Err = "empty line"
		return line
	}
	entry, err := parseChildEntry(body)
	if err != nil {
		line.Err = err.Error()
		return line
	}
	line.Entry = entry
	return line
}

// The fields of a registry line, one row each.
const (
	ceHeartbeat = iota
	ceTeam
	ceStatus
	ceWorktree
	ceTaskID
	ceRows
)

var childEntryFields = [ceRows]fieldSpec{
	ceHeartbeat: {"heartbeat", text},
	ceTeam:      {"team", text},
	ceStatus:    {"status", text},
	ceWorktree:  {"worktree", text},
	ceTaskID:    {"task_id", id},
}

// parseChildEntry parses one line's JSON; a line's own fields only, others
// skipped.
func parseChildEntry(b []byte) (*model.ChildEntry, error) {
	var vals [ceRows]fieldValue
	present, ok := readFast(b, childEntryFields[:], skipUnknown, vals[:])
	if ok && vals[ceHeartbeat].text != "" {
		return childEntryOf(&vals, present), nil
	}
	return parseChildEntryPlain(b)
}

// parseChildEntryPlain is a registry line's definition: encoding/json's
// reading of each field by its row, in the table's order (the first at
// fault is the error), a heartbeat path required.
func parseChildEntryPlain(b []byte) (*model.ChildEntry, error) {
	var vals [ceRows]fieldValue
	present, bad, _, err := readPlain(b, childEntryFields[:], vals[:])
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("field %q: %w", bad[0].name, bad[0].err)
	}
	if vals[ceHeartbeat].text == "" {
		return nil, errors.New(`field "heartbeat": missing or empty`)
	}
	return childEntryOf(&vals, present), nil
}

// childEntryOf keeps what was read of each field, the entry and its task
// id in one allocation: a line is held for every registered node.
func childEntryOf(vals *[ceRows]fieldValue, present uint32) *model.ChildEntry {
	parsed := new(struct {
		entry  model.ChildEntry
		taskID string
	})
	parsed.entry = model.ChildEntry{
		Heartbeat: vals[ceHeartbeat].text,
		Team:      vals[ceTeam].text,
		Status:    vals[ceStatus].text,
		Worktree:  vals[ceWorktree].text,
	}
	if present&(1<<ceTaskID) != 0 && !vals[ceTaskID].null {
		parsed.taskID = vals[ceTaskID].text
		parsed.entry.TaskID = &parsed.taskID
	}
	return &parsed.entry
}
