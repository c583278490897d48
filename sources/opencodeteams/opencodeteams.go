// Package opencodeteams reads the store of opencode-teams (an OpenCode
// plugin that runs teams of agents in tmux panes): one JSON file per agent
// under agents/, one config per team under teams/<team>/, one server file
// per project under servers/. It yields node facts (see package sources):
// each team's leader, synthesised from its config, is a session; every
// agent of the team hangs under it, judged by its tmux pane and its
// project's server too (processes.go).
//
// Every problem of a read (a file that fails the system's schema, a dir
// that cannot be listed) is in Facts.Problems once, naming the file; a
// node's own Problems stay empty.
//
// The mapping, field by field with the file and commit of the system's own
// source it follows, is in docs/sources.md (## opencode-teams).
package opencodeteams

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
)

// What the system itself counts (src/operations/agent.ts): a beat older
// than the deadline is a miss; a record still spawning after the launch
// timeout never finished its launch (spawnAgent activates it within
// ~30 s, three prompt tries; the sweep never looks at it).
const (
	// Deadline: updateHeartbeat returns heartbeatTs + 60 s as nextDeadline
	// and the sweep counts a miss past it.
	Deadline = 60 * time.Second
	// LaunchTimeout: a spawning record older than this is dead.
	LaunchTimeout = 60 * time.Second
)

// Store layout (src/utils/storage-paths.ts).
const (
	// StoreEnv replaces the whole <project>/.opencode/opencode-teams dir.
	StoreEnv = "OPENCODE_TEAMS_DIR"
	// ProjectRootEnv replaces the walk up to the project root.
	ProjectRootEnv = "OPENCODE_PROJECT_ROOT"
	agentsDir      = "agents"
	teamsDir       = "teams"
	serversDir     = "servers"
	teamConfigFile = "config.json"
)

// projectMarkers are what detectProjectRoot looks for walking up.
var projectMarkers = []string{".git", "package.json", "opencode.json", ".opencode"}

// Source reads an opencode-teams store.
type Source struct {
	// Lookup says where the agents' panes and servers are looked up
	// (nil: every tmux server of the user, see Lookup).
	Lookup *Lookup
}

var _ sources.Source = Source{}

// Kind is opencode-teams.
func (Source) Kind() sources.Kind { return sources.OpencodeTeams }

// DefaultStore is where opencode-teams keeps the store of the project cwd
// is in, as the plugin resolves it: $OPENCODE_TEAMS_DIR, else
// <root>/.opencode/opencode-teams, the root being $OPENCODE_PROJECT_ROOT or
// the nearest ancestor of cwd holding .git, package.json, opencode.json or
// .opencode (cwd itself when none does).
func DefaultStore(getenv func(string) string, cwd string) string {
	if dir := getenv(StoreEnv); dir != "" {
		return dir
	}
	root := getenv(ProjectRootEnv)
	if root == "" {
		root = projectRoot(cwd)
	}
	return filepath.Join(root, ".opencode", "opencode-teams")
}

func projectRoot(cwd string) string {
	for dir := cwd; ; dir = filepath.Dir(dir) {
		for _, m := range projectMarkers {
			if _, err := os.Lstat(filepath.Join(dir, m)); err == nil {
				return dir
			}
		}
		if filepath.Dir(dir) == dir {
			return cwd
		}
	}
}

// storeDir resolves path to the store, absolute: path itself when it holds agents/
// or teams/ (a store, or $OPENCODE_TEAMS_DIR) or is named
// .opencode/opencode-teams (the store by its layout, whatever it holds:
// its read says what cannot be read), else the project's
// .opencode/opencode-teams under it.
func storeDir(path string) (string, bool) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if filepath.Base(path) == "opencode-teams" && filepath.Base(filepath.Dir(path)) == ".opencode" {
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			return path, true
		}
	}
	for _, dir := range []string{path, filepath.Join(path, ".opencode", "opencode-teams")} {
		for _, sub := range []string{agentsDir, teamsDir} {
			if fi, err := os.Stat(filepath.Join(dir, sub)); err == nil && fi.IsDir() {
				return dir, true
			}
		}
	}
	return path, false
}

