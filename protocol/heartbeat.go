package protocol

// The heartbeat writer: how `wrap` and the demo speak the heartbeat protocol
// (SPEC §1, §7). The file is written whole through `.heartbeat.tmp` +
// rename, and afterwards only its mtime is bumped.

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// HeartbeatWriter owns one node's `.heartbeat`. Write and
// SetExtra must not run concurrently with each other; Beat only touches the
// file's mtime and may run beside them (a beat loop beside the lifecycle).
type HeartbeatWriter struct {
	dir  string
	path string
	hb   model.Heartbeat
}

// NewHeartbeatWriter creates the infra dir (and its parents) and returns a
// writer for its heartbeat. Nothing is written until Write is called.
func NewHeartbeatWriter(infraDir string, hb model.Heartbeat) (*HeartbeatWriter, error) {
	dir, err := filepath.Abs(infraDir)
	if err != nil {
		return nil, fmt.Errorf("heartbeat writer: resolve %s: %w", infraDir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("heartbeat writer: create infra dir: %w", err)
	}
	return &HeartbeatWriter{dir: dir, path: filepath.Join(dir, HeartbeatFile), hb: hb}, nil
}

// Path is the absolute path of the heartbeat file.
func (w *HeartbeatWriter) Path() string { return w.path }

// Dir is the absolute infra dir.
func (w *HeartbeatWriter) Dir() string { return w.dir }

// Heartbeat is the content last written (or about to be).
func (w *HeartbeatWriter) Heartbeat() model.Heartbeat { return w.hb }

// Write sets status, pid and started and writes the heartbeat whole.
func (w *HeartbeatWriter) Write(status string, pid int, started float64) error {
	w.hb.Status, w.hb.PID, w.hb.Started = status, pid, started
	return w.flush()
}

// SetExtra records an extra field (shown under `extra` by readers); it is
// written with the next Write.
func (w *HeartbeatWriter) SetExtra(key string, value any) error {
	raw, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("heartbeat %s: encode %s: %w", w.path, key, err)
	}
	opt := *w.hb.Optional()
	opt.Extra = maps.Clone(opt.Extra) // a copy: the heartbeat given may be shared
	if opt.Extra == nil {
		opt.Extra = map[string]json.RawMessage{}
	}
	opt.Extra[key] = raw
	w.hb.SetOptional(opt)
	return nil
}

// Beat bumps the heartbeat's mtime to now: the steady-state liveness signal.
// The content is not rewritten (readers see a Chmod event, SPEC §1).
func (w *HeartbeatWriter) Beat(now time.Time) error {
	if err := os.Chtimes(w.path, now, now); err != nil {
		return fmt.Errorf("beat %s: %w", w.path, err)
	}
	return nil
}

func (w *HeartbeatWriter) flush() error {
	data, err := EncodeHeartbeat(w.hb)
	if err != nil {
		return fmt.Errorf("heartbeat %s: %w", w.path, err)
	}
	return WriteFileAtomic(w.path, data)
}

// EncodeHeartbeat renders a heartbeat as one JSON object, its Extra fields
// merged in (a named field always wins over an extra of the same name).
func EncodeHeartbeat(hb model.Heartbeat) ([]byte, error) {
	named, err := json.Marshal(hb)
	if err != nil {
		return nil, fmt.Errorf("encode heartbeat: %w", err)
	}
	extra := hb.Optional().Extra
	if len(extra) == 0 {
		return append(named, '\n'), nil
	}
	merged := map[string]json.RawMessage{}
	for k, v := range extra {
		merged[k] = v
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(named, &fields); err != nil {
		return nil, fmt.Errorf("encode heartbeat: %w", err)
	}
	for k, v := range fields {
		merged[k] = v
	}
	out, err := json.Marshal(merged)
	if err != nil {
		return nil, fmt.Errorf("encode heartbeat: %w", err)
	}
	return append(out, '\n'), nil
}

// SetHeartbeatStatus rewrites an existing heartbeat with a new status,
// keeping every other field (unknown ones included) as it was written. It
// is how an agent reports `paused` while its wrapper keeps beating.
func SetHeartbeatStatus(heartbeatPath, status string) error {
	data, err := ReadFile(heartbeatPath, MaxDocumentSize)
	if err != nil {
		return fmt.Errorf("set status: %w", err)
	}
	// Verbatim, not through ParseHeartbeat: every other field must be
	// written back exactly as it was.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return fmt.Errorf("set status: parse %s: %w", heartbeatPath, err)
	}
	if fields == nil {
		return fmt.Errorf("set status: parse %s: not a JSON object: null", heartbeatPath)
	}
	raw, _ := json.Marshal(status)
	fields["status"] = raw
	out, err := json.Marshal(fields)
	if err != nil {
		return fmt.Errorf("set status: encode %s: %w", heartbeatPath, err)
	}
	return WriteFileAtomic(heartbeatPath, append(out, '\n'))
}
