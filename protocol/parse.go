package protocol

// The parsers of the on-disk contract (SPEC §1), for every reader of it.
// They take bytes (ReadRegistry a reader) and return values or an error
// that names the field at fault; they never panic on any input (each has a
// fuzz test).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dispatchtop/dispatchtop/model"
)

// MaxRegistryLine caps one `.children` line; a longer line is kept truncated
// and marked unparseable (the contract promises lines under 4 KiB).
const MaxRegistryLine = 64 << 10

// errEmpty is the error of an empty single-document file.
var errEmpty = errors.New("empty file")

// ParseHeartbeat parses a `.heartbeat`. Unknown fields are kept verbatim in
// Extra; null is accepted for every field and means "not set". A document
// that is not a JSON object is an error and gives a zero heartbeat. A known
// field of the wrong type (`"pid": "abc"`), or a negative pid, is left zero
// and named in a *BadFieldsError, returned beside a heartbeat that holds
// every other field: one bad field must not hide the status, role and parent
// that were written correctly (SPEC §3 `unreadable`: the state comes from
// what could be read), and no negative pid ever reaches the probe or the
// kill path.
func ParseHeartbeat(b []byte) (model.Heartbeat, error) {
	var hb model.Heartbeat
	if len(bytes.TrimSpace(b)) == 0 {
		return hb, errEmpty
	}
	if hb, ok := parseHeartbeatFast(b); ok {
		return hb, nil
	}
	return parseHeartbeatSlow(b)
}

// BadFieldsError names the heartbeat fields that could not be read, in name
// order; the heartbeat returned with it holds the others.
type BadFieldsError struct {
	Fields []error // each says `field "name": why`
}

func (e *BadFieldsError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Error()
	}
	return strings.Join(parts, "; ")
}

// parseHeartbeatSlow parses field by field: unknown fields go to Extra and a
// field at fault is zeroed and named in a *BadFieldsError.
func parseHeartbeatSlow(b []byte) (hb model.Heartbeat, err error) {
	var opt model.HeartbeatOptional
	defer func() { hb.SetOptional(opt) }() // on every return: the fields read count
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return hb, fmt.Errorf("not a JSON object: %w", err)
	}
	if fields == nil { // the document was `null`
		return hb, errors.New("not a JSON object: null")
	}
	var bad []string
	for name, raw := range fields {
		var err error
		switch name {
		case "pid":
			hb.PID, err = jsonInt(raw)
			if err == nil && hb.PID < 0 {
				err = fmt.Errorf("negative pid %d", hb.PID)
				hb.PID = 0
			}
		case "parent_heartbeat":
			hb.ParentHeartbeat, err = jsonString(raw)
			hb.HasParentField = err == nil && !isNull(raw)
		case "role":
			hb.Role, err = jsonString(raw)
		case "started":
			hb.Started, err = jsonFloat(raw)
		case "status":
			hb.Status, err = jsonString(raw)
			hb.HasStatusField = err == nil && !isNull(raw)
		case "team":
			opt.Team, err = jsonString(raw)
		case "task_id":
			opt.TaskID, err = jsonStringOrNumber(raw)
		case "worktree":
			opt.Worktree, err = jsonString(raw)
		default:
			if opt.Extra == nil {
				opt.Extra = map[string]json.RawMessage{}
			}
			opt.Extra[name] = raw
		}
		if err != nil {
			bad = append(bad, fmt.Sprintf("field %q: %s", name, err))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad) // map order is random; the message must not be
		e := &BadFieldsError{Fields: make([]error, len(bad))}
		for i, m := range bad {
			e.Fields[i] = errors.New(m)
		}
		return hb, e
	}
	return hb, nil
}

