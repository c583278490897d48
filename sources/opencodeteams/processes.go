package opencodeteams

// An agent's processes. opencode-teams records no agent pid, but it names
// the two processes an agent lives by: the tmux pane spawnAgent splits for
// it (paneId, and the pane option @opencode_session_id it sets to the
// agent's session, src/operations/agent.ts L253-267), where
// `opencode attach` is typed into the pane's shell; and the shared
// `opencode serve` that runs every agent's session, whose pid and
// startedAt ServerManager.ensureRunning records in
// servers/<md5(project path)>/server.json (src/operations/server-manager.ts
// L95-161). The system itself ends an agent by killing its pane
// (forceKill: `tmux kill-pane`, agent.ts L373-379) and calls a server
// whose pid is gone, or that is marked isRunning false, not running
// (ServerManager.status, server-manager.ts L318-334). A pane gone, or a
// server dead, is a dead agent; a live pane is the agent's process.

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/internal/tmuxpanes"
)

// sessionOption is the pane option spawnAgent sets to the agent's session
// id (agent.ts L266; recoverContextLimit sets it anew when it rotates the
// session, L744): what tells the agent's pane from another pane that got
// its id on another, or a restarted, tmux server.
const sessionOption = "@opencode_session_id"

// serverStartLag is how long after `opencode serve` is spawned
// ensureRunning may stamp its startedAt: it waits up to 5 s for the
// server to answer first (waitForServer, server-manager.ts L139).
const serverStartLag = 5 * time.Second

// startTolerance is the slack either side of that window, as a heartbeat's
// (SPEC §3 start-tolerance).
const startTolerance = 2 * time.Second

// Lookup says where an agent's processes are looked up.
type Lookup struct {
	// SocketDir holds the sockets of the tmux servers asked: every one of
	// them ("": tmux's own, $TMUX_TMPDIR or /tmp, then tmux-<uid>; the
	// plugin's bare `tmux` calls reach a server there, the default one or
	// the one of the client opencode runs in).
	SocketDir string
	// Timeout bounds each server's answer (0: tmuxpanes.DefaultTimeout).
	Timeout time.Duration
	// RecordsOnly: neither tmux nor the servers' processes are asked, as
	// when they cannot be: no pane or server is found or lost, and each
	// agent is judged by its record alone.
	RecordsOnly bool
	// OpencodeDB is the OpenCode database whose sessions the agents name
	// ("": OpenCode's default place; see sessionBeats).
	OpencodeDB string
}

// paneLookup is one read's answer from the tmux servers: every pane by
// id, with the socket of its server; err when some server could not be
// asked (then a pane found nowhere may be on it).
type paneLookup struct {
	byID map[string][]paneAt
	err  error
}

type paneAt struct {
	socket string
	pane   tmuxpanes.Pane
}

// askPanes asks every tmux server of the socket dir once.
func (p *Lookup) askPanes() paneLookup {
	dir, timeout := "", time.Duration(0)
	if p != nil {
		dir, timeout = p.SocketDir, p.Timeout
	}
	if dir == "" {
		dir = tmuxpanes.SocketDir(os.Getenv)
	}
	socks, err := tmuxpanes.Sockets(dir)
	if err != nil {
		return paneLookup{err: err}
	}
	out := paneLookup{byID: map[string][]paneAt{}}
	for _, sock := range socks {
		panes, err := tmuxpanes.List(sock, sessionOption, timeout)
		switch {
		case errors.Is(err, tmuxpanes.ErrNoServer):
			continue // its panes are gone with it
		case err != nil:
			out.err = err
			if errors.Is(err, tmuxpanes.ErrNoTmux) {
				return out
			}
			continue
		}
		for _, pane := range panes {
			out.byID[pane.ID] = append(out.byID[pane.ID], paneAt{socket: sock, pane: pane})
		}
	}
	return out
}

// agentProcess is what the agent's pane and server say of it.
type agentProcess struct {
	pid     int
	started float64
	// ended: what the system's own rule says ended (model.Rare.Ended).
	ended string
	// fields: what was found, for the detail pane ("tmux", "server").
	fields []model.Field
}

// liveStatus: a record that may still have a process (inactive and
// terminated say it stopped).
func liveStatus(status string) bool {
	return status != statusInactive && status != statusTerminated
}

