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
func parseHeartbeatSlow(b []byte) (model.Heartbeat, error) {
	var hb model.Heartbeat
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
		case "team":
			hb.Team, err = jsonString(raw)
		case "task_id":
			hb.TaskID, err = jsonStringOrNumber(raw)
		case "worktree":
			hb.Worktree, err = jsonString(raw)
		default:
			if hb.Extra == nil {
				hb.Extra = map[string]json.RawMessage{}
			}
			hb.Extra[name] = raw
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

// heartbeatFast holds exactly the known fields: a heartbeat with nothing
// else decodes in one pass without the generic map.
type heartbeatFast struct {
	PID             json.Number     `json:"pid"`
	ParentHeartbeat *string         `json:"parent_heartbeat"` // nil: absent or null
	Role            string          `json:"role"`
	Started         float64         `json:"started"`
	Status          string          `json:"status"`
	Team            string          `json:"team"`
	TaskID          json.RawMessage `json:"task_id"`
	Worktree        string          `json:"worktree"`
}

// parseHeartbeatFast decodes the common case, a heartbeat with only the
// known keys; ok is false for anything else (extra fields, wrong types, odd
// pids), which the field-by-field path then parses or describes.
func parseHeartbeatFast(b []byte) (model.Heartbeat, bool) {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' || !topKeys(b, isHeartbeatKey) {
		return model.Heartbeat{}, false
	}
	var f heartbeatFast
	if err := json.Unmarshal(b, &f); err != nil {
		return model.Heartbeat{}, false
	}
	pid, err := strconv.Atoi(string(f.PID))
	if f.PID == "" {
		pid, err = 0, nil
	}
	if err != nil || pid < 0 || pid > math.MaxInt32 || len(f.TaskID) > 0 && f.TaskID[0] != '"' && !isNull(f.TaskID) {
		return model.Heartbeat{}, false
	}
	hb := model.Heartbeat{PID: pid, Role: f.Role, Started: f.Started, Status: f.Status, Team: f.Team, Worktree: f.Worktree}
	if f.ParentHeartbeat != nil {
		hb.ParentHeartbeat, hb.HasParentField = *f.ParentHeartbeat, true
	}
	if len(f.TaskID) > 0 && !isNull(f.TaskID) {
		if err := json.Unmarshal(f.TaskID, &hb.TaskID); err != nil {
			return model.Heartbeat{}, false
		}
	}
	return hb, true
}

// topKeys reports whether every key of the top-level object in b is
// unescaped and accepted by ok. encoding/json matches struct fields
// case-insensitively and skips unknown ones, while the contract's keys are
// exact and a heartbeat keeps unknown ones in Extra: only input whose keys
// pass may take a struct-decoding fast path and still agree with the exact
// field-by-field parse. Values (paths with capitals) do not matter.
func topKeys(b []byte, ok func(key []byte) bool) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			start, escaped := i+1, false
			j := start
			for ; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					escaped = true
					j++
				}
			}
			if j >= len(b) {
				return false // unterminated: let the exact path describe it
			}
			k := j + 1
			for k < len(b) && (b[k] == ' ' || b[k] == '\t' || b[k] == '\r' || b[k] == '\n') {
				k++
			}
			if depth == 1 && k < len(b) && b[k] == ':' {
				if escaped || !ok(b[start:j]) {
					return false
				}
			}
			i = j
		}
	}
	return true
}

func isLowerASCII(key []byte) bool {
	for _, c := range key {
		if c >= 'A' && c <= 'Z' || c >= 0x80 {
			return false
		}
	}
	return true
}

func isHeartbeatKey(key []byte) bool {
	switch string(key) {
	case "pid", "parent_heartbeat", "role", "started", "status", "team", "task_id", "worktree":
		return true
	}
	return false
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
			lines = append(lines, parseRegistryLine(n, full, err != nil))
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

// parseRegistryLine parses one line; raw may still end with its newline.
func parseRegistryLine(n int, raw []byte, torn bool) model.RegistryLine {
	raw = bytes.TrimSuffix(raw, []byte{'\n'})
	line := model.RegistryLine{Number: n, Torn: torn}
	if len(raw) > MaxRegistryLine {
		line.Raw = bytes.Clone(raw[:MaxRegistryLine])
		line.Err = fmt.Sprintf("line longer than %d KiB", MaxRegistryLine>>10)
		return line
	}
	line.Raw = bytes.Clone(raw)
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
	line.Entry = &entry
	return line
}

// childEntryFast decodes a well-formed line without the generic map; any
// error falls back to the field-by-field path for a precise message.
type childEntryFast struct {
	Heartbeat string          `json:"heartbeat"`
	Team      string          `json:"team"`
	TaskID    json.RawMessage `json:"task_id"`
	Status    string          `json:"status"`
	Worktree  string          `json:"worktree"`
}

func parseChildEntry(b []byte) (model.ChildEntry, error) {
	if b[0] == '{' && topKeys(b, isLowerASCII) {
		var f childEntryFast
		if err := json.Unmarshal(b, &f); err == nil && f.Heartbeat != "" {
			e := model.ChildEntry{Heartbeat: f.Heartbeat, Team: f.Team, Status: f.Status, Worktree: f.Worktree}
			if len(f.TaskID) > 0 && !isNull(f.TaskID) {
				id, err := jsonStringOrNumber(f.TaskID)
				if err == nil {
					e.TaskID = &id
					return e, nil
				}
			} else {
				return e, nil
			}
		}
	}
	return parseChildEntrySlow(b)
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

// ParseCfa parses a `.cfa-state.json`.
func ParseCfa(b []byte) (model.CfaState, error) {
	var c model.CfaState
	if len(bytes.TrimSpace(b)) == 0 {
		return c, errEmpty
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return model.CfaState{}, describeJSONError(err)
	}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return model.CfaState{}, errors.New("not a JSON object: null")
	}
	return c, nil
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