// parseHeartbeatFast reads the common case, a heartbeat with only the
// known keys, each of its usual type; ok is false for anything else (extra
// fields, wrong types, odd pids, escaped strings, a key given twice), which
// the field-by-field path then parses or describes.
func parseHeartbeatFast(b []byte) (model.Heartbeat, bool) {
	var hb model.Heartbeat
	var opt model.HeartbeatOptional
	var seen uint8
	o := openObject(b)
	for {
		key, v, ok := o.next()
		if !ok {
			break
		}
		var bit uint8
		switch string(key) {
		case "pid":
			bit = 1 << 0
			switch {
			case v.kind == kindNull:
				hb.PID = 0
			case v.kind == kindNumber && isInteger(v.raw):
				pid, err := strconv.Atoi(string(v.raw))
				if err != nil || pid < 0 || pid > math.MaxInt32 {
					return model.Heartbeat{}, false
				}
				hb.PID = pid
			default:
				return model.Heartbeat{}, false
			}
		case "parent_heartbeat":
			bit = 1 << 1
			switch {
			case v.kind == kindNull:
				hb.ParentHeartbeat, hb.HasParentField = "", false
			case v.kind == kindString && !v.escaped:
				hb.ParentHeartbeat, hb.HasParentField = string(v.raw), true
			default:
				return model.Heartbeat{}, false
			}
		case "started":
			bit = 1 << 2
			switch v.kind {
			case kindNull:
				hb.Started = 0
			case kindNumber:
				f, err := strconv.ParseFloat(string(v.raw), 64)
				if err != nil {
					return model.Heartbeat{}, false
				}
				hb.Started = f
			default:
				return model.Heartbeat{}, false
			}
		case "task_id":
			bit = 1 << 3
			switch {
			case v.kind == kindNull:
				opt.TaskID = ""
			case v.kind == kindString && !v.escaped, v.kind == kindNumber:
				opt.TaskID = string(v.raw) // a number is kept as written
			default:
				return model.Heartbeat{}, false
			}
		case "role":
			bit = 1 << 4
			ok = flatString(v, &hb.Role)
		case "status":
			bit = 1 << 5
			ok = flatString(v, &hb.Status)
			hb.HasStatusField = v.kind == kindString
		case "team":
			bit = 1 << 6
			ok = flatString(v, &opt.Team)
		case "worktree":
			bit = 1 << 7
			ok = flatString(v, &opt.Worktree)
		default:
			return model.Heartbeat{}, false // kept in Extra by the exact path
		}
		if !ok || seen&bit != 0 {
			return model.Heartbeat{}, false
		}
		seen |= bit
	}
	if !o.done() {
		return model.Heartbeat{}, false
	}
	hb.SetOptional(opt)
	return hb, true
}

// flatString stores a string or null member into dst (null leaves ""), the
// usual words shared; false for any other value.
func flatString(v flatValue, dst *string) bool {
	switch {
	case v.kind == kindNull:
		*dst = ""
	case v.kind == kindString && !v.escaped:
		*dst = word(v.raw)
	default:
		return false
	}
	return true
}

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
	// The entry and its task id in one allocation.
	parsed := new(struct {
		entry  model.ChildEntry
		taskID string
	})
	entry, ok := parseChildEntryFast(body, &parsed.taskID)
	if !ok {
		var err error
		if entry, err = parseChildEntrySlow(body); err != nil {
			line.Err = err.Error()
			return line
		}
	}
	parsed.entry = entry
	line.Entry = &parsed.entry
	return line
}