// processes judges each live agent's pane and server: tmux is asked once,
// and each server file read once, for the whole read. It returns the
// judge, whose server files a read of a few agents uses again.
func (s Source) processes(store string, agents []*agentFile, facts *sources.Facts) (map[string]agentProcess, *judge) {
	out := map[string]agentProcess{}
	if s.Lookup != nil && s.Lookup.RecordsOnly {
		return out, nil
	}
	j := &judge{lookup: s.Lookup, store: store, servers: map[string]*serverFile{}, byCwd: map[string]*serverFile{}}
	for _, a := range agents {
		if ap, ok := j.agent(a, facts); ok {
			out[a.path] = ap
		}
	}
	return out, j
}

// judge is what a read asks of the agents' processes, each once: tmux for
// its panes, when an agent has one; each project's server file; each
// pid's create time.
type judge struct {
	lookup  *Lookup
	store   string
	panes   *paneLookup
	servers map[string]*serverFile // by path; nil: absent or failing
	byCwd   map[string]*serverFile
	starts  map[int]processStart
}

type processStart struct {
	at  float64
	err error
}

// again is j for another read: the server files it read (their dir is
// watched: a read after one of them moved judges every agent anew), the
// panes and the processes' create times asked again.
func (j *judge) again() *judge {
	if j == nil {
		return nil
	}
	return &judge{lookup: j.lookup, store: j.store, servers: j.servers, byCwd: j.byCwd}
}

// started is the create time of pid, asked once a read.
func (j *judge) started(pid int) (float64, error) {
	if st, ok := j.starts[pid]; ok {
		return st.at, st.err
	}
	at, err := protocol.ProcessStarted(pid)
	if j.starts == nil {
		j.starts = map[int]processStart{}
	}
	j.starts[pid] = processStart{at, err}
	return at, err
}

// agent judges one agent's pane and server; ok is false when neither said
// anything. A server file read for it that fails is a problem in facts.
func (j *judge) agent(a *agentFile, facts *sources.Facts) (agentProcess, bool) {
	var ap agentProcess
	if !liveStatus(a.state.Status) {
		return ap, false
	}
	if a.state.PaneID != "" {
		if j.panes == nil {
			l := j.lookup.askPanes()
			j.panes = &l
		}
		judgePane(&ap, a.state, *j.panes, j.started)
	}
	if ap.ended == "" && a.state.Cwd != "" {
		// Agents share their project's server: its file is named
		// (an md5 of the cwd) and read once a read, not once an agent.
		srv, ok := j.byCwd[a.state.Cwd]
		if !ok {
			srv = readServer(j.store, a.state.Cwd, j.servers, facts)
			j.byCwd[a.state.Cwd] = srv
		}
		judgeServer(&ap, a.state, srv, j.started)
	}
	return ap, ap.pid != 0 || ap.ended != "" || len(ap.fields) > 0
}

// judgePane finds the agent's pane: its id on a server, carrying the
// agent's session. Found live, its pid and create time are the agent's
// process; found exited, or on no server while every server answered, the
// agent is dead. A pane of that id carrying another session, or a server
// that could not be asked, proves nothing.
func judgePane(ap *agentProcess, a agentState, l paneLookup, started func(int) (float64, error)) {
	note := func(s string) { ap.fields = append(ap.fields, model.Field{Name: "tmux", Value: s}) }
	var others []string
	for _, at := range l.byID[a.PaneID] {
		if at.pane.Option != a.SessionID {
			others = append(others, at.socket)
			continue
		}
		if at.pane.Dead {
			ap.ended = "tmux pane " + a.PaneID + " exited (server " + filepath.Base(at.socket) + ")"
			return
		}
		st, err := started(at.pane.PID)
		if err != nil {
			// Gone between the two questions, or unreadable: no pid is
			// better than one that cannot be told from a reuse.
			note("pane " + a.PaneID + " pid " + strconv.Itoa(at.pane.PID) + ": " + err.Error())
			return
		}
		ap.pid, ap.started = at.pane.PID, st
		note("pane " + a.PaneID + " on " + at.socket + ", pid " + strconv.Itoa(at.pane.PID))
		return
	}
	switch {
	case l.err != nil:
		note("pane " + a.PaneID + " not looked up: " + l.err.Error())
	case len(others) > 0:
		note("pane " + a.PaneID + " on " + strings.Join(others, ", ") + " is not this agent's (its " + sessionOption + " differs)")
	default:
		ap.ended = "tmux pane " + a.PaneID + " gone: no tmux server of this user holds it"
	}
}

