package opencodeteams

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

// The fixture is a store as opencode-teams writes it (schemas and field
// order of src/types/schemas.ts), read at this clock.
var fixtureNow = mustTime("2026-02-11T10:05:00.000Z")

const fixtureProject = "../../testdata/sources/opencode-teams/acme-api"

// recordsOnly reads the records alone, as when neither tmux nor the
// server's process can be asked: the fixture's panes (%2 … %9) and its
// server's pid belong to no process of this machine. Those rules are
// tested on a real tmux server and real processes (processes_test.go).
var recordsOnly = Source{Lookup: &Lookup{RecordsOnly: true}}

func fixtureStore(t *testing.T) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join(fixtureProject, ".opencode", "opencode-teams"))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func byID(nodes []*model.Node) map[string]*model.Node {
	m := map[string]*model.Node{}
	for _, n := range nodes {
		m[n.ID] = n
	}
	return m
}

func field(n *model.Node, name string) string {
	for _, f := range n.SourceFields() {
		if f.Name == name {
			return f.Value
		}
	}
	return "<absent>"
}

// TestMappingRules checks each row of the mapping (docs/sources.md,
// ## opencode-teams) on the fixture store.
func TestMappingRules(t *testing.T) {
	store := fixtureStore(t)
	facts := recordsOnly.Read(fixtureProject, fixtureNow)
	nodes := byID(facts.Nodes)
	alphaKey := filepath.Join(store, "teams", "alpha", "config.json")
	betaKey := filepath.Join(store, "teams", "beta", "config.json")

	tests := []struct {
		rule       string
		id         string
		status     string
		beat       string // BeatMtime; "" for none
		parent     string
		traits     model.Traits
		wantFields map[string]string
	}{
		{
			rule: "active is running, its heartbeatTs the beat", id: "alpha/0b6f3c8e-5d1a-4b7e-9a42-3f1c2d8e7a10",
			status: model.StatusRunning, beat: "2026-02-11T10:04:31.554Z", parent: alphaKey,
			traits:     model.Traits{BeatNotRequired: true, MergesItself: true, SignOfLife: model.SignUpdate},
			wantFields: map[string]string{"status": "active", "tmux pane": "%3", "consecutive misses": "0", "next deadline": "2026-02-11T10:05:31.554Z"},
		},
		{
			rule: "active with a beat long past the deadline is still running: the beat is not required", id: "alpha/7d2e9a14-c3b8-4f61-8e05-b9a4d1f26c37",
			status: model.StatusRunning, beat: "2026-02-11T09:42:51.730Z", parent: alphaKey,
			traits: model.Traits{BeatNotRequired: true, MergesItself: true, SignOfLife: model.SignUpdate},
		},
		{
			rule: "consecutive misses are shown and the next deadline is heartbeatTs plus 60 s", id: "alpha/a91c4e02-6f7b-4d38-b1e9-05c8f3a2d694",
			status: model.StatusRunning, beat: "2026-02-11T10:00:47.300Z", parent: alphaKey,
			traits:     model.Traits{BeatNotRequired: true, MergesItself: true, SignOfLife: model.SignUpdate},
			wantFields: map[string]string{"consecutive misses": "1", "next deadline": "2026-02-11T10:01:47.300Z"},
		},
		{
			rule: "inactive is the system's dead verdict: running, no pid, the beat required", id: "alpha/c4d8b1f7-2e93-4a06-9c5d-8b7f1e30a2c5",
			status: model.StatusRunning, beat: "2026-02-11T09:57:40.118Z", parent: alphaKey,
			traits:     model.Traits{MergesItself: true, SignOfLife: model.SignUpdate},
			wantFields: map[string]string{"status": "inactive", "consecutive misses": "2", "next deadline": "<absent>", "last error": "Heartbeat timeout: 87s since last heartbeat"},
		},
		{
			rule: "spawning is starting, with a launch timeout of 60 s", id: "alpha/f3a7d6b2-9c41-4e8a-a5b3-6d2c0e9f1b48",
			status: model.StatusStarting, beat: "2026-02-11T10:04:41.588Z", parent: alphaKey,
			traits: model.Traits{BeatNotRequired: true, MergesItself: true, LaunchTimeout: 60 * time.Second, SignOfLife: model.SignUpdate},
		},
		{
			rule: "shutting_down is running, its status shown", id: "alpha/2b8e0f5c-7a16-4d93-b4c2-e1f9a6d3c570",
			status: model.StatusRunning, beat: "2026-02-11T09:59:20.640Z", parent: alphaKey,
			traits:     model.Traits{BeatNotRequired: true, MergesItself: true, SignOfLife: model.SignUpdate},
			wantFields: map[string]string{"status": "shutting_down"},
		},
		{
			rule: "terminated is completed, and the fields say it was force killed", id: "alpha/e5c2a0d9-4b7f-4c13-8d6e-2f9b5a1c7e83",
			status: model.StatusCompleted, beat: "2026-02-11T09:47:12.903Z", parent: alphaKey,
			traits: model.Traits{BeatNotRequired: true, MergesItself: true, SignOfLife: model.SignUpdate},
			wantFields: map[string]string{"status": "terminated (force killed)", "last error": "Force killed: looping on the same migration",
				"terminated at": "2026-02-11T09:48:30.064Z", "next deadline": "<absent>"},
		},
		{
			rule: "an agent whose team config is gone hangs under its team's leader", id: "beta/9e1d7b3a-0c5f-4a28-b6e4-7d3f2c1a8b95",
			status: model.StatusRunning, beat: "2026-02-11T10:04:50.000Z", parent: betaKey,
			traits: model.Traits{BeatNotRequired: true, MergesItself: true, SignOfLife: model.SignUpdate},
		},
		{
			rule: "the leader is synthesised from the team config: a session, never killed, its beat the config's mtime", id: "alpha",
			status: model.StatusRunning, parent: "",
			traits:     model.Traits{BeatNotRequired: true, NeverKill: true, MergesItself: true, SignOfLife: model.SignUpdate},
			wantFields: map[string]string{"leader": "leader", "members": "7", "created": "2026-02-11T09:40:12.004Z"},
		},
		{
			rule: "the leader of a team whose config is gone is withdrawn", id: "beta",
			status: model.StatusWithdrawn, parent: "",
			traits: model.Traits{NeverKill: true, MergesItself: true, SignOfLife: model.SignUpdate},
		},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			n := nodes[tt.id]
			if n == nil {
				t.Fatalf("no node %q among %d", tt.id, len(facts.Nodes))
			}
			if n.Source != "opencode-teams" || !n.HasHeartbeat || n.Heartbeat == nil {
				t.Fatalf("source %q, has record %v, heartbeat %v", n.Source, n.HasHeartbeat, n.Heartbeat)
			}
			hb := n.Heartbeat
			if hb.Status != tt.status {
				t.Errorf("status %q, want %q", hb.Status, tt.status)
			}
			if hb.PID != 0 {
				t.Errorf("pid %d: opencode-teams records none", hb.PID)
			}
			if !hb.HasParentField || hb.ParentHeartbeat != tt.parent {
				t.Errorf("parent %q (declared %v), want %q", hb.ParentHeartbeat, hb.HasParentField, tt.parent)
			}
			if tt.beat != "" && !n.BeatMtime.Equal(mustTime(tt.beat)) {
				t.Errorf("beat %s, want %s", n.BeatMtime, tt.beat)
			}
			if n.Traits != tt.traits {
				t.Errorf("traits %+v, want %+v", n.Traits, tt.traits)
			}
			if n.InfraDir != "" {
				t.Errorf("infra dir %q: an agent has no dir of its own", n.InfraDir)
			}
			for name, want := range tt.wantFields {
				if got := field(n, name); got != want {
					t.Errorf("field %q = %q, want %q", name, got, want)
				}
			}
		})
	}
}

