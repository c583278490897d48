// Package chatroom reads the machine state of chatroom's daemon
// (~/.chatroom): one state file per machine listing the pid of every agent
// the daemon spawned, and the daemon's own pid file. It yields node facts
// (see package sources): each machine's daemon is a session; every agent
// entry is a pid-only node under it.
//
// chatroom writes no beat to disk: an entry exists while its process runs
// and is deleted when it exits or is stopped, so a node of this source is
// never finished; it disappears.
//
// Every problem of a read (a file that fails the system's schema, a dir
// that cannot be listed) is in Facts.Problems once, naming the file; a
// node's own Problems stay empty.
//
// The mapping, field by field with the file and commit of the system's own
// source it follows, is in docs/sources.md (## chatroom).
package chatroom

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
)

// StartSlack is how long after an agent's process was created its
// startedAt may be stamped: the daemon writes it once service.spawn()
// resolves, which for the opencode-sdk harness waits for `opencode serve`
// to listen (10 s), a session (30 s), the agent list (10 s) and the first
// prompt (60 s) — about 110 s at worst — with a margin.
const StartSlack = 120 * time.Second

// Store layout (packages/cli/src/infrastructure/machine/daemon-state.ts,
// storage.ts, commands/machine/pid.ts).
const (
	stateDir        = "machines/state"
	machineFile     = "machine.json"
	stateVersion    = "1"
	pidFilePrefix   = "daemon-"
	pidFileSuffix   = ".pid"
	daemonRole      = "daemon"
	keyRoleSplitter = "/"
)

// Source reads a chatroom store.
type Source struct{}

var _ sources.Source = Source{}

// Kind is chatroom.
func (Source) Kind() sources.Kind { return sources.Chatroom }

// DefaultStore is where chatroom keeps its state for the user whose home
// dir is home: ~/.chatroom, with no override (the CLI joins os.homedir()).
func DefaultStore(home string) string {
	return filepath.Join(home, ".chatroom")
}

// storeDir resolves path to the store, absolute: path itself when it is
// a `.chatroom` directory or holds machines/state or a machine.json (of
// whatever kind: the store by its layout, whose read says what cannot be
// read), else the .chatroom dir under it (a home), else, for the
// machines/state dir itself, the store holding it (whose pid files and
// machine.json say whether its daemons run).
func storeDir(path string) (string, bool) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	candidates := []string{path, filepath.Join(path, ".chatroom")}
	if parent := filepath.Dir(path); filepath.Base(path) == "state" && filepath.Base(parent) == "machines" {
		candidates = append(candidates, filepath.Dir(parent))
	}
	for _, dir := range candidates {
		if fi, err := os.Stat(filepath.Join(dir, stateDir)); err == nil && fi.IsDir() {
			return dir, true
		}
		if _, err := os.Lstat(filepath.Join(dir, machineFile)); err == nil {
			return dir, true
		}
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() && filepath.Base(path) == ".chatroom" {
		return path, true
	}
	return path, false
}

// Detect reports whether path is a chatroom store or a home holding one.
func (Source) Detect(path string) bool {
	_, ok := storeDir(path)
	return ok
}

// WatchPaths are the store (pid files, machine.json) and the state dir,
// whose files are replaced by rename.
func (Source) WatchPaths(path string) []string {
	store, ok := storeDir(path)
	if !ok {
		return nil
	}
	paths := []string{store}
	if fi, err := os.Stat(filepath.Join(store, stateDir)); err == nil && fi.IsDir() {
		paths = append(paths, filepath.Join(store, stateDir))
	}
	return paths
}

// Thresholds: chatroom counts no age on disk — an agent lives while its
// pid does (kill(pid, 0)) — so the only staleness it defines is its
// daemon's heartbeat to the backend: every 5 min, gone after 30 min
// (services/backend/config/reliability.ts). Those are one beat and stale
// here; kill-after is stale. They judge only a daemon with no pid file
// while machine.json cannot be read (dead once its last state write is
// older than stale; with it read, such a daemon is dead at once): its
// agents carry BeatNotRequired, so their age never makes them stalled or
// dead.
func (Source) Thresholds() model.Thresholds {
	th := model.DefaultThresholds()
	th.Beat, th.Stale, th.KillAfter = 5*time.Minute, 30*time.Minute, 30*time.Minute
	return th
}

// machine is one machine's daemon as the store names it.
type machine struct {
	id        string
	url       string // the backend URL machine.json registers it under
	hostname  string
	pidFile   string // absolute path, "" when none links to it
	stateFile string // absolute path, whether or not it exists
}