// serverFile is one servers/<hash>/server.json, validated as
// ServerInfoSchema (src/types/schemas.ts L342-362); nil when absent or
// failing the schema (a problem then names it).
type serverFile struct {
	path      string
	pid       int
	port      int
	isRunning bool
	startedAt time.Time
}

// readServer reads the server file of the agent's project:
// servers/<md5(resolve(cwd))>/server.json, as ensureRunning names it from
// the cwd spawnAgent gives it (agent.ts L220-223, server-manager.ts L72-74,
// src/utils/storage-paths.ts L196-200).
func readServer(store, cwd string, cache map[string]*serverFile, facts *sources.Facts) *serverFile {
	sum := md5.Sum([]byte(filepath.Clean(cwd)))
	path := filepath.Join(store, serversDir, hex.EncodeToString(sum[:]), "server.json")
	if srv, ok := cache[path]; ok {
		return srv
	}
	cache[path] = nil
	b, err := protocol.ReadFile(path, protocol.MaxDocumentSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var srv serverFile
	if err == nil {
		srv, err = parseServerInfo(b)
		if err != nil {
			err = fmt.Errorf("read %s: %w", path, err)
		}
	}
	if err != nil {
		facts.Problems = append(facts.Problems, model.Problem{Path: path, Error: err.Error()})
		return nil
	}
	srv.path = path
	cache[path] = &srv
	return &srv
}

// judgeServer: the agent's session runs in its project's server. One the
// system calls not running (isRunning false, or its pid gone), or whose
// pid is another process than the one started at startedAt, took the
// agent's work with it.
func judgeServer(ap *agentProcess, a agentState, srv *serverFile, started func(int) (float64, error)) {
	if srv == nil || srv.port != a.ServerPort {
		return
	}
	pid := strconv.Itoa(srv.pid)
	ap.fields = append(ap.fields, model.Field{Name: "server", Value: "opencode serve pid " + pid + " since " + formatTime(srv.startedAt) + " (" + srv.path + ")"})
	if !srv.isRunning {
		ap.ended = "opencode serve stopped (server.json: isRunning false)"
		return
	}
	st, err := started(srv.pid)
	switch {
	case errors.Is(err, protocol.ErrProcessGone):
		ap.ended = "opencode serve pid " + pid + " gone"
	case err != nil:
		// Unreadable: nothing is concluded.
	case !sameServer(st, srv.startedAt):
		ap.ended = "opencode serve pid " + pid + " is another process now (created " +
			formatTime(time.Unix(0, int64(st*1e9))) + ")"
	}
}

// sameServer: a process created within [startedAt − serverStartLag −
// tolerance, startedAt + tolerance] is the server ensureRunning started.
func sameServer(created float64, startedAt time.Time) bool {
	if math.IsNaN(created) || math.IsInf(created, 0) {
		return false
	}
	c := time.Unix(0, int64(created*1e9))
	return !c.Before(startedAt.Add(-serverStartLag-startTolerance)) && !c.After(startedAt.Add(startTolerance))
}

// parseServerInfo validates ServerInfoSchema: pid a positive integer, port
// 28000-28999, isRunning a boolean, startedAt a UTC datetime, the project
// path and hash non-empty.
func parseServerInfo(b []byte) (serverFile, error) {
	raw, err := object(b)
	if err != nil {
		return serverFile{}, err
	}
	f := fields{raw: raw}
	f.str("projectPath", true)
	f.str("projectHash", true)
	srv := serverFile{
		pid:       f.integer("pid", true, 1, math.MaxInt32, 0),
		port:      f.integer("port", true, 28000, 28999, 0),
		isRunning: f.boolean("isRunning"),
		startedAt: f.datetime("startedAt", true),
	}
	f.str("hostname", false)
	f.integer("activeSessions", false, 0, -1, 0)
	f.str("logPath", false)
	f.datetime("lastHealthCheck", false)
	return srv, f.err
}
