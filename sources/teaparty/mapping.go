package teaparty

// Mapping a bus row onto node facts: keys and parents, status, the traits
// each kind of conversation carries, a job's gate, the fields shown.

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
)

// key is a row's key across every store of the host. A job's row is keyed
// by its job's `.heartbeat`, the key of the native lead (see the package
// doc); every other row by its database and id.
func key(r *row) string {
	if r.typ == typeJob && r.bus.job != "" {
		return filepath.Join(r.bus.job, protocol.HeartbeatFile)
	}
	return r.bus.path + "#" + r.id
}

// parentKey is the key of the row's parent: that of the row of that id in
// the same bus (keys: the bus's rows' keys by id), or, for a parent absent
// from the bus, the key it would have there (the scanner finds no node:
// the child is orphaned).
func parentKey(r *row, keys map[string]string) string {
	if r.parent == "" {
		return ""
	}
	if k, ok := keys[r.parent]; ok {
		return k
	}
	return r.bus.path + "#" + r.parent
}

// node maps one row onto node facts; nil for a row that is not a node of
// its own (a job row whose lead the native reader shows). l is a read's
// (see homeState).
func node(l layout, r *row, keys map[string]string) *model.Node {
	jobLead := r.typ == typeJob && r.bus.job != ""
	if jobLead && exists(filepath.Join(r.bus.job, protocol.HeartbeatFile)) {
		return gate(l, r)
	}
	started, startedErr := startedOf(r)
	hb := &model.Heartbeat{
		PID:               r.pid,
		Started:           started,
		Status:            status(r),
		Role:              r.agent,
		HeartbeatOptional: model.OptionalOf(model.HeartbeatOptional{Team: r.project, TaskID: qualifier(r.id), Worktree: r.worktree}),
		ParentHeartbeat:   parentKey(r, keys),
		HasParentField:    true,
	}
	n := &model.Node{
		ID:            storeID(r),
		Root:          l.root,
		HeartbeatPath: r.key,
		HasHeartbeat:  true,
		Heartbeat:     hb,
		Source:        string(sources.TeaParty),
	}
	if startedErr != nil {
		n.AddProblem(model.Problem{Path: cmp.Or(r.pidFrom, r.bus.path), Error: startedErr.Error()})
	}
	created := epochSeconds(r.createdAt)
	n.BeatMtime = created
	// No beat column: the newest write of the agent's stream is its sign
	// of life, and it moves only while a turn runs.
	var phase string
	switch {
	case jobLead:
		n.InfraDir = r.bus.job
		if cfa, err := readCfa(r.bus.job); err == nil {
			n.Cfa = cfa
		} else if !errors.Is(err, fs.ErrNotExist) {
			n.AddProblem(model.Problem{Path: filepath.Join(r.bus.job, protocol.CfaFile), Error: err.Error()})
		}
		n.ActivityMtime = newestStream(r.bus.job)
	case r.typ == typeDispatch:
		if dir, streamed := sessionDir(l, r); dir != "" {
			n.InfraDir = dir
			n.ActivityMtime = streamed
			phase = readPhase(dir)
		}
	case chat(r):
		n.ActivityMtime = epochSeconds(r.lastMessage)
	}
	if n.ActivityMtime.After(n.BeatMtime) {
		n.BeatMtime = n.ActivityMtime
	}
	var pausedBy string
	switch {
	case !live(r.state):
	case phase == phaseComplete:
		// The worker gave its final reply; its row stays active until its
		// dispatcher closes it, merging its work.
		hb.Status = "completed"
	case l.pausedBy != "":
		// "Pause All" cancels the project's turns and leaves its rows
		// active, marking the project instead.
		hb.Status, pausedBy = "paused", l.pausedBy
		n.Traits.NoProcessExpected = true
	case phase == phaseAwaiting:
		// Between turns, waiting on the workers it dispatched: no process
		// runs until their replies relaunch it.
		hb.Status = "running"
		n.Traits.NoProcessExpected = true
	case chat(r):
		// A chat conversation (the office manager, a project lead) lives
		// as long as the bridge that holds it, with a process only while
		// it answers.
		hb.Status = "running"
		n.Traits.NoProcessExpected = true
	}
	if r.awaitingInput && r.state == stateActive {
		n.Blocked = r.question
	}
	if r.typ == typeProxy && live(r.state) {
		// An escalation is a question to a human, open until it is
		// answered; no process of its own runs meanwhile.
		n.Blocked = r.question
		if n.Blocked == nil {
			n.Blocked = &model.Blocked{Path: r.key}
		}
		if n.Blocked.Question == "" {
			n.Blocked.Question = "escalation " + r.requestID + " open"
		}
		n.Traits.NoProcessExpected = true
	}
	if n.Blocked != nil && n.Blocked.Since.After(n.BeatMtime) {
		n.BeatMtime = n.Blocked.Since
	}
	// A turn's pid: gone between turns while the engine lives.
	n.Traits.PIDPerTurn = r.typ == typeDispatch || r.typ == typeJob
	if r.state == statePaused {
		n.Traits.NoProcessExpected = true
	}
	// A job squash-merges its worktree into the project by itself; a
	// worker is merged by its dispatcher's CloseConversation.
	n.Traits.MergesItself = true
	// Its sign of life is its activity (a stream's write, a message, its
	// creation), nothing that beats.
	n.Traits.SignOfLife = model.SignActivity
	sf := fields(r, phase, pausedBy)
	n.EditRare(func(rare *model.Rare) { rare.SourceFields = sf })
	return n
}

