package demo

import "github.com/dispatchtop/dispatchtop/model"

// Node is one node of the demo fleet as its scenario lays it out: its id
// relative to the fleet's directory (`.sessions/…`, `.teaparty/jobs/…`; a
// bus worker is `<job>/dispatch:<session id>`, as TeaParty names its row),
// the role and team it shows, and whether it is a legacy writer (no
// heartbeat: no role shown).
type Node struct {
	ID, Role, Team string
	Legacy         bool
	State          model.State // what it settles at: running, or how it ends
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
