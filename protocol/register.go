package protocol

// Registration: how a child announces itself in its parent's `.children`
// (SPEC §1), before anything of its own exists.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dispatchtop/dispatchtop/model"
)

// maxRegistrationLine keeps a registration append atomic for concurrent
// readers and appenders: SPEC §1 promises lines under 4 KiB.
const maxRegistrationLine = 4096

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
// registered reports whether a line was written. The registry is read and
// opened as every file of the contract is: one planted as a FIFO is
// refused, never waited on.
func Register(parentHeartbeat string, reg Registration) (registered bool, err error) {
	hb, err := filepath.Abs(reg.Heartbeat)
	if err != nil {
		return false, fmt.Errorf("register %s: %w", reg.Heartbeat, err)
	}
	parent, err := filepath.Abs(parentHeartbeat)
	if err != nil {
		return false, fmt.Errorf("register with %s: %w", parentHeartbeat, err)
	}
	registry := filepath.Join(filepath.Dir(parent), RegistryFile)
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
	f, err := OpenFile(registry, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
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
	entry := model.ChildEntry{Heartbeat: heartbeat, Team: team, Status: "active"}
	if taskID != "" {
		entry.TaskID = &taskID
	}
	line, err := json.Marshal(entry)
	if err != nil {
		return nil, err
	}
	line = append(line, '\n')
	if len(line) >= maxRegistrationLine {
		return nil, fmt.Errorf("registry line is %d bytes, over the %d-byte limit", len(line), maxRegistrationLine)
	}
	return line, nil
}

// registryNames reports whether the registry holds a line for heartbeat
// (absolute, or relative to the registry's directory), read as the scanner
// reads it. A missing registry names nothing; unparseable lines are skipped.
func registryNames(registry, heartbeat string) (bool, error) {
	f, info, err := OpenReader(registry)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("register: %w", err)
	}
	defer f.Close()
	lines, err := ReadRegistry(f, info.Size, MaxRegistryRead)
	if err != nil && !errors.As(err, new(*registryBudgetError)) {
		return false, fmt.Errorf("register: read %s: %w", registry, err)
	}
	for _, l := range lines {
		if l.Entry == nil {
			continue
		}
		p := l.Entry.Heartbeat
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(registry), p)
		}
		if filepath.Clean(p) == heartbeat {
			return true, nil
		}
	}
	return false, nil
}