// parseChildEntryFast reads a well-formed line: the known keys of their
// usual types, each once, others skipped as the exact path skips them;
// ok is false for anything else, which the exact path parses or describes.
// A task id is kept in *taskID, which the entry's TaskID then points to.
func parseChildEntryFast(b []byte, taskID *string) (model.ChildEntry, bool) {
	var e model.ChildEntry
	var seen uint8
	o := openObject(b)
	for {
		key, v, ok := o.next()
		if !ok {
			break
		}
		var bit uint8
		switch string(key) {
		case "heartbeat":
			bit = 1 << 0
			if v.kind != kindString || v.escaped {
				return model.ChildEntry{}, false
			}
			e.Heartbeat = string(v.raw)
		case "team":
			bit = 1 << 1
			ok = flatString(v, &e.Team)
		case "status":
			bit = 1 << 2
			ok = flatString(v, &e.Status)
		case "worktree":
			bit = 1 << 3
			ok = flatString(v, &e.Worktree)
		case "task_id":
			bit = 1 << 4
			switch {
			case v.kind == kindNull:
				e.TaskID = nil
			case v.kind == kindString && !v.escaped, v.kind == kindNumber:
				*taskID = string(v.raw) // a number is kept as written
				e.TaskID = taskID
			default:
				return model.ChildEntry{}, false
			}
		default:
			continue // not the contract's: the exact path skips it too
		}
		if !ok || seen&bit != 0 {
			return model.ChildEntry{}, false
		}
		seen |= bit
	}
	if !o.done() || e.Heartbeat == "" {
		return model.ChildEntry{}, false
	}
	return e, true
}

func parseChildEntrySlow(b []byte) (model.ChildEntry, error) {
	var e model.ChildEntry
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return e, fmt.Errorf("not a JSON object: %w", err)
	}
	if fields == nil {
		return e, errors.New("not a JSON object: null")
	}
	for name, raw := range fields {
		var err error
		switch name {
		case "heartbeat":
			e.Heartbeat, err = jsonString(raw)
		case "team":
			e.Team, err = jsonString(raw)
		case "status":
			e.Status, err = jsonString(raw)
		case "worktree":
			e.Worktree, err = jsonString(raw)
		case "task_id":
			if !isNull(raw) {
				var s string
				s, err = jsonStringOrNumber(raw)
				e.TaskID = &s
			}
		}
		if err != nil {
			return model.ChildEntry{}, fmt.Errorf("field %q: %w", name, err)
		}
	}
	if e.Heartbeat == "" {
		return model.ChildEntry{}, errors.New(`field "heartbeat": missing or empty`)
	}
	return e, nil
}

// ParseCfa parses a `.cfa-state.json`, its history kept.
func ParseCfa(b []byte) (model.CfaState, error) {
	c, err := ParseCfaState(b, true)
	if err != nil {
		return model.CfaState{}, err
	}
	return *c, nil
}

// ParseCfaState is ParseCfa, its history kept only when keepHistory (a scan
// that keeps no file bytes keeps none), in one allocation with its detail
// when it has one: a scan reads one for nearly every node.
func ParseCfaState(b []byte, keepHistory bool) (*model.CfaState, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errEmpty
	}
	if c, d, hasDetail, ok := parseCfaFast(b, keepHistory); ok {
		if !hasDetail {
			p := new(model.CfaState)
			*p = c
			return p, nil
		}
		both := new(struct {
			c model.CfaState
			d model.CfaDetail
		})
		both.c, both.d = c, d
		both.c.CfaDetail = &both.d
		return &both.c, nil
	}
	c, err := parseCfaSlow(b)
	if err != nil {
		return nil, err
	}
	if !keepHistory && c.CfaDetail != nil {
		if d := *c.CfaDetail; d.Phase == "" && d.Actor == "" && d.ParentID == "" && d.TeamID == "" && d.Depth == 0 {
			c.CfaDetail = nil // the history alone made it
		} else {
			c.History = nil
		}
	}
	return &c, nil
}

