package opencodeteams

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseAgentState: no input crashes the parser, and what it accepts
// has what the mapping needs (an id, a team, a known status, a beat). The
// fixture's agent files are the seed corpus.
func FuzzParseAgentState(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(fixtureProject, ".opencode", "opencode-teams", "agents", "*"))
	for _, path := range seeds {
		if b, err := os.ReadFile(path); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := parseAgentState(b)
		if err != nil {
			return
		}
		if a.ID == "" || a.TeamName == "" || a.HeartbeatTs.IsZero() || a.CreatedAt.IsZero() {
			t.Fatalf("accepted a record without id, team or times: %+v", a)
		}
		known := false
		for _, s := range agentStatuses {
			known = known || a.Status == s
		}
		if !known {
			t.Fatalf("accepted status %q", a.Status)
		}
	})
}

// FuzzParseTeamConfig: no input crashes the config parser, and what it
// accepts names a leader and a team usable as an id segment.
func FuzzParseTeamConfig(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(fixtureProject, ".opencode", "opencode-teams", "teams", "alpha", "config.json")); err == nil {
		f.Add(b)
	}
	f.Add([]byte(teamConfigJSON))
	f.Add([]byte(`{"members": [null]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := parseTeamConfig(b)
		if err != nil {
			return
		}
		if c.Leader == "" || !teamNamePattern.MatchString(c.Name) || c.Members < 1 {
			t.Fatalf("accepted %+v", c)
		}
	})
}

// FuzzParseServerInfo: no input crashes the server file's parser, and
// what it accepts has what judging a server needs (a pid, a port of the
// system's range, a start time). The fixture's server file is the seed.
func FuzzParseServerInfo(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(fixtureProject, ".opencode", "opencode-teams", "servers", "*", "server.json"))
	for _, path := range seeds {
		if b, err := os.ReadFile(path); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"pid": 0, "port": 28000}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		srv, err := parseServerInfo(b)
		if err != nil {
			return
		}
		if srv.pid <= 0 || srv.port < 28000 || srv.port > 28999 || srv.startedAt.IsZero() {
			t.Fatalf("accepted a server without pid, port or start: %+v", srv)
		}
	})
}
