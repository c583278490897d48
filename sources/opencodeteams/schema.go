package opencodeteams

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// The records below follow the zod schemas of opencode-teams'
// src/types/schemas.ts (AgentStateSchema, TeamConfigSchema): a file the
// system itself would skip as corrupted fails here too, with the field and
// the rule it broke. Keys the schemas do not name are ignored, as zod
// ignores them.

// agentState is one agents/<id>.json.
type agentState struct {
	ID                   string
	Name                 string
	TeamName             string
	Role                 string
	Model                string
	SessionID            string
	PaneID               string
	ServerPort           int
	Cwd                  string
	Status               string
	IsActive             bool
	CreatedAt            time.Time
	HeartbeatTs          time.Time
	UpdatedAt            time.Time // zero when absent
	TerminatedAt         time.Time // zero when absent
	ConsecutiveMisses    int
	LastError            string
	SessionRotationCount int
}

// The lifecycle of AgentStatusSchema, in its order.
const (
	statusSpawning     = "spawning"
	statusActive       = "active"
	statusIdle         = "idle"
	statusInactive     = "inactive"
	statusShuttingDown = "shutting_down"
	statusTerminated   = "terminated"
)

var (
	agentStatuses = []string{statusSpawning, statusActive, statusIdle, statusInactive, statusShuttingDown, statusTerminated}
	agentRoles    = []string{"leader", "worker", "reviewer", "task-manager"}
	colorPattern  = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)
	// teamNamePattern is TeamConfigSchema's rule for a team name; it also
	// keeps a name usable as one segment of a node id.
	teamNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	// isoDatetime is zod v3's `.datetime()` with no options: UTC, a `Z`,
	// any number of fractional digits, no offset.
	isoDatetime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$`)
)

// object decodes a JSON object's keys.
func object(b []byte) (map[string]json.RawMessage, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, errors.New("not a JSON object")
	}
	return raw, nil
}

// parseAgentState decodes and validates an agent file.
func parseAgentState(b []byte) (agentState, error) {
	raw, err := object(b)
	if err != nil {
		return agentState{}, err
	}
	f := fields{raw: raw}
	a := agentState{
		ID:                   f.str("id", true),
		Name:                 f.str("name", true),
		TeamName:             f.str("teamName", true),
		Role:                 f.enum("role", false, agentRoles, "worker"),
		Model:                f.str("model", true),
		SessionID:            f.str("sessionId", true),
		PaneID:               f.str("paneId", false),
		ServerPort:           f.integer("serverPort", true, 1024, 65535, 0),
		Cwd:                  f.str("cwd", true),
		Status:               f.enum("status", true, agentStatuses, ""),
		IsActive:             f.boolean("isActive"),
		CreatedAt:            f.datetime("createdAt", true),
		HeartbeatTs:          f.datetime("heartbeatTs", true),
		UpdatedAt:            f.datetime("updatedAt", false),
		TerminatedAt:         f.datetime("terminatedAt", false),
		ConsecutiveMisses:    f.integer("consecutiveMisses", false, 0, -1, 0),
		LastError:            f.str("lastError", false),
		SessionRotationCount: f.integer("sessionRotationCount", false, 0, -1, 0),
	}
	f.str("providerId", false)
	f.str("initialPrompt", false)
	if c := f.str("color", true); f.err == nil && !colorPattern.MatchString(c) {
		f.fail("color", "must be hex format (#RRGGBB)")
	}
	return a, f.err
}

// teamConfig is one teams/<team>/config.json, as far as the tree needs it.
type teamConfig struct {
	Name        string
	Created     time.Time
	Leader      string
	Members     int
	Topology    string
	Description string
}

// parseTeamConfig decodes and validates a team config.
func parseTeamConfig(b []byte) (teamConfig, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return teamConfig{}, err
	}
	if raw == nil {
		return teamConfig{}, errors.New("not a JSON object")
	}
	f := fields{raw: raw}
	c := teamConfig{
		Name:        f.str("name", true),
		Created:     f.datetime("created", true),
		Leader:      f.str("leader", true),
		Topology:    f.enum("topology", false, []string{"flat", "hierarchical"}, ""),
		Description: f.str("description", false),
	}
	if f.err == nil && !teamNamePattern.MatchString(c.Name) {
		f.fail("name", "must be alphanumeric with hyphens/underscores")
	}
	if f.err == nil {
		c.Members, f.err = parseMembers(raw["members"])
	}
	return c, f.err
}

// parseMembers checks TeamConfigSchema's members: at least one, each a
// TeamMemberSchema.
func parseMembers(b json.RawMessage) (int, error) {
	var members []map[string]json.RawMessage
	if b == nil {
		return 0, errors.New("members: required")
	}
	if err := json.Unmarshal(b, &members); err != nil {
		return 0, fmt.Errorf("members: %w", err)
	}
	if len(members) == 0 {
		return 0, errors.New("members: team must have at least one member")
	}
	for i, m := range members {
		f := fields{raw: m}
		f.str("agentId", true)
		f.str("agentName", true)
		f.str("agentType", true)
		f.datetime("joinedAt", true)
		if f.err != nil {
			return 0, fmt.Errorf("members[%d]: %w", i, f.err)
		}
	}
	return len(members), nil
}

// fields reads a JSON object key by key and keeps the first rule broken.
type fields struct {
	raw map[string]json.RawMessage
	err error
}

func (f *fields) fail(key, why string) {
	if f.err == nil {
		f.err = fmt.Errorf("%s: %s", key, why)
	}
}

// get returns the key's value, or nil when it is absent or null (zod's
// optional fields accept undefined only; a null fails, as zod fails it).
func (f *fields) get(key string, required bool) json.RawMessage {
	v, ok := f.raw[key]
	if !ok {
		if required {
			f.fail(key, "required")
		}
		return nil
	}
	if string(v) == "null" {
		f.fail(key, "must not be null")
		return nil
	}
	return v
}

func (f *fields) str(key string, required bool) string {
	v := f.get(key, required)
	if v == nil {
		return ""
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		f.fail(key, "must be a string")
		return ""
	}
	if required && s == "" {
		f.fail(key, "must be non-empty")
	}
	return s
}

func (f *fields) enum(key string, required bool, allowed []string, def string) string {
	v := f.get(key, required)
	if v == nil {
		return def
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		f.fail(key, "must be a string")
		return def
	}
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	f.fail(key, fmt.Sprintf("%q is not one of %v", s, allowed))
	return def
}

// integer reads a whole number within [lo, hi] (hi < lo: no upper bound).
func (f *fields) integer(key string, required bool, lo, hi, def int) int {
	v := f.get(key, required)
	if v == nil {
		return def
	}
	var n int
	if err := json.Unmarshal(v, &n); err != nil {
		f.fail(key, "must be an integer")
		return def
	}
	if n < lo || hi >= lo && n > hi {
		if hi >= lo {
			f.fail(key, fmt.Sprintf("%d is outside %d..%d", n, lo, hi))
		} else {
			f.fail(key, fmt.Sprintf("%d is below %d", n, lo))
		}
		return def
	}
	return n
}

func (f *fields) boolean(key string) bool {
	v := f.get(key, true)
	if v == nil {
		return false
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		f.fail(key, "must be a boolean")
	}
	return b
}

func (f *fields) datetime(key string, required bool) time.Time {
	s := f.str(key, required)
	if s == "" {
		return time.Time{}
	}
	if !isoDatetime.MatchString(s) {
		f.fail(key, fmt.Sprintf("%q is not an ISO 8601 UTC time", s))
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		f.fail(key, fmt.Sprintf("%q is not an ISO 8601 UTC time", s))
		return time.Time{}
	}
	return t
}