// parseCfaSlow is encoding/json's reading, and its errors. It reads the
// document's fields flat, as the file has them, into a struct named as
// model.CfaState: encoding/json's errors name the field and its struct
// (`field "history"`, "Go struct field CfaState.history"), and the problem
// a node shows must not name where this program keeps it.
func parseCfaSlow(b []byte) (model.CfaState, error) {
	type CfaState struct {
		State          string            `json:"state"`
		History        []json.RawMessage `json:"history"`
		BacktrackCount int               `json:"backtrack_count"`
		TaskID         string            `json:"task_id"`
		Phase          string            `json:"phase,omitempty"`
		Actor          string            `json:"actor,omitempty"`
		ParentID       string            `json:"parent_id,omitempty"`
		TeamID         string            `json:"team_id,omitempty"`
		Depth          int               `json:"depth,omitempty"`
	}
	var f CfaState
	if err := json.Unmarshal(b, &f); err != nil {
		return model.CfaState{}, describeJSONError(err)
	}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return model.CfaState{}, errors.New("not a JSON object: null")
	}
	c := model.CfaState{State: f.State, BacktrackCount: f.BacktrackCount, TaskID: f.TaskID}
	d := model.CfaDetail{History: f.History, Phase: f.Phase, Actor: f.Actor, ParentID: f.ParentID, TeamID: f.TeamID, Depth: f.Depth}
	if d.History != nil || d.Phase != "" || d.Actor != "" || d.ParentID != "" || d.TeamID != "" || d.Depth != 0 {
		c.CfaDetail = &d
	}
	return c, nil
}

// cfaKeys are the keys of a CfA state, as model.CfaState names them.
var cfaKeys = [...]string{"state", "history", "backtrack_count", "task_id", "phase", "actor", "parent_id", "team_id", "depth"}

// parseCfaFast reads what json.Unmarshal into a model.CfaState reads, for
// the usual document: the known keys of their usual types, each once, and
// keys that match none of them in any case (encoding/json matches a key to
// a field whatever its case); ok is false for anything else, which
// encoding/json then decodes or describes. Its detail is returned apart,
// for the caller to allocate when hasDetail (the file names one of its
// keys: encoding/json makes it then); without keepHistory the history is
// checked but not kept, and makes no detail.
func parseCfaFast(b []byte, keepHistory bool) (c model.CfaState, d model.CfaDetail, hasDetail, ok bool) {
	var seen uint16
	o := openObject(b)
	for {
		key, v, ok := o.next()
		if !ok {
			break
		}
		var bit uint16
		switch string(key) {
		case "state":
			bit = 1 << 0
			ok = flatString(v, &c.State)
		case "history":
			bit = 1 << 1
			switch v.kind {
			case kindNull:
				d.History = nil
			case kindArray:
				if keepHistory {
					d.History, ok = flatArray(v.raw)
				} else {
					ok = validArray(v.raw)
				}
			default:
				ok = false
			}
			hasDetail = hasDetail || keepHistory
		case "backtrack_count":
			bit = 1 << 2
			ok = flatInt(v, &c.BacktrackCount)
		case "task_id":
			bit = 1 << 3
			ok = flatString(v, &c.TaskID)
		case "phase":
			bit = 1 << 4
			ok, hasDetail = flatString(v, &d.Phase), true
		case "actor":
			bit = 1 << 5
			ok, hasDetail = flatString(v, &d.Actor), true
		case "parent_id":
			bit = 1 << 6
			ok, hasDetail = flatString(v, &d.ParentID), true
		case "team_id":
			bit = 1 << 7
			ok, hasDetail = flatString(v, &d.TeamID), true
		case "depth":
			bit = 1 << 8
			ok, hasDetail = flatInt(v, &d.Depth), true
		default:
			for _, k := range cfaKeys {
				if !isASCII(key) || strings.EqualFold(string(key), k) {
					return model.CfaState{}, model.CfaDetail{}, false, false
				}
			}
			continue
		}
		if !ok || seen&bit != 0 {
			return model.CfaState{}, model.CfaDetail{}, false, false
		}
		seen |= bit
	}
	if !o.done() {
		return model.CfaState{}, model.CfaDetail{}, false, false
	}
	return c, d, hasDetail, true
}