// Read reads the store at path as of now.
func (Source) Read(path string, now time.Time) sources.Facts {
	var facts sources.Facts
	store, _ := storeDir(path)
	machines, linked := readMachines(store, &facts)
	ids, err := stateFileIDs(store)
	if err != nil {
		facts.Problems = append(facts.Problems, model.Problem{Path: filepath.Join(store, stateDir), Error: err.Error()})
	}
	for _, id := range ids {
		if machines[id] == nil {
			machines[id] = &machine{id: id}
		}
	}
	for _, m := range machines {
		m.stateFile = filepath.Join(store, stateDir, m.id+".json")
		readDaemon(m, linked, &facts)
	}
	sort.Slice(facts.Nodes, func(i, j int) bool { return facts.Nodes[i].ID < facts.Nodes[j].ID })
	sort.SliceStable(facts.Problems, func(i, j int) bool { return facts.Problems[i].Path < facts.Problems[j].Path })
	return facts
}

// readMachines reads machine.json: each backend URL names a machineId, and
// the daemon serving that URL writes its pid to daemon-<sha256(url)[:8]>.pid.
// The first URL (in order) whose pid file exists links the machine to it.
// linked reports whether machine.json said which pid file is each
// machine's daemon's (read, or absent: no daemon registered); false when
// it could not be read, and a machine with no pid file then may have one.
func readMachines(store string, facts *sources.Facts) (machines map[string]*machine, linked bool) {
	machines = map[string]*machine{}
	path := filepath.Join(store, machineFile)
	b, err := protocol.ReadFile(path, protocol.MaxDocumentSize)
	if errors.Is(err, fs.ErrNotExist) {
		return machines, true
	}
	var doc struct {
		Machines map[string]struct {
			MachineID string `json:"machineId"`
			Hostname  string `json:"hostname"`
		} `json:"machines"`
	}
	if err == nil {
		if err = json.Unmarshal(b, &doc); err != nil {
			err = fmt.Errorf("read %s: %w", path, err)
		}
	}
	if err != nil {
		facts.Problems = append(facts.Problems, model.Problem{Path: path, Error: err.Error()})
		return machines, false
	}
	urls := make([]string, 0, len(doc.Machines))
	for url := range doc.Machines {
		urls = append(urls, url)
	}
	sort.Strings(urls)
	for _, url := range urls {
		reg := doc.Machines[url]
		if reg.MachineID == "" || strings.ContainsAny(reg.MachineID, `/\`) {
			continue
		}
		m := machines[reg.MachineID]
		if m == nil {
			m = &machine{id: reg.MachineID, url: url, hostname: reg.Hostname}
			machines[reg.MachineID] = m
		}
		if m.pidFile != "" {
			continue
		}
		pidFile := filepath.Join(store, PIDFileName(url))
		if _, err := os.Lstat(pidFile); err == nil {
			m.url, m.hostname, m.pidFile = url, reg.Hostname, pidFile
		}
	}
	return machines, true
}

// PIDFileName is the name of the pid file of the daemon serving the backend
// at url (commands/machine/pid.ts getPidFileName).
func PIDFileName(url string) string {
	sum := sha256.Sum256([]byte(url))
	return pidFilePrefix + hex.EncodeToString(sum[:])[:8] + pidFileSuffix
}

// stateFileIDs lists the machine ids of machines/state/<id>.json, skipping
// the daemon's temp (<id>.json.tmp) and dot files. A directory so named is
// listed: its read is a problem, not a machine skipped without a word.
func stateFileIDs(store string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(store, stateDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		ids = append(ids, strings.TrimSuffix(name, ".json"))
	}
	return ids, nil
}

// stateFile is DaemonStateFile (daemon-state.ts).
type stateFile struct {
	Version   *string                    `json:"version"`
	MachineID string                     `json:"machineId"`
	UpdatedAt string                     `json:"updatedAt"`
	Agents    map[string]json.RawMessage `json:"agents"`
}

// agentEntry is DaemonAgentEntry.
type agentEntry struct {
	PID       *int    `json:"pid"`
	Harness   *string `json:"harness"`
	StartedAt *string `json:"startedAt"`
}

// readDaemon adds m's daemon node and its agents' nodes. A daemon with no
// pid file and no agents left is not running and owns nothing: no node.
// One with no pid file that left agents crashed: chatroom reads it as not
// running (pid.ts isDaemonRunning: readPid finds no file), and the next
// daemon kills what it left (recover()): it is dead, once machine.json
// (linked) says which pid file would be its.
func readDaemon(m *machine, linked bool, facts *sources.Facts) {
	daemon := &model.Node{
		ID:            m.id,
		HeartbeatPath: m.stateFile,
		HasHeartbeat:  true,
		Source:        string(sources.Chatroom),
		Heartbeat: &model.Heartbeat{
			Role:           daemonRole,
			Status:         model.StatusRunning,
			HasParentField: true, // a session lead
		},
	}
	// Every problem goes to the read's list, once; the scanner shows them.
	problems := 0
	problem := func(path, format string, a ...any) {
		facts.Problems = append(facts.Problems, model.Problem{Path: path, Error: fmt.Sprintf(format, a...)})
		problems++
	}

	if m.pidFile != "" {
		b, err := protocol.ReadFile(m.pidFile, protocol.MaxDocumentSize)
		var fi os.FileInfo
		if err == nil {
			fi, err = os.Stat(m.pidFile)
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			m.pidFile = "" // removed since it was listed: the daemon stopped
		case err != nil:
			problem(m.pidFile, "%v", err)
		default:
			pid, perr := parsePID(b)
			if perr != nil {
				problem(m.pidFile, "read %s: %v", m.pidFile, perr)
			}
			// The daemon's only sign of life on disk is its pid: alive while
			// that process is, whatever the age of the file. A pid file read
			// mid-write (it is not written atomically) is as fresh as its
			// mtime: no reason to call the daemon dead.
			daemon.Heartbeat.PID = pid
			daemon.BeatMtime = fi.ModTime()
			daemon.Traits.BeatNotRequired = pid > 0
			// Written once, when the daemon took its lock: its start.
			daemon.Traits.SignOfLife = model.SignStart
		}
	}

	var agents []*model.Node
	updated := ""
	b, err := protocol.ReadFile(m.stateFile, protocol.MaxDocumentSize)
	stateFi, _ := os.Stat(m.stateFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		problem(m.stateFile, "%v", err)
	default:
		var sf stateFile
		if err := json.Unmarshal(b, &sf); err != nil {
			problem(m.stateFile, "read %s: %v", m.stateFile, err)
			break
		}
		if sf.Version == nil || *sf.Version != stateVersion {
			problem(m.stateFile, "read %s: version %s: only %q is known", m.stateFile, quoteOrAbsent(sf.Version), stateVersion)
			break
		}
		daemon.EditRare(func(r *model.Rare) { r.HeartbeatRaw = b })
		updated = sf.UpdatedAt
		agents = readAgents(m, sf, problem)
	}

	if m.pidFile == "" && len(agents) == 0 && problems == 0 {
		return // stopped cleanly, or never started an agent here
	}
	if daemon.BeatMtime.IsZero() {
		// No pid file: its last sign of life is its last state write.
		daemon.Traits.SignOfLife = model.SignUpdate
		if t, err := parseTime(updated); err == nil {
			daemon.BeatMtime = t
		} else if stateFi != nil {
			daemon.BeatMtime = stateFi.ModTime()
		}
	}
	if m.pidFile == "" && linked {
		daemon.SetEnded(noPIDFile(m))
	}
	fields := daemonFields(m, updated, len(agents))
	daemon.EditRare(func(r *model.Rare) { r.SourceFields = fields })
	facts.Nodes = append(facts.Nodes, daemon)
	facts.Nodes = append(facts.Nodes, agents...)
}

// readAgents maps each entry of the state file onto a pid-only node.
func readAgents(m *machine, sf stateFile, problem func(path, format string, a ...any)) []*model.Node {
	keys := make([]string, 0, len(sf.Agents))
	for k := range sf.Agents {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var nodes []*model.Node
	byPID := map[int][]*model.Node{}
	for _, key := range keys {
		where := m.stateFile + "#" + key
		cut := strings.LastIndex(key, keyRoleSplitter)
		if cut <= 0 || cut == len(key)-1 {
			// listAgentEntries skips such a key; say so rather than hide it.
			problem(where, "agent key %q is not <chatroomId>/<role>: skipped, as the daemon skips it", key)
			continue
		}
		chatroomID, role := key[:cut], key[cut+1:]
		e, err := parseEntry(sf.Agents[key])
		if err != nil {
			problem(where, "read %s: agents[%q]: %v", m.stateFile, key, err)
			continue
		}
		started, _ := parseTime(*e.StartedAt)
		n := &model.Node{
			ID:            m.id + "/" + key,
			HeartbeatPath: where,
			HasHeartbeat:  true,
			Source:        string(sources.Chatroom),
			BeatMtime:     started,
			Heartbeat: &model.Heartbeat{
				PID:               *e.PID,
				ParentHeartbeat:   m.stateFile,
				HasParentField:    true,
				Role:              role,
				Started:           model.EpochSeconds(started),
				Status:            model.StatusRunning,
				HeartbeatOptional: model.OptionalOf(model.HeartbeatOptional{Team: chatroomID}),
			},
			// No beat: the pid alone says alive; startedAt is stamped once
			// the spawn call returns.
			Traits: model.Traits{BeatNotRequired: true, StartSlack: StartSlack, SignOfLife: model.SignStart},
			Rare: &model.Rare{SourceFields: []model.Field{
				{Name: "chatroom", Value: chatroomID},
				{Name: "role", Value: role},
				{Name: "harness", Value: *e.Harness},
				{Name: "pid is", Value: pidIs(*e.Harness)},
				{Name: "started at", Value: *e.StartedAt},
				{Name: "machine", Value: m.id},
			}},
		}
		nodes = append(nodes, n)
		byPID[*e.PID] = append(byPID[*e.PID], n)
	}
	for pid, same := range byPID {
		if len(same) < 2 {
			continue
		}
		// One process cannot be two agents: at most one entry is right.
		for _, n := range same {
			n.EditRare(func(r *model.Rare) { r.ScanFlags = append(r.ScanFlags, model.FlagConflict) })
			problem(n.HeartbeatPath, "pid %d is also recorded for %d other agent(s) of %s", pid, len(same)-1, m.stateFile)
		}
	}
	return nodes
}

// noPIDFile says why a daemon with no pid file is not running.
func noPIDFile(m *machine) string {
	if m.url == "" {
		return "no daemon: machine.json registers no backend for this machine, so no pid file is its"
	}
	return "pid file " + PIDFileName(m.url) + " gone: chatroom reads its daemon as not running"
}

// parseEntry checks a DaemonAgentEntry: a positive pid, a harness, an ISO
// startedAt.
func parseEntry(raw json.RawMessage) (agentEntry, error) {
	var e agentEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, err
	}
	switch {
	case e.PID == nil:
		return e, errors.New("pid: required")
	case *e.PID <= 0:
		return e, fmt.Errorf("pid %d is not a process id", *e.PID)
	case e.Harness == nil || *e.Harness == "":
		return e, errors.New("harness: required")
	case e.StartedAt == nil:
		return e, errors.New("startedAt: required")
	}
	if _, err := parseTime(*e.StartedAt); err != nil {
		return e, fmt.Errorf("startedAt: %w", err)
	}
	return e, nil
}

// parsePID reads a pid file as the CLI's readPid does: decimal, surrounding
// space ignored, positive.
func parsePID(b []byte) (int, error) {
	s := strings.TrimSpace(string(b))
	pid, err := strconv.Atoi(s)
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%q is not a pid", s)
	}
	return pid, nil
}

// parseTime reads new Date().toISOString() (and any RFC 3339 time).
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an ISO 8601 time", s)
	}
	return t, nil
}

// pidIs says what process the entry's pid is, by harness (the harness
// services under packages/cli/src/daemon/infrastructure/local/harness).
func pidIs(harness string) string {
	switch harness {
	case "opencode-sdk":
		return "the agent's own `opencode serve`"
	case "claude-sdk", "codex-sdk", "cursor-sdk", "pi-sdk":
		return "a keeper process: the session runs inside the daemon"
	}
	return "the agent's CLI process"
}

func daemonFields(m *machine, updated string, agents int) []model.Field {
	f := []model.Field{{Name: "machine", Value: m.id}}
	if m.hostname != "" {
		f = append(f, model.Field{Name: "hostname", Value: m.hostname})
	}
	if m.url != "" {
		f = append(f, model.Field{Name: "backend", Value: m.url})
	}
	pidFile := "none"
	if m.pidFile != "" {
		pidFile = filepath.Base(m.pidFile)
	}
	f = append(f, model.Field{Name: "pid file", Value: pidFile})
	if updated != "" {
		f = append(f, model.Field{Name: "state updated", Value: updated})
	}
	return append(f, model.Field{Name: "agents", Value: strconv.Itoa(agents)})
}

func quoteOrAbsent(s *string) string {
	if s == nil {
		return "absent"
	}
	return strconv.Quote(*s)
}