// startedOf is the row's pid_started as a heartbeat's started. A REAL
// holds ±Inf, which is no number of seconds: started is then unknown (0,
// its pid unverified, never judged by it), and the error says where.
func startedOf(r *row) (float64, error) {
	if math.IsInf(r.pidStarted, 0) || math.IsNaN(r.pidStarted) {
		return 0, fmt.Errorf("read %s: conversation %s: pid_started %v is not a number of seconds: its pid is unverified",
			cmp.Or(r.pidFrom, r.bus.path), r.id, r.pidStarted)
	}
	return r.pidStarted, nil
}

// gate is the node of a job's question at a CfA gate when the job's lead is
// the native reader's node: the flag is on the job's row, which makes no
// node then, and the question must not be lost with it. It hangs under
// the lead, blocked, a human's to answer; no process runs for it. nil when
// the job waits on nothing.
func gate(l layout, r *row) *model.Node {
	if !r.awaitingInput || r.state != stateActive {
		return nil
	}
	b := r.question
	if b == nil {
		b = &model.Blocked{}
	}
	if b.Question == "" {
		b.Question = "the job waits for input at a gate"
	}
	n := &model.Node{
		ID:            storeID(r),
		Root:          l.root,
		HeartbeatPath: r.bus.path + "#" + r.id,
		HasHeartbeat:  true,
		Heartbeat: &model.Heartbeat{
			Status:            "running",
			Role:              r.agent,
			HeartbeatOptional: model.OptionalOf(model.HeartbeatOptional{Team: r.project, TaskID: qualifier(r.id)}),
			ParentHeartbeat:   r.key,
			HasParentField:    true,
		},
		BeatMtime: epochSeconds(r.createdAt),
		Blocked:   b,
		Source:    string(sources.TeaParty),
		Traits:    model.Traits{NoProcessExpected: true, MergesItself: true, SignOfLife: model.SignActivity},
	}
	if b.Since.After(n.BeatMtime) {
		n.BeatMtime = b.Since
	}
	sf := append(fields(r, "", ""), model.Field{Name: "gate", Value: "the job's lead waits for a human's answer"})
	n.EditRare(func(rare *model.Rare) { rare.SourceFields = sf })
	return n
}

// status maps a row's state onto the heartbeat vocabulary (SPEC §1): a
// live row with no pid has no process yet (or none stamped), so it is
// starting; closed is completed (merged, or closed by recovery).
func status(r *row) string {
	switch r.state {
	case statePending:
		return "starting"
	case stateActive:
		if r.pid <= 0 {
			return "starting"
		}
		return "running"
	case statePaused:
		return "paused"
	case stateClosed:
		return "completed"
	case stateWithdrawn:
		return "withdrawn"
	}
	return r.state // unknown: shown as written, flagged by the classifier
}

// chat: a conversation of the chat tier, neither a job, a dispatched
// worker nor an escalation.
func chat(r *row) bool {
	return r.typ != typeJob && r.typ != typeDispatch && r.typ != typeProxy
}

func live(state string) bool { return state == stateActive || state == statePending }

func fields(r *row, phase, pausedBy string) []model.Field {
	// Made on the stack, kept at its size: appended to, a million rows'
	// fields took a slab twice as large as they are.
	var held [12]model.Field
	f := append(held[:0],
		model.Field{Name: "conversation", Value: r.id},
		model.Field{Name: "type", Value: r.typ},
		model.Field{Name: "state", Value: r.state},
		model.Field{Name: "bus", Value: r.bus.path})
	f = model.AppendField(f, "parent", r.parent)
	f = model.AppendField(f, "request", r.requestID)
	f = model.AppendField(f, "project", r.project)
	if r.awaitingInput {
		f = model.AppendField(f, "awaiting_input", "1")
	}
	f = model.AppendField(f, "pid_recorded_in", r.pidFrom)
	f = model.AppendField(f, "phase", phase)
	f = model.AppendField(f, "paused_by", pausedBy)
	return slices.Clone(f)
}

// storeID is the row's id relative to the store: its bus's dir (see
// storeDir), then the conversation id.
func storeID(r *row) string {
	if r.bus.idDir == "" {
		return r.id
	}
	return path.Join(r.bus.idDir, r.id)
}

// storeDir is what the ids of a bus's rows begin with: the bus's dir
// relative to the root, "" for the root itself. A bus outside the root
// (the home's management buses, read for a jobs dir) is named from the
// home: an id never climbs out of its root with "..". Made once a bus,
// not once a row.
func storeDir(l layout, busPath string) string {
	dir := filepath.Dir(busPath)
	rel, err := filepath.Rel(l.root, dir)
	if err == nil && (rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))) && l.home != "" {
		rel, err = filepath.Rel(l.home, dir)
	}
	if err != nil || rel == "." {
		return ""
	}
	return filepath.ToSlash(rel)
}

// qualifier is what follows a conversation id's prefix ("dispatch:ab12":
// "ab12"), the session id of a worker.
func qualifier(id string) string {
	if _, q, ok := strings.Cut(id, ":"); ok {
		return q
	}
	return ""
}