// TestLeaderKeyIsTheConfigPath: every agent of a team declares the config
// as its parent's record, and the leader node is keyed by it.
func TestLeaderKeyIsTheConfigPath(t *testing.T) {
	facts := recordsOnly.Read(fixtureProject, fixtureNow)
	nodes := byID(facts.Nodes)
	leader := nodes["alpha"]
	if leader == nil || leader.HeartbeatPath != filepath.Join(fixtureStore(t), "teams", "alpha", "config.json") {
		t.Fatalf("leader %+v", leader)
	}
	children := 0
	for _, n := range facts.Nodes {
		if strings.HasPrefix(n.ID, "alpha/") {
			children++
			if n.Heartbeat.ParentHeartbeat != leader.HeartbeatPath {
				t.Errorf("%s declares %q", n.ID, n.Heartbeat.ParentHeartbeat)
			}
		}
	}
	if children != 7 {
		t.Errorf("%d agents under alpha, want 7 (the broken file is not one)", children)
	}
}

// TestTempFilesAndLocksAreIgnored: the temp of an atomic write and the
// lock files are neither nodes nor problems; the one broken agent file is
// the only problem, and it names the file.
func TestTempFilesAndLocksAreIgnored(t *testing.T) {
	facts := recordsOnly.Read(fixtureProject, fixtureNow)
	if len(facts.Nodes) != 10 {
		t.Errorf("%d nodes, want 10 (8 agents, 2 leaders)", len(facts.Nodes))
	}
	if len(facts.Problems) != 1 {
		t.Fatalf("problems %+v, want one", facts.Problems)
	}
	p := facts.Problems[0]
	if filepath.Base(p.Path) != "3f0a6c1e-8b2d-4e57-9f13-a4c6e8d2b071.json" || !strings.Contains(p.Error, p.Path) {
		t.Errorf("problem %+v does not name the broken file", p)
	}
}

