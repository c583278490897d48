package claudecode

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources/internal/tmuxpanes"
)

// Member backends (backendType) and the pane ids that are no tmux pane.
const (
	backendInProcess = "in-process"
	backendTmux      = "tmux"
	inboxesDir       = "inboxes"
)

// A tmux member's pane is split for it as it joins: its process is
// created within [joinedAt − paneBeforeJoin, joinedAt + paneAfterJoin].
// A pane of that id created outside the window is another pane that has
// (or had) the id, on another or a restarted server: never the member's,
// so never signalled as it.
const (
	paneBeforeJoin = 60 * time.Second
	paneAfterJoin  = 10 * time.Second
)

// teamFile is teams/<team>/config.json.
type teamFile struct {
	Name          *string           `json:"name"`
	LeadSessionID *string           `json:"leadSessionId"`
	Members       []json.RawMessage `json:"members"`
}

type teamMember struct {
	AgentID     *string  `json:"agentId"`
	Name        *string  `json:"name"`
	AgentType   *string  `json:"agentType"`
	Model       *string  `json:"model"`
	JoinedAt    *float64 `json:"joinedAt"`
	TmuxPaneID  *string  `json:"tmuxPaneId"`
	BackendType *string  `json:"backendType"`
	IsActive    *bool    `json:"isActive"`
	CWD         *string  `json:"cwd"`
}

// isLead: the team's config lists its lead among its members, with no
// pane and no backend: it is the lead's session, already a node.
func (m teamMember) isLead() bool {
	return str(m.AgentType) == "team-lead" || str(m.TmuxPaneID) == "" && str(m.BackendType) == ""
}

// backend is the member's backend: backendType, else what its pane id
// says (older configs have no backendType).
func (m teamMember) backend() string {
	if b := str(m.BackendType); b != "" {
		return b
	}
	switch p := str(m.TmuxPaneID); {
	case p == backendInProcess:
		return backendInProcess
	case strings.HasPrefix(p, "%"):
		return backendTmux
	}
	return ""
}

func (r *reader) readTeams() {
	dir := filepath.Join(r.store, teamsDir)
	var panes *paneLookup
	for _, e := range r.listDir(dir) {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		r.readTeam(e.Name(), filepath.Join(dir, e.Name()), &panes)
	}
}

