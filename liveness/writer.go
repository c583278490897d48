package liveness

// The heartbeat writer: the one place in liveness that touches files. `wrap`
// and the demo use it to speak the heartbeat protocol (SPEC §1, §7): the
// file is written whole through `.heartbeat.tmp` + rename, and afterwards
// only its mtime is bumped.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// maxRegistryLine keeps a registration append atomic for concurrent readers
// and appenders: SPEC §1 promises lines under 4 KiB.
const maxRegistryLine = 4096

// maxReadSize caps what the writer reads back (a heartbeat, a registry).
const maxReadSize = 1 << 20

// HeartbeatWriter owns one node's `.heartbeat`. Write, SetStatus and
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
	return &HeartbeatWriter{dir: dir, path: filepath.Join(dir, protocol.HeartbeatFile), hb: hb}, nil
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

// SetStatus changes only the status and writes the heartbeat whole.
func (w *HeartbeatWriter) SetStatus(status string) error {
	w.hb.Status = status
	return w.flush()
}

// SetExtra records an extra field (shown under `extra` by readers); it is
// written with the next Write or SetStatus.
func (w *HeartbeatWriter) SetExtra(key string, value any) error {
	raw, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("heartbeat %s: encode %s: %w", w.path, key, err)
	}
	if w.hb.Extra == nil {
		w.hb.Extra = map[string]json.RawMessage{}
	}
	w.hb.Extra[key] = raw
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
	return WriteFileAtomic(w.path, protocol.HeartbeatTempFile, data)
}

// EncodeHeartbeat renders a heartbeat as one JSON object, its Extra fields
// merged in (a named field always wins over an extra of the same name).
func EncodeHeartbeat(hb model.Heartbeat) ([]byte, error) {
	named, err := json.Marshal(hb)
	if err != nil {
		return nil, fmt.Errorf("encode heartbeat: %w", err)
	}
	if len(hb.Extra) == 0 {
		return append(named, '\n'), nil
	}
	merged := map[string]json.RawMessage{}
	for k, v := range hb.Extra {
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

// A temp file whose mtime is older than tmpLeftover belongs to a writer
// that died between create and rename (a live writer writes its data right
// after creating it); a writer waits at most tmpWait for another's temp file.
const (
	tmpLeftover = 10 * time.Second
	tmpWait     = 30 * time.Second
)

// WriteFileAtomic replaces path with data so that a reader sees the old file
// or the new one, never a part: write tmpName (in the same directory), fsync
// it, rename it over path, fsync the directory. The temp file is created
// exclusively, so two writers of the same file (a wrapper finalizing while
// its agent reports `paused`) take turns instead of truncating each other's
// temp file.
func WriteFileAtomic(path, tmpName string, data []byte) error {
	dir := filepath.Dir(path)
	tmp := filepath.Join(dir, tmpName)
	f, err := createExclusive(tmp)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", tmp, werr)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	// The rename is durable only once the directory is synced; a failure
	// here leaves a correct file, so it is not worth failing the write.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

func createExclusive(tmp string) (*os.File, error) {
	deadline := time.Now().Add(tmpWait)
	for {
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, os.ErrExist) {
			return f, err
		}
		// Judge a leftover by the file's age, never by how long we waited:
		// under load a live writer's fsync can outlast any wait, and
		// removing its temp file would let it rename someone else's.
		if st, err := os.Stat(tmp); err == nil && time.Since(st.ModTime()) > tmpLeftover {
			os.Remove(tmp)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: another writer has held it for %s", tmp, tmpWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// SetHeartbeatStatus rewrites an existing heartbeat with a new status,
// keeping every other field (unknown ones included) as it was. It is how an
// agent reports `paused` while its wrapper keeps beating.
func SetHeartbeatStatus(heartbeatPath, status string) error {
	data, err := readCapped(heartbeatPath)
	if err != nil {
		return fmt.Errorf("set status: %w", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return fmt.Errorf("set status: parse %s: %w", heartbeatPath, err)
	}
	raw, _ := json.Marshal(status)
	fields["status"] = raw
	out, err := json.Marshal(fields)
	if err != nil {
		return fmt.Errorf("set status: encode %s: %w", heartbeatPath, err)
	}
	return WriteFileAtomic(heartbeatPath, protocol.HeartbeatTempFile, append(out, '\n'))
}

// Registration is one line a child appends to its parent's `.children`.
type Registration struct {
	Heartbeat string // the child's heartbeat; made absolute
	Team      string
	TaskID    string // "" is written as null
}

// Register appends the child's line (status "active") to the `.children`
// beside parentHeartbeat, in a single O_APPEND write so that concurrent
// appenders never interleave. A registry that already names the child's
// heartbeat is left alone (a re-dispatch after resume is not a new child);
// registered reports whether a line was written.
func Register(parentHeartbeat string, reg Registration) (registered bool, err error) {
	hb, err := filepath.Abs(reg.Heartbeat)
	if err != nil {
		return false, fmt.Errorf("register %s: %w", reg.Heartbeat, err)
	}
	parent, err := filepath.Abs(parentHeartbeat)
	if err != nil {
		return false, fmt.Errorf("register with %s: %w", parentHeartbeat, err)
	}
	registry := filepath.Join(filepath.Dir(parent), protocol.RegistryFile)
	known, err := registryNames(registry, hb)
	if err != nil {
		return false, err
	}
	if known {
		return false, nil
	}
	line, err := registrationLine(hb, reg.Team, reg.TaskID)
	if err != nil {
		return false, fmt.Errorf("register in %s: %w", registry, err)
	}
	f, err := os.OpenFile(registry, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return false, fmt.Errorf("register: %w", err)
	}
	_, werr := f.Write(line)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return false, fmt.Errorf("register in %s: %w", registry, werr)
	}
	return true, nil
}

func registrationLine(heartbeat, team, taskID string) ([]byte, error) {
	entry := struct {
		Heartbeat string  `json:"heartbeat"`
		Team      string  `json:"team"`
		TaskID    *string `json:"task_id"`
		Status    string  `json:"status"`
	}{Heartbeat: heartbeat, Team: team, Status: "active"}
	if taskID != "" {
		entry.TaskID = &taskID
	}
	line, err := json.Marshal(entry)
	if err != nil {
		return nil, err
	}
	line = append(line, '\n')
	if len(line) >= maxRegistryLine {
		return nil, fmt.Errorf("registry line is %d bytes, over the %d-byte limit", len(line), maxRegistryLine)
	}
	return line, nil
}

// registryNames reports whether the registry holds a line for heartbeat
// (absolute, or relative to the registry's directory). A missing registry
// names nothing; unparseable lines are skipped.
func registryNames(registry, heartbeat string) (bool, error) {
	data, err := readCapped(registry)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("register: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), maxReadSize)
	for sc.Scan() {
		var e model.ChildEntry
		if json.Unmarshal(bytes.TrimSpace(sc.Bytes()), &e) != nil || e.Heartbeat == "" {
			continue
		}
		p := e.Heartbeat
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(registry), p)
		}
		if filepath.Clean(p) == heartbeat {
			return true, nil
		}
	}
	return false, nil
}

func readCapped(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxReadSize))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}

// ProcessStarted is a process's create time in float seconds since the
// epoch, the `started` a heartbeat carries for it.
func ProcessStarted(pid int) (float64, error) {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, err)
	}
	ms, err := p.CreateTime()
	if err != nil {
		return 0, fmt.Errorf("process %d create time: %w", pid, err)
	}
	return float64(ms) / 1000, nil
}