// TestClassifierReadsTheMapping: the current classifier, given the
// source's thresholds, reads the states the mapping promises for the rows
// it can judge without traits.
func TestClassifierReadsTheMapping(t *testing.T) {
	facts := recordsOnly.Read(fixtureProject, fixtureNow)
	nodes := byID(facts.Nodes)
	th := Source{}.Thresholds()
	tests := []struct {
		rule  string
		id    string
		state model.State
		flag  model.Flag
	}{
		{"inactive reads dead", "alpha/c4d8b1f7-2e93-4a06-9c5d-8b7f1e30a2c5", model.StateDead, ""},
		{"terminated reads finished", "alpha/e5c2a0d9-4b7f-4c13-8d6e-2f9b5a1c7e83", model.StateFinished, ""},
		{"spawning reads starting", "alpha/f3a7d6b2-9c41-4e8a-a5b3-6d2c0e9f1b48", model.StateRunning, model.FlagStarting},
		{"active with a fresh beat reads running", "alpha/0b6f3c8e-5d1a-4b7e-9a42-3f1c2d8e7a10", model.StateRunning, ""},
		{"a gone team's leader reads finished", "beta", model.StateFinished, ""},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			n := nodes[tt.id]
			liveness.ClassifyNode(n, nil, fixtureNow, th)
			if n.State != tt.state || tt.flag != "" && !n.HasFlag(tt.flag) {
				t.Errorf("%s %v (%s), want %s %s", n.State, n.Flags, n.Reason, tt.state, tt.flag)
			}
		})
	}
}

// agentRecord is builder-1 of the fixture, as the system writes it.
func agentRecord() map[string]any {
	return map[string]any{
		"id": "0b6f3c8e-5d1a-4b7e-9a42-3f1c2d8e7a10", "name": "builder-1", "teamName": "alpha", "role": "worker",
		"model": "claude-sonnet-4-20250514", "sessionId": "ses_3c1f9a2b7ffeK4mQ8rT2vXyZ1a", "paneId": "%3",
		"serverPort": 28799, "cwd": "/home/dev/acme-api", "color": "#FF6B6B", "status": "active", "isActive": true,
		"createdAt": "2026-02-11T09:41:02.907Z", "heartbeatTs": "2026-02-11T10:04:31.554Z",
		"updatedAt": "2026-02-11T10:04:31.556Z", "consecutiveMisses": 0, "sessionRotationCount": 0,
	}
}

