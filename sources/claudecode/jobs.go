package claudecode

import (
	"os"
	"strings"

	"github.com/dispatchtop/dispatchtop/model"
)

// jobFile is jobs/<id>/state.json, a background job of `claude agents`.
type jobFile struct {
	State           *string `json:"state"`
	SessionID       *string `json:"sessionId"`
	Name            *string `json:"name"`
	Detail          *string `json:"detail"`
	Intent          *string `json:"intent"`
	CWD             *string `json:"cwd"`
	CreatedAt       *string `json:"createdAt"`
	UpdatedAt       *string `json:"updatedAt"`
	FirstTerminalAt *string `json:"firstTerminalAt"`
	CLIVersion      *string `json:"cliVersion"`
}

// jobNode is what a job's node is made of, allocated as one block: the
// node, its heartbeat, its rare facts and its fields, four allocations a
// job made one (a home's hundreds of jobs are read at each --once; SPEC
// §8, the agents' stores).
type jobNode struct {
	node   model.Node
	hb     model.Heartbeat
	rare   model.Rare
	fields [jobFields]model.Field
}

// jobFields is the most fields a job has.
const jobFields = 8

func (r *reader) readJobs() {
	r.eachRecordEntry(jobsDir, func(d recordDir, e os.DirEntry) {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			return // pins.json and the like
		}
		path := d.path + sep + e.Name() + sep + jobState
		r.readJob(d, e.Name(), path[len(d.path)+1:], path) // its name in d: a slice, no second string
	})
}

// readJob maps a job's state onto a node under the session that owns it:
// the record name of the jobs' dir d, whose path is path.
func (r *reader) readJob(d recordDir, id, name, path string) {
	var jf jobFile
	_, fi, ok := r.readRecordAt(d, name, path, &jf)
	if !ok {
		return // a spare worker dir with no state.json yet, or a problem said
	}
	// The node's id made in one string, under its owner's when it has one.
	owner := r.sessionNode(str(jf.SessionID))
	var nodeID string
	if owner != nil {
		nodeID = owner.ID + "/job-" + id
	} else {
		nodeID = "job-" + id
	}
	blk := &jobNode{hb: model.Heartbeat{Role: "job", HasParentField: true}}
	n := &blk.node
	*n = model.Node{
		ID:            nodeID,
		HeartbeatPath: path,
		HasHeartbeat:  true,
		Source:        string(Kind),
		BeatMtime:     isoTime(jf.UpdatedAt),
		Heartbeat:     &blk.hb,
		// No pid: the job runs in Claude Code's daemon. Its state, not its
		// age, says when it ended.
		Traits: model.Traits{BeatNotRequired: true, SignOfLife: model.SignUpdate},
	}
	if n.BeatMtime.IsZero() {
		n.BeatMtime = fi.ModTime
	}
	if owner != nil {
		n.Heartbeat.ParentHeartbeat = owner.HeartbeatPath
	}
	state := str(jf.State)
	switch state {
	case "working", "running":
		n.Heartbeat.Status = model.StatusRunning
	case "blocked":
		n.Heartbeat.Status = model.StatusRunning
		q := str(jf.Detail)
		if q == "" {
			q = "blocked"
		}
		n.Blocked = &model.Blocked{Path: path, Question: q, Kind: "claude-code job"}
	case "done":
		n.Heartbeat.Status = model.StatusCompleted
	case "stopped", "failed", "killed":
		n.Heartbeat.Status = model.StatusWithdrawn
	default:
		r.problem(path, "read %s: state: %s is not one of working, blocked, done, stopped, failed, killed", path, absentOrQuoted(jf.State))
		n.Heartbeat.Status = state
		if jf.State == nil {
			n.Heartbeat.Status = "(absent)"
		}
	}
	ending := ""
	if n.Heartbeat.Status == model.StatusWithdrawn {
		ending = state
		if d := str(jf.Detail); d != "" {
			ending += ": " + d
		}
	}
	blk.rare = model.Rare{Ending: ending, SourceFields: appendFields(blk.fields[:0],
		"job", id,
		"state", state,
		"name", str(jf.Name),
		"session id", str(jf.SessionID),
		"cwd", str(jf.CWD),
		"created at", str(jf.CreatedAt),
		"first terminal at", str(jf.FirstTerminalAt),
		"version", str(jf.CLIVersion),
	)}
	n.Rare = &blk.rare // never empty: its fields name the job
	r.facts.Nodes = append(r.facts.Nodes, n)
}