// Detect reports whether path is a store (agents/ or teams/ in it) or a
// project holding one.
func (Source) Detect(path string) bool {
	_, ok := storeDir(path)
	return ok
}

// WatchPaths are the store, agents/, teams/ and each team's dir, then
// servers/ and each server's dir: agent files, team configs and server
// files are replaced by rename in those dirs.
func (Source) WatchPaths(path string) []string {
	store, ok := storeDir(path)
	if !ok {
		return nil
	}
	paths := []string{store}
	for _, sub := range []string{agentsDir, teamsDir} {
		if fi, err := os.Stat(filepath.Join(store, sub)); err == nil && fi.IsDir() {
			paths = append(paths, filepath.Join(store, sub))
		}
	}
	paths = append(paths, subdirs(filepath.Join(store, teamsDir))...)
	if fi, err := os.Stat(filepath.Join(store, serversDir)); err == nil && fi.IsDir() {
		paths = append(paths, filepath.Join(store, serversDir))
		paths = append(paths, subdirs(filepath.Join(store, serversDir))...)
	}
	return paths
}

// WatchesDirsOnly: its watch paths are dirs alone (sources.DirWatched);
// an agent file, a team's config or a server's file written in one is
// read, never watched by its own path.
func (Source) WatchesDirsOnly() {}

// subdirs are the dirs in dir.
func subdirs(dir string) []string {
	var paths []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	return paths
}

// Thresholds are the system's own: its deadline (60 s) is both one beat
// and stale. Kill-after is two deadlines, 120 s: the two consecutive
// misses after which the system's design presumes an agent dead. It
// matters only for a node that can be stalled, and with no pid to probe
// none of this source's can; it is given for the config to override.
func (Source) Thresholds() model.Thresholds {
	th := model.DefaultThresholds()
	th.Beat, th.Stale, th.KillAfter = Deadline, Deadline, 2*Deadline
	return th
}

// team is one team as the tree needs it: the leader node and its key.
type team struct {
	name   string
	key    string // absolute path of the config: the leader's record key
	config teamConfig
	leader *model.Node
	// ownRecord: the leader's agent file speaks for the leader node.
	ownRecord bool
	// gone: its config is gone (goneTeam).
	gone bool
}

// Read reads the store at path as of now.
func (s Source) Read(path string, now time.Time) sources.Facts {
	var facts sources.Facts
	store, _ := storeDir(path)
	agents, err := readAgents(store, &facts)
	if err != nil {
		facts.Problems = append(facts.Problems, model.Problem{Path: filepath.Join(store, agentsDir), Error: err.Error()})
	}
	var configs teamConfigs
	configs.read, configs.err = readTeamConfigs(store)
	facts, _ = s.assemble(store, configs, agents, facts.Problems, nil, &beatState{}, nil)
	return facts
}

// teamConfigs are the teams' configs a read found, or why the teams dir
// could not be listed.
type teamConfigs struct {
	read []teamRead
	err  error
}

// mapped is an agent's node as a read made it, with what it was made of:
// a read whose agent file, parent and process are the same keeps it.
type mapped struct {
	raw    []byte
	parent string
	proc   agentProcess
	made   *model.Node
}

// assembled is what an assembly leaves for a read of a few agents after
// it: the processes' judge (the server files it read), each team's
// leader by its config's path (those no agent's record speaks for) and the
// agent each team's config names its leader.
type assembled struct {
	judge    *judge
	leaders  map[string]*model.Node
	leaderOf map[string]string
}