const teamConfigJSON = `{"name":"alpha","created":"2026-02-11T09:40:12.004Z","leader":"lead-1",
"members":[{"agentId":"lead-1","agentName":"Leader","agentType":"leader","joinedAt":"2026-02-11T09:40:12.004Z"}],
"dispatchRules":[],"dispatchLog":[]}`

// newStore makes a store in a temp dir with team alpha and the agents given.
func newStore(t *testing.T, agents ...map[string]any) string {
	t.Helper()
	store := t.TempDir()
	writeFile(t, filepath.Join(store, "teams", "alpha", "config.json"), []byte(teamConfigJSON))
	for _, a := range agents {
		b, err := json.MarshalIndent(a, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(store, "agents", a["id"].(string)+".json"), b)
	}
	return store
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// TestIdleIsRunning: idle (written on an SDK session.idle event) is a
// running agent between prompts; its status is shown as the system wrote it.
func TestIdleIsRunning(t *testing.T) {
	store := newStore(t, with(agentRecord(), "status", "idle"))
	facts := recordsOnly.Read(store, fixtureNow)
	n := byID(facts.Nodes)["alpha/0b6f3c8e-5d1a-4b7e-9a42-3f1c2d8e7a10"]
	if n == nil || n.Heartbeat.Status != model.StatusRunning || field(n, "status") != "idle" || !n.Traits.BeatNotRequired {
		t.Fatalf("idle agent %+v", n)
	}
}

// TestLeaderWithItsOwnAgentFile: when registerAgent was called for the
// leader, its record speaks for the leader node (keyed by the config), and
// it is not listed twice.
func TestLeaderWithItsOwnAgentFile(t *testing.T) {
	leader := with(agentRecord(), "id", "lead-1", "name", "Leader", "role", "leader", "paneId", "%1")
	store := newStore(t, leader, agentRecord())
	facts := recordsOnly.Read(store, fixtureNow)
	if len(facts.Nodes) != 2 || len(facts.Problems) != 0 {
		t.Fatalf("nodes %d, problems %+v; want 2 and none", len(facts.Nodes), facts.Problems)
	}
	n := byID(facts.Nodes)["alpha"]
	if n == nil || n.HeartbeatPath != filepath.Join(store, "teams", "alpha", "config.json") {
		t.Fatalf("leader %+v", n)
	}
	if n.Heartbeat.Role != "leader" || !n.BeatMtime.Equal(mustTime("2026-02-11T10:04:31.554Z")) || !n.Heartbeat.SessionLead() ||
		!n.Traits.NeverKill || field(n, "tmux pane") != "%1" || field(n, "members") != "1" {
		t.Errorf("leader facts %+v fields %+v", n.Heartbeat, n.SourceFields())
	}
}

// TestSchemaFailuresAreProblems: a file the system's zod schema rejects is
// a problem naming the file and the field, never a node or a crash; the
// other agents are still read.
func TestSchemaFailuresAreProblems(t *testing.T) {
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"truncated JSON", []byte(`{"id": "x", "status": "act`), "unexpected end"},
		{"empty file", nil, "unexpected end"},
		{"not an object", []byte(`[1,2]`), "cannot unmarshal"},
		{"null", []byte(`null`), "not a JSON object"},
		{"a required field missing", mustJSON(with(agentRecord(), "sessionId", nil)), "sessionId: required"},
		{"an unknown status", mustJSON(with(agentRecord(), "status", "zombie")), `status: "zombie" is not one of`},
		{"a number where a string goes", mustJSON(with(agentRecord(), "name", 7)), "name: must be a string"},
		{"an empty name", mustJSON(with(agentRecord(), "name", "")), "name: must be non-empty"},
		{"a fractional port", mustJSON(with(agentRecord(), "serverPort", 28799.5)), "serverPort: must be an integer"},
		{"a port out of range", mustJSON(with(agentRecord(), "serverPort", 80)), "serverPort: 80 is outside"},
		{"negative misses", mustJSON(with(agentRecord(), "consecutiveMisses", -1)), "consecutiveMisses: -1 is below 0"},
		{"a time with an offset", mustJSON(with(agentRecord(), "heartbeatTs", "2026-02-11T10:04:31.554+01:00")), "heartbeatTs:"},
		{"a date only", mustJSON(with(agentRecord(), "createdAt", "2026-02-11")), "createdAt:"},
		{"a bad colour", mustJSON(with(agentRecord(), "color", "red")), "color: must be hex"},
		{"isActive as a string", mustJSON(with(agentRecord(), "isActive", "yes")), "isActive: must be a boolean"},
		{"an optional field null", mustJSON(with(agentRecord(), "lastError", json.RawMessage("null"))), "lastError: must not be null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good := with(agentRecord(), "id", "good-1")
			store := newStore(t, good)
			bad := filepath.Join(store, "agents", "bad-1.json")
			writeFile(t, bad, tt.body)
			facts := recordsOnly.Read(store, fixtureNow)
			if len(facts.Problems) != 1 || facts.Problems[0].Path != bad || !strings.Contains(facts.Problems[0].Error, tt.want) ||
				!strings.Contains(facts.Problems[0].Error, bad) {
				t.Fatalf("problems %+v, want one naming %s with %q", facts.Problems, bad, tt.want)
			}
			if _, ok := byID(facts.Nodes)["alpha/good-1"]; !ok || len(facts.Nodes) != 2 {
				t.Errorf("nodes %d: the good agent and its leader must still be read", len(facts.Nodes))
			}
		})
	}
}