// readTeam maps a team's members onto nodes under its lead's session; a
// lead whose session file is gone leaves a team node that is dead, so that
// its members still running are orphaned.
func (r *reader) readTeam(team, dir string, panes **paneLookup) {
	path := filepath.Join(dir, teamConfig)
	var tf teamFile
	_, fi, ok := r.readRecord(path, &tf)
	if !ok {
		return
	}
	if tf.LeadSessionID == nil {
		r.problem(path, "read %s: leadSessionId: absent: its members hang under no session", path)
	}
	mail := r.readInboxes(dir)
	lead := r.sessionNode(str(tf.LeadSessionID))
	var members []teamMember
	for i, raw := range tf.Members {
		var m teamMember
		if err := r.decodeFields(path, raw, &m); err != nil {
			r.problem(path, "read %s: members[%d]: %v: skipped", path, i, err)
			continue
		}
		if !m.isLead() {
			members = append(members, m)
		}
	}
	parentID, parentKey := "", ""
	if lead != nil {
		parentID, parentKey = lead.ID, lead.HeartbeatPath
	} else {
		t := &model.Node{
			ID:            "team-" + team,
			HeartbeatPath: path,
			HasHeartbeat:  true,
			Source:        string(Kind),
			BeatMtime:     fi.ModTime,
			Heartbeat:     &model.Heartbeat{Role: "team", Status: model.StatusRunning, HasParentField: true},
			Traits:        model.Traits{BeatNotRequired: true, SignOfLife: model.SignUpdate},
			Rare: &model.Rare{SourceFields: fields(
				"team", str(tf.Name),
				"lead session id", str(tf.LeadSessionID),
				"members", strconv.Itoa(len(members)),
			)},
		}
		active := 0
		for _, m := range members {
			if m.IsActive == nil || *m.IsActive {
				active++
			}
		}
		if active == 0 {
			t.Heartbeat.Status = model.StatusCompleted // every member finished
		} else {
			t.SetEnded("lead session " + str(tf.LeadSessionID) + " has no sessions/<pid>.json: its process is gone")
		}
		r.facts.Nodes = append(r.facts.Nodes, t)
		parentID, parentKey = t.ID, t.HeartbeatPath
	}
	for _, m := range members {
		if str(m.Name) == "" || strings.ContainsAny(str(m.Name), `/\`) {
			r.problem(path, "read %s: a member's name: %s: skipped", path, absentOrQuoted(m.Name))
			continue
		}
		r.readMember(path, team, m, lead, parentID, parentKey, mail[str(m.Name)], panes)
	}
}

// readMember maps one member onto a node.
func (r *reader) readMember(path, team string, m teamMember, lead *model.Node, parentID, parentKey string, mail memberMail, panes **paneLookup) {
	id := parentID + "/" + str(m.Name)
	if r.memberIDs[id] {
		// A lead of two teams (configs from before teams were one a
		// session) with a member of one name in each.
		id = parentID + "/" + team + "/" + str(m.Name)
	}
	r.memberIDs[id] = true
	n := &model.Node{
		ID:            id,
		HeartbeatPath: path + "#" + str(m.Name),
		HasHeartbeat:  true,
		Source:        string(Kind),
		BeatMtime:     millis(m.JoinedAt),
		Heartbeat: &model.Heartbeat{
			Role:              str(m.AgentType),
			Status:            model.StatusRunning,
			ParentHeartbeat:   parentKey,
			HasParentField:    true,
			HeartbeatOptional: model.OptionalOf(model.HeartbeatOptional{Team: team}),
		},
		// A member writes nothing as it works: its process (its lead's,
		// or its pane's) says it lives.
		Traits: model.Traits{BeatNotRequired: true, SignOfLife: model.SignStart},
	}
	if n.BeatMtime.IsZero() {
		if fi, err := os.Stat(path); err == nil {
			n.BeatMtime = fi.ModTime()
		}
	}
	backend := m.backend()
	process := ""
	switch {
	case m.IsActive != nil && !*m.IsActive:
		n.Heartbeat.Status = model.StatusCompleted
	case backend == backendInProcess:
		if lead == nil {
			n.SetEnded("in-process member: it lives and dies with its lead, whose session is gone")
			break
		}
		n.Heartbeat.PID, n.Heartbeat.Started = lead.Heartbeat.PID, lead.Heartbeat.Started
		n.Traits.StartSlack = lead.Traits.StartSlack
		process = "its lead's, pid " + strconv.Itoa(lead.Heartbeat.PID)
	case backend == backendTmux:
		if *panes == nil {
			l := r.askPanes()
			*panes = &l
		}
		pid, started, ended, note := judgePane(str(m.TmuxPaneID), millis(m.JoinedAt), **panes)
		n.Heartbeat.PID, n.Heartbeat.Started = pid, started
		if ended != "" {
			n.SetEnded(ended)
		}
		process = note
	default:
		process = "not looked up: backend " + quoted(backend) + " is no pane dispatchtop can ask"
	}
	shutdown := mail.shutdownNote()
	if mail.shutdown != "" && n.Ended() != "" {
		// It was asked to shut down, and went: it finished, it did not
		// crash.
		n.EditRare(func(rr *model.Rare) { rr.Ended = "" })
		n.Heartbeat.Status = model.StatusCompleted
		n.Heartbeat.PID, n.Heartbeat.Started = 0, 0
		n.EditRare(func(rr *model.Rare) { rr.Ending = shutdown })
	}
	if mail.plan != "" && n.Heartbeat.Status == model.StatusRunning {
		n.Blocked = &model.Blocked{Path: path, Question: "plan approval: " + mail.plan, Kind: "claude-code plan"}
	}
	if mail.idle() && n.Heartbeat.Status == model.StatusRunning {
		n.Traits.RecordIdle = true
	}
	active := "true"
	if m.IsActive != nil && !*m.IsActive {
		active = "false"
	} else if m.IsActive == nil {
		active = "(absent)"
	}
	n.EditRare(func(rr *model.Rare) {
		rr.SourceFields = fields(
			"team", team,
			"agent id", str(m.AgentID),
			"agent type", str(m.AgentType),
			"model", str(m.Model),
			"backend", backend,
			"tmux pane", str(m.TmuxPaneID),
			"process", process,
			"active", active,
			"cwd", str(m.CWD),
			"idle since", stamp(mail.idleAt, mail.idle()),
			"shutdown", shutdown,
		)
	})
	r.facts.Nodes = append(r.facts.Nodes, n)
}

// paneLookup is one read's answer from the user's tmux servers.
type paneLookup struct {
	byID map[string][]tmuxpanes.Pane
	err  error // some server could not be asked
}

// askPanes asks every tmux server of the user's socket dir once.
func (r *reader) askPanes() paneLookup {
	dir := r.socketDir
	if dir == "" {
		dir = tmuxpanes.SocketDir(os.Getenv)
	}
	socks, err := tmuxpanes.Sockets(dir)
	if err != nil {
		return paneLookup{err: err}
	}
	out := paneLookup{byID: map[string][]tmuxpanes.Pane{}}
	for _, sock := range socks {
		panes, err := tmuxpanes.List(sock, "", 0)
		switch {
		case errors.Is(err, tmuxpanes.ErrNoServer):
			continue
		case err != nil:
			out.err = err
			continue
		}
		for _, p := range panes {
			out.byID[p.ID] = append(out.byID[p.ID], p)
		}
	}
	return out
}

// judgePane finds a tmux member's pane: live on one server and created by
// the time the member joined, its process is the member's; exited, or on
// no server while every server answered, the member ended. A pane id on
// several servers, or one younger than the member, proves nothing.
func judgePane(id string, joined time.Time, l paneLookup) (pid int, started float64, ended, note string) {
	found := l.byID[id]
	switch {
	case len(found) == 1 && found[0].Dead:
		return 0, 0, "tmux pane " + id + " exited", "pane " + id + " exited"
	case len(found) == 1:
		p := found[0]
		st, err := protocol.ProcessStarted(p.PID)
		if err != nil {
			return 0, 0, "", "pane " + id + " pid " + strconv.Itoa(p.PID) + ": " + err.Error()
		}
		switch {
		case joined.IsZero():
			return 0, 0, "", "pane " + id + " pid " + strconv.Itoa(p.PID) + ": no joinedAt to tell it is the member's"
		case st > model.EpochSeconds(joined.Add(paneAfterJoin)):
			return 0, 0, "", "pane " + id + " was made after the member joined: not its pane"
		case st < model.EpochSeconds(joined.Add(-paneBeforeJoin)):
			return 0, 0, "", "pane " + id + " was made before the member joined: not its pane"
		}
		return p.PID, st, "", "pane " + id + ", pid " + strconv.Itoa(p.PID)
	case len(found) > 1:
		return 0, 0, "", "pane " + id + " is on " + strconv.Itoa(len(found)) + " tmux servers: not told apart"
	case l.err != nil:
		return 0, 0, "", "pane " + id + " not looked up: " + l.err.Error()
	}
	return 0, 0, "tmux pane " + id + " gone: no tmux server of this user holds it", "pane " + id + " gone"
}

// inboxMessage is one message of inboxes/<name>.json; protocol messages
// carry a JSON document in text (iliaal/compound-engineering-plugin
// plugins/compound-engineering/skills/orchestrating-swarms/references/message-formats.md).
type inboxMessage struct {
	From      string `json:"from"`
	Text      string `json:"text"`
	Timestamp string `json:"timestamp"`
}

type protocolMessage struct {
	Type      string `json:"type"`
	RequestID string `json:"requestId"`
	From      string `json:"from"`
	Timestamp string `json:"timestamp"`
}

// memberMail is what a team's inboxes say of one member.
type memberMail struct {
	plan       string    // the id of a plan_approval_request it sent, unanswered
	idleAt     time.Time // its newest idle_notification
	idleSeen   bool      // it sent one
	lastToIt   time.Time // the newest message in its own inbox
	shutdown   string    // "requested" or "approved": a shutdown_request to it not rejected
	shutdownAt time.Time
}

// idle: its newest idle_notification came after every message sent to
// it (a message wakes it).
func (m memberMail) idle() bool {
	return m.idleSeen && !m.lastToIt.After(m.idleAt)
}

// shutdownNote words a shutdown the member was asked for ("" none).
func (m memberMail) shutdownNote() string {
	if m.shutdown == "" {
		return ""
	}
	note := "shutdown " + m.shutdown
	if !m.shutdownAt.IsZero() {
		note += " at " + m.shutdownAt.UTC().Format(time.RFC3339)
	}
	return note
}

func stamp(t time.Time, ok bool) string {
	if !ok || t.IsZero() {
		if ok {
			return "(no timestamp)"
		}
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// readInboxes reads every inbox of the team: a plan_approval_request a
// member sent its lead with no plan_approval_response to it yet means the
// member waits for a human; an idle_notification it sent after the last
// message to it, that it is between turns; a shutdown_request to it that
// it did not reject, that it was asked to stop (and, gone since, it
// finished). Other types are ignored; a message that is no object, or a
// text that is a JSON document cut short, is a problem naming the inbox.
// Returns member name → its mail.
func (r *reader) readInboxes(dir string) map[string]memberMail {
	inboxes := filepath.Join(dir, inboxesDir)
	out := map[string]memberMail{}
	edit := func(name string, f func(*memberMail)) {
		m := out[name]
		f(&m)
		out[name] = m
	}
	requests := map[string]string{} // plan requestId → member
	answered := map[string]bool{}
	shutdowns := map[string]string{} // shutdown requestId → member
	replied := map[string]string{}   // shutdown requestId → shutdown_approved or shutdown_rejected
	var order []string
	for _, e := range r.listDir(inboxes) {
		if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		owner := strings.TrimSuffix(e.Name(), ".json")
		path := filepath.Join(inboxes, e.Name())
		var raws []json.RawMessage
		if _, _, ok := r.readJSON(path, &raws); !ok {
			continue
		}
		for i, raw := range raws {
			var msg inboxMessage
			if err := json.Unmarshal(raw, &msg); err != nil {
				r.problem(path, "read %s: message %d: %v: skipped", path, i, typeError(err))
				continue
			}
			at := isoTime(&msg.Timestamp)
			edit(owner, func(m *memberMail) {
				if at.After(m.lastToIt) {
					m.lastToIt = at
				}
			})
			text := strings.TrimSpace(msg.Text)
			if !strings.HasPrefix(text, "{") {
				continue // a plain message
			}
			var pm protocolMessage
			if err := json.Unmarshal([]byte(text), &pm); err != nil {
				if strings.HasSuffix(text, "}") {
					r.problem(path, "read %s: message %d: its text is a JSON document that does not parse (%v): skipped", path, i, err)
				}
				continue
			}
			if at.IsZero() {
				at = isoTime(&pm.Timestamp)
			}
			from := pm.From
			if from == "" {
				from = msg.From
			}
			switch pm.Type {
			case "plan_approval_request":
				if pm.RequestID != "" {
					requests[pm.RequestID] = from
					order = append(order, pm.RequestID)
				}
			case "plan_approval_response":
				answered[pm.RequestID] = true
			case "idle_notification":
				edit(from, func(m *memberMail) {
					if !m.idleSeen || at.After(m.idleAt) {
						m.idleAt, m.idleSeen = at, true
					}
				})
			case "shutdown_request":
				if pm.RequestID != "" {
					shutdowns[pm.RequestID] = owner
					edit(owner, func(m *memberMail) {
						if at.After(m.shutdownAt) || m.shutdown == "" {
							m.shutdownAt = at
						}
					})
				}
			case "shutdown_approved", "shutdown_rejected":
				replied[pm.RequestID] = pm.Type
			}
		}
	}
	for id, member := range shutdowns {
		switch replied[id] {
		case "shutdown_rejected":
			// It said no: it goes on.
		case "shutdown_approved":
			edit(member, func(m *memberMail) { m.shutdown = "approved" })
		default:
			edit(member, func(m *memberMail) {
				if m.shutdown == "" {
					m.shutdown = "requested"
				}
			})
		}
	}
	sort.Strings(order)
	for _, id := range order {
		if !answered[id] {
			edit(requests[id], func(m *memberMail) { m.plan = id })
		}
	}
	return out
}
