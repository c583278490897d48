package demo

import (
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources/claudecode"
)

// Node is one node of the demo fleet as its scenario lays it out: its id
// relative to the fleet's directory (`.sessions/…`, `.teaparty/jobs/…`; a
// bus worker is `<job>/dispatch:<session id>`, as TeaParty names its row),
// the role and team it shows, and whether it is a legacy writer (no
// heartbeat: no role shown).
type Node struct {
	ID, Role, Team string
	Legacy         bool
	State          model.State // what it settles at: running, or how it ends
	// Source is the source that reads it ("" the file protocol or
	// TeaParty's bus); a Claude Code node's id is `.claude/<session id>`,
	// a member's and a job's below it, as the text view of the root
	// shows them.
	Source string
}

// Layout is every node the demo fleet shows, in the scenario's order: what
// the README's screenshot draws, so a test can hold the two together.
func Layout() []Node {
	var out []Node
	for _, d := range scenario() {
		out = append(out, Node{ID: d.id, Role: d.role, Team: d.team, Legacy: d.legacy, State: settles(d.behave, d.registerOnly)})
	}
	job := busJob()
	for _, w := range job.workers {
		out = append(out, Node{ID: job.lead + "/dispatch:" + w.sid, Role: w.role, Team: job.project, State: settles(w.behave, false)})
	}
	claude := string(claudecode.Kind)
	for _, s := range claudeScenario() {
		id := ClaudeHome + "/" + s.id
		state := model.StateRunning
		if s.crashAt > 0 {
			state = model.StateDead
		}
		out = append(out, Node{ID: id, Role: "interactive", State: state, Source: claude})
		for _, m := range s.members {
			state := model.StateRunning
			if m.doneAt > 0 {
				state = model.StateFinished
			}
			out = append(out, Node{ID: id + "/" + m.name, Role: m.agentType, Team: s.team, State: state, Source: claude})
		}
		if s.job != "" {
			state := model.StateRunning
			if s.jobDoneAt > 0 {
				state = model.StateFinished
			}
			out = append(out, Node{ID: id + "/job-" + s.job, Role: "job", State: state, Source: claude})
		}
	}
	return out
}

// settles is the state a behaviour ends in.
func settles(behave string, registerOnly bool) model.State {
	switch {
	case registerOnly:
		return model.StateMissing
	case behave == BehaveComplete || behave == BehaveWithdraw:
		return model.StateFinished
	case behave == BehaveCrash:
		return model.StateDead
	}
	return model.StateRunning
}