// assemble reads the teams and maps the agents read (with the problems
// their read had) onto nodes under their teams' leaders. An agent whose
// file, parent and process are those of the node it was last made into
// (nodes[i], agents[i]'s; nil: none kept) keeps that node; nodes[i] is left
// holding the node agents[i] is made into now. A team whose leader is in
// leaders (the last assembly's, its config not read since) keeps it. st
// holds OpenCode's database as the reads of this store know it (see
// sessionBeats).
func (s Source) assemble(store string, configs teamConfigs, agents []*agentFile, problems []model.Problem, nodes []*mapped, st *beatState, leaders map[string]*model.Node) (sources.Facts, assembled) {
	facts := sources.Facts{Problems: problems}
	teams := map[string]*team{}
	buildTeams(configs.read, teams, &facts, leaders)
	if configs.err != nil {
		facts.Problems = append(facts.Problems, model.Problem{Path: filepath.Join(store, teamsDir), Error: configs.err.Error()})
	}
	procs, j := s.processes(store, agents, &facts)
	facts.Nodes = make([]*model.Node, 0, len(agents)+len(teams))
	for i, a := range agents {
		var m *mapped
		if nodes != nil {
			m = nodes[i]
		}
		if !a.teamOK {
			// No team config can bear this name (TeamConfigSchema), so no
			// leader either: the agent is a session of its own, its team
			// shown, never a path built from the name.
			facts.Nodes = append(facts.Nodes, m.node(a, "", procs[a.path]))
			continue
		}
		t := teams[a.state.TeamName]
		if t == nil {
			// The team's dir is gone (cleanup after shutdown, delete-team)
			// while its agent files stay: the team ended.
			t = goneTeam(store, a.state.TeamName)
			teams[a.state.TeamName] = t
		}
		if !t.ownRecord && t.config.Leader != "" && a.state.ID == t.config.Leader {
			// The leader has an agent file of its own (registerAgent called
			// for it): its record speaks for the leader node, a copy of
			// the one its config made (which may be the last read's).
			l := *t.leader
			t.leader = &l
			fillAgent(t.leader, a, "", procs[a.path])
			t.leader.Traits.NeverKill = true
			fields := append(leaderFields(t.config), t.leader.SourceFields()...)
			t.leader.EditRare(func(r *model.Rare) { r.SourceFields = fields })
			t.ownRecord = true
			continue
		}
		facts.Nodes = append(facts.Nodes, m.node(a, t.key, procs[a.path]))
	}
	next := assembled{judge: j, leaders: make(map[string]*model.Node, len(teams)), leaderOf: make(map[string]string, len(teams))}
	for _, t := range teams {
		facts.Nodes = append(facts.Nodes, t.leader)
		next.leaderOf[t.name] = t.config.Leader
		if !t.ownRecord && !t.gone {
			next.leaders[t.key] = t.leader
		}
	}
	s.sessionBeats(facts.Nodes, &facts, st)
	slices.SortFunc(facts.Nodes, func(a, b *model.Node) int { return strings.Compare(a.ID, b.ID) })
	sort.SliceStable(facts.Problems, func(i, j int) bool { return facts.Problems[i].Path < facts.Problems[j].Path })
	return facts, next
}

// node is the node agent a is made into under parent, proc being what its
// pane and server say: m's, when m (nil: none kept) was made of the same
// file, parent and process, else a new one, which m then holds.
func (m *mapped) node(a *agentFile, parent string, proc agentProcess) *model.Node {
	if m != nil && m.made != nil && m.parent == parent && m.made.ID == a.id && bytes.Equal(m.raw, a.raw) && sameProcess(m.proc, proc) {
		return m.made
	}
	n := &model.Node{ID: a.id, HeartbeatPath: a.path}
	fillAgent(n, a, parent, proc)
	if m != nil {
		*m = mapped{raw: a.raw, parent: parent, proc: proc, made: n}
	}
	return n
}

// sameProcess reports whether two readings of an agent's pane and server
// say the same.
func sameProcess(a, b agentProcess) bool {
	return a.pid == b.pid && a.started == b.started && a.ended == b.ended && slices.Equal(a.fields, b.fields)
}

