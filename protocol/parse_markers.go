package protocol

// The small files of the contract (SPEC §1, §5.2), each read only when
// present and read plain: `.retry-count`, the blocked sentinel, the legacy
// `.running` pid, `.resume-pending`.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/dispatchtop/dispatchtop/model"
)

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

// The blocked sentinel's fields, one row each.
const (
	blQuestion = iota
	blKind
	blContext
	blRows
)

var blockedFields = [blRows]fieldSpec{
	blQuestion: {"question", text},
	blKind:     {"kind", text},
	blContext:  {"context", textOrJSON},
}

// ParseBlocked parses a blocked sentinel. The caller counts the sentinel as
// present even when this fails (SPEC §1). A non-string context is kept as
// its JSON text. Read only when present, so read plain.
func ParseBlocked(b []byte) (model.Blocked, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return model.Blocked{}, errEmpty
	}
	var vals [blRows]fieldValue
	_, bad, _, err := readPlain(b, blockedFields[:], vals[:])
	if err != nil {
		return model.Blocked{}, err
	}
	if len(bad) > 0 {
		return model.Blocked{}, fmt.Errorf("field %q: %w", bad[0].name, bad[0].err)
	}
	return model.Blocked{Question: vals[blQuestion].text, Kind: vals[blKind].text, Context: vals[blContext].text}, nil
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