// flatInt stores an integer or null member into dst (null leaves it);
// false for any other value, or one out of range.
func flatInt(v flatValue, dst *int) bool {
	switch {
	case v.kind == kindNull:
		return true
	case v.kind == kindNumber && isInteger(v.raw):
		n, err := strconv.ParseInt(string(v.raw), 10, 64)
		if err != nil || int64(int(n)) != n {
			return false
		}
		*dst = int(n)
		return true
	}
	return false
}

// validArray reports whether flatArray reads arr, keeping nothing.
func validArray(arr []byte) bool {
	o := flatObject{b: arr, i: 1}
	o.space()
	if o.i < len(arr) && arr[o.i] == ']' {
		return true
	}
	for {
		if _, ok := o.value(1); !ok {
			return false
		}
		o.space()
		if o.i >= len(arr) {
			return false
		}
		switch arr[o.i] {
		case ',':
			o.i++
			o.space()
		case ']':
			return true
		default:
			return false
		}
	}
}

// flatArray is each element of the JSON array text arr, verbatim, as
// []json.RawMessage decodes it (`[]` gives an empty, non-nil list); the
// elements share one copy of the array.
func flatArray(arr []byte) ([]json.RawMessage, bool) {
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

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// ParseRetryCount parses a `.retry-count`: a JSON object, or a bare integer
// that means the total.
func ParseRetryCount(b []byte) (model.RetryCount, error) {
	var rc model.RetryCount
	body := bytes.TrimSpace(b)
	if len(body) == 0 {
		return rc, errEmpty
	}
	if body[0] != '{' {
		n, err := jsonInt(body)
		if err != nil {
			return rc, fmt.Errorf("neither an object nor an integer: %w", err)
		}
		if n < 0 {
			return rc, fmt.Errorf("negative count %d", n)
		}
		return model.RetryCount{Total: n}, nil
	}
	if err := json.Unmarshal(body, &rc); err != nil {
		return model.RetryCount{}, describeJSONError(err)
	}
	if rc.Total < 0 {
		return model.RetryCount{}, fmt.Errorf(`field "total": negative count %d`, rc.Total)
	}
	return rc, nil
}

// ParseBlocked parses a blocked sentinel. The caller counts the sentinel as
// present even when this fails (SPEC §1). A non-string context is kept as
// its JSON text.
func ParseBlocked(b []byte) (model.Blocked, error) {
	var bl model.Blocked
	if len(bytes.TrimSpace(b)) == 0 {
		return bl, errEmpty
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return bl, fmt.Errorf("not a JSON object: %w", err)
	}
	if fields == nil {
		return bl, errors.New("not a JSON object: null")
	}
	for name, raw := range fields {
		var err error
		switch name {
		case "question":
			bl.Question, err = jsonString(raw)
		case "kind":
			bl.Kind, err = jsonString(raw)
		case "context":
			if bl.Context, err = jsonString(raw); err != nil {
				bl.Context, err = string(raw), nil
			}
		}
		if err != nil {
			return model.Blocked{}, fmt.Errorf("field %q: %w", name, err)
		}
	}
	return bl, nil
}

// ParseLegacyPID parses a `.running` sentinel: a decimal pid.
func ParseLegacyPID(b []byte) (int, error) {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return 0, errEmpty
	}
	pid, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("not a decimal pid: %q", truncate(s, 40))
	}
	if pid < 0 {
		return 0, fmt.Errorf("negative pid %d", pid)
	}
	return pid, nil
}

// ParseResumePending parses `.resume-pending`. An empty marker is valid: the
// resume that creates it (O_EXCL) may not have written it yet.
func ParseResumePending(b []byte) (model.ResumePending, error) {
	var rp model.ResumePending
	if len(bytes.TrimSpace(b)) == 0 {
		return rp, nil
	}
	if err := json.Unmarshal(b, &rp); err != nil {
		return model.ResumePending{}, describeJSONError(err)
	}
	return rp, nil
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