// TestUnreadableTeamConfig: a config that fails its schema is a problem;
// its leader is still the parent of its agents, flagged unreadable.
func TestUnreadableTeamConfig(t *testing.T) {
	store := newStore(t, agentRecord())
	path := filepath.Join(store, "teams", "alpha", "config.json")
	writeFile(t, path, []byte(`{"name":"alpha","created":"2026-02-11T09:40:12.004Z","leader":"l","members":[]}`))
	facts := recordsOnly.Read(store, fixtureNow)
	leader := byID(facts.Nodes)["alpha"]
	if len(facts.Problems) != 1 || facts.Problems[0].Path != path || !strings.Contains(facts.Problems[0].Error, "at least one member") {
		t.Fatalf("problems %+v", facts.Problems)
	}
	if leader == nil || leader.Heartbeat != nil || !leader.HasScanFlag(model.FlagUnreadable) || leader.HeartbeatPath != path {
		t.Fatalf("leader %+v", leader)
	}
	if a := byID(facts.Nodes)["alpha/"+agentRecord()["id"].(string)]; a == nil || a.Heartbeat.ParentHeartbeat != path {
		t.Errorf("agent %+v does not hang under the leader", a)
	}
}

func mustJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return b
}

// TestTeamNameNoConfigCanBear: an agent's teamName is any non-empty string
// in its schema, but a team config's name is [A-Za-z0-9_-]+. An agent
// naming another team has no leader: it is a session of its own, and no
// path or id is built from the name.
func TestTeamNameNoConfigCanBear(t *testing.T) {
	for _, team := range []string{"../../etc", "a/b", "..", "team one"} {
		t.Run(team, func(t *testing.T) {
			store := newStore(t, with(agentRecord(), "teamName", team))
			facts := recordsOnly.Read(store, fixtureNow)
			n := byID(facts.Nodes)["agents/"+agentRecord()["id"].(string)]
			if n == nil || len(facts.Nodes) != 2 || len(facts.Problems) != 0 {
				t.Fatalf("nodes %d problems %+v", len(facts.Nodes), facts.Problems)
			}
			if !n.Heartbeat.SessionLead() || n.Heartbeat.Optional().Team != team {
				t.Errorf("agent parent %q team %q", n.Heartbeat.ParentHeartbeat, n.Heartbeat.Optional().Team)
			}
		})
	}
}