// teamRead is one team's config as a read found it: parsed, or why not.
type teamRead struct {
	name, path string
	mtime      time.Time
	config     teamConfig
	err        error
}

// readTeamConfigs reads every teams/<team>/config.json.
func readTeamConfigs(store string) ([]teamRead, error) {
	entries, err := os.ReadDir(filepath.Join(store, teamsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []teamRead
	for _, e := range entries {
		if !e.IsDir() || !teamNamePattern.MatchString(e.Name()) {
			continue
		}
		path := filepath.Join(store, teamsDir, e.Name(), teamConfigFile)
		b, err := protocol.ReadFile(path, protocol.MaxDocumentSize)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a team dir without its config: being created or removed
		}
		r := teamRead{name: e.Name(), path: path}
		if fi, serr := os.Stat(path); serr == nil {
			r.mtime = fi.ModTime()
		}
		if err == nil {
			r.config, err = parseTeamConfig(b)
			if err != nil {
				err = errors.New("read " + path + ": " + err.Error())
			}
		}
		r.err = err
		out = append(out, r)
	}
	return out, nil
}

// buildTeams makes each team's leader node of its config read, or keeps
// the one kept made of it (by its config's path).
func buildTeams(configs []teamRead, teams map[string]*team, facts *sources.Facts, kept map[string]*model.Node) {
	for _, r := range configs {
		t := &team{name: r.name, key: r.path, config: r.config, leader: kept[r.path]}
		if r.err != nil {
			facts.Problems = append(facts.Problems, model.Problem{Path: r.path, Error: r.err.Error()})
		}
		if t.leader == nil {
			t.leader = newLeader(r)
		}
		teams[t.name] = t
	}
}

// newLeader is the leader node of a team's config read.
func newLeader(r teamRead) *model.Node {
	n := &model.Node{
		ID:            r.name,
		HeartbeatPath: r.path,
		HasHeartbeat:  true,
		Source:        string(sources.OpencodeTeams),
		Traits:        model.Traits{BeatNotRequired: true, NeverKill: true, MergesItself: true, SignOfLife: model.SignUpdate},
		BeatMtime:     r.mtime,
	}
	if r.err != nil {
		n.EditRare(func(r *model.Rare) { r.ScanFlags = append(r.ScanFlags, model.FlagUnreadable) })
		return n
	}
	n.Heartbeat = &model.Heartbeat{
		Role:              "leader",
		Started:           epochSeconds(r.config.Created),
		Status:            model.StatusRunning,
		HeartbeatOptional: model.OptionalOf(model.HeartbeatOptional{Team: r.name}),
		HasParentField:    true, // a session lead
	}
	fields := leaderFields(r.config)
	n.EditRare(func(r *model.Rare) { r.SourceFields = fields })
	return n
}

// goneTeam is the leader of a team whose config no longer exists: the
// team was cleaned up or deleted, so its leader is finished (withdrawn)
// and any agent still running under it is orphaned.
func goneTeam(store, name string) *team {
	path := filepath.Join(store, teamsDir, name, teamConfigFile)
	return &team{name: name, key: path, gone: true, leader: &model.Node{
		ID:            name,
		HeartbeatPath: path,
		HasHeartbeat:  true,
		Heartbeat: &model.Heartbeat{
			Role:              "leader",
			Status:            model.StatusWithdrawn,
			HeartbeatOptional: model.OptionalOf(model.HeartbeatOptional{Team: name}),
			HasParentField:    true,
		},
		Source: string(sources.OpencodeTeams),
		Rare:   &model.Rare{SourceFields: []model.Field{{Name: "team config", Value: "gone: the team was cleaned up or deleted"}}},
		Traits: model.Traits{NeverKill: true, MergesItself: true, SignOfLife: model.SignUpdate},
	}}
}

func leaderFields(c teamConfig) []model.Field {
	f := []model.Field{
		{Name: "leader", Value: c.Leader},
		{Name: "members", Value: strconv.Itoa(c.Members)},
	}
	if c.Topology != "" {
		f = append(f, model.Field{Name: "topology", Value: c.Topology})
	}
	f = append(f, model.Field{Name: "created", Value: formatTime(c.Created)})
	if c.Description != "" {
		f = append(f, model.Field{Name: "description", Value: c.Description})
	}
	return f
}

// agentFile is one agent file read and validated.
type agentFile struct {
	path, stem string
	raw        []byte
	state      agentState
	// teamOK: its team name is one a team config can bear
	// (TeamConfigSchema), checked once, when the file is read.
	teamOK bool
	// id is its node's: <team>/<stem>, or agents/<stem> when no team can
	// bear its team's name (then it is a session of its own).
	id string
}

// readAgents reads agents/*.json, skipping what the system's own reader
// skips (listJSONFiles: a name that starts with '.', such as the temp file
// of an atomic write, or does not end in .json). A file that fails the
// schema, or is no regular file (a directory so named, which
// listJSONFiles keeps and the system then fails to read), is a problem
// naming it; the others are read.
func readAgents(store string, facts *sources.Facts) ([]*agentFile, error) {
	dir := filepath.Join(store, agentsDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var agents []*agentFile
	for _, e := range entries {
		name := e.Name()
		if !isAgentFile(name) {
			continue
		}
		a, ok, err := readAgent(filepath.Join(dir, name))
		switch {
		case !ok:
			continue // removed between the listing and the read
		case err != nil:
			facts.Problems = append(facts.Problems, model.Problem{Path: a.path, Error: err.Error()})
		default:
			agents = append(agents, &a)
		}
	}
	return agents, nil
}

// isAgentFile reports whether name is one the system reads as an agent
// file (listJSONFiles).
func isAgentFile(name string) bool {
	return strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, ".")
}

// readAgent reads and validates one agent file; ok is false when it is
// not there.
func readAgent(path string) (a agentFile, ok bool, err error) {
	a = agentFile{path: path, stem: strings.TrimSuffix(filepath.Base(path), ".json")}
	b, err := protocol.ReadFile(path, protocol.MaxDocumentSize)
	if errors.Is(err, fs.ErrNotExist) {
		return a, false, nil
	}
	if err == nil {
		if a.state, err = parseAgentState(b); err != nil {
			err = errors.New("read " + path + ": " + err.Error())
		}
		a.teamOK = err == nil && teamNamePattern.MatchString(a.state.TeamName)
		if a.teamOK {
			a.id = a.state.TeamName + "/" + a.stem
		} else {
			a.id = agentsDir + "/" + a.stem
		}
	}
	a.raw = b
	return a, true, err
}

// fillAgent maps an agent record onto n; parentKey is its team's config
// ("" for a leader's own record), proc what its pane and server say.
//
//	spawning      -> starting (dead past LaunchTimeout)
//	active, idle, shutting_down -> running; a beat past the deadline is
//	                 quiet, not death (BeatNotRequired): at this commit
//	                 nothing moves heartbeatTs unless the agent calls the
//	                 heartbeat tool, and the sweep is never started
//	inactive      -> the system's own verdict (two missed deadlines):
//	                 running with no pid and no BeatNotRequired, so a beat
//	                 past stale (which the sweep guarantees: it writes
//	                 inactive only past the deadline) reads dead
//	terminated    -> completed; written by forceKill only, so the fields
//	                 say "force killed"
//
// and, for a record that does not say it stopped (processes.go):
//
//	its pane found live -> the pane's pid and create time; a beat past
//	                 the deadline is then stalled (no BeatNotRequired)
//	its pane gone or exited, its server dead -> dead at once (Ended)
func fillAgent(n *model.Node, a *agentFile, parentKey string, proc agentProcess) {
	s := a.state
	n.Source = string(sources.OpencodeTeams)
	n.HasHeartbeat = true
	n.EditRare(func(r *model.Rare) { r.HeartbeatRaw = a.raw })
	n.BeatMtime = s.HeartbeatTs
	hb := &model.Heartbeat{
		ParentHeartbeat:   parentKey,
		HasParentField:    true,
		Role:              s.Role,
		Started:           epochSeconds(s.CreatedAt),
		Status:            model.StatusRunning,
		HeartbeatOptional: model.OptionalOf(model.HeartbeatOptional{Team: s.TeamName}),
	}
	// The record has no pid: its process is `opencode attach` typed into a
	// tmux pane's shell, its work runs in the shared server; the pane's
	// pid is given below when the pane is found. Its files are in the
	// shared checkout, so there is nothing of its own to merge.
	// heartbeatTs moves at activation and when the agent calls the
	// heartbeat tool, nothing beats it: the record's last update.
	traits := model.Traits{BeatNotRequired: true, MergesItself: true, SignOfLife: model.SignUpdate}
	switch s.Status {
	case statusSpawning:
		hb.Status = model.StatusStarting
		traits.LaunchTimeout = LaunchTimeout
	case statusInactive:
		traits.BeatNotRequired = false
	case statusTerminated:
		hb.Status = model.StatusCompleted
	}
	if proc.pid > 0 {
		// The pane's process is the agent's: alive, the beat's age
		// counts again, as the system's own deadline counts it.
		hb.PID, hb.Started = proc.pid, proc.started
		traits.BeatNotRequired = false
	}
	if proc.ended != "" {
		n.SetEnded(proc.ended)
	}
	n.Heartbeat = hb
	n.Traits = traits
	fields := agentFields(s, proc.fields)
	n.EditRare(func(r *model.Rare) { r.SourceFields = fields })
}

// agentFields are what the record says beyond the facts, in a fixed order;
// found are what its pane ("tmux") and server ("server") said.
func agentFields(s agentState, found []model.Field) []model.Field {
	status := s.Status
	if s.Status == statusTerminated {
		status += " (force killed)"
	}
	f := []model.Field{
		{Name: "name", Value: s.Name},
		{Name: "agent id", Value: s.ID},
		{Name: "status", Value: status},
		{Name: "consecutive misses", Value: strconv.Itoa(s.ConsecutiveMisses)},
	}
	if acceptsBeats(s.Status) {
		f = append(f, model.Field{Name: "next deadline", Value: formatTime(s.HeartbeatTs.Add(Deadline))})
	}
	if s.LastError != "" {
		f = append(f, model.Field{Name: "last error", Value: s.LastError})
	}
	if !s.TerminatedAt.IsZero() {
		f = append(f, model.Field{Name: "terminated at", Value: formatTime(s.TerminatedAt)})
	}
	if s.PaneID != "" {
		f = append(f, model.Field{Name: "tmux pane", Value: s.PaneID})
	}
	f = appendFound(f, found, "tmux")
	f = append(f,
		model.Field{Name: "session", Value: s.SessionID},
		model.Field{Name: "server port", Value: strconv.Itoa(s.ServerPort)})
	f = appendFound(f, found, "server")
	f = append(f,
		model.Field{Name: "model", Value: s.Model},
		model.Field{Name: "cwd", Value: s.Cwd},
		model.Field{Name: "created", Value: formatTime(s.CreatedAt)},
	)
	if s.SessionRotationCount > 0 {
		f = append(f, model.Field{Name: "session rotations", Value: strconv.Itoa(s.SessionRotationCount)})
	}
	return f
}

// appendFound appends the found fields named name.
func appendFound(f, found []model.Field, name string) []model.Field {
	for _, x := range found {
		if x.Name == name {
			f = append(f, x)
		}
	}
	return f
}

// acceptsBeats: updateHeartbeat refuses inactive and terminated records,
// so only the others have a next deadline.
func acceptsBeats(status string) bool {
	return status != statusInactive && status != statusTerminated
}

func formatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func epochSeconds(t time.Time) float64 { return model.EpochSeconds(t) }
