package ui

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/dispatchtop/dispatchtop/internal/glyph"
	"github.com/dispatchtop/dispatchtop/model"
)

// rollup is what lies beneath a node: the worst state, flag and action of
// its descendants, each with how many carry it. A collapsed row or a
// session row shows it, so a dead worker under a running lead is seen
// without expanding anything.
type rollup struct {
	state   model.State
	states  int
	flag    model.Flag
	flags   int
	action  model.Action
	actions int
}

func (r rollup) empty() bool { return r.states == 0 && r.flags == 0 && r.actions == 0 }

// stateRank orders states worst first.
func stateRank(s model.State) int {
	switch s {
	case model.StateDead:
		return 0
	case model.StateMissing:
		return 1
	case model.StateRunning:
		return 2
	case model.StateFinished:
		return 3
	}
	return 4
}

// flagRank orders flags worst first: what needs a person, then what
// makes a reading doubtful, then what is merely worth knowing.
var flagOrder = []model.Flag{
	model.FlagKillCandidate, model.FlagStalled, model.FlagBlocked, model.FlagOrphaned,
	model.FlagUnreadable, model.FlagConflict, model.FlagCycle, model.FlagPidUnverified,
	model.FlagClockSkew, model.FlagOutsideRoot, model.FlagUnknownStatus, model.FlagQuiet,
	model.FlagPaused, model.FlagStarting, model.FlagLegacy,
}

func flagRank(f model.Flag) int {
	for i, g := range flagOrder {
		if g == f {
			return i
		}
	}
	return len(flagOrder)
}

// actionRank orders actions most urgent first; none is last.
func actionRank(a model.Action) int {
	switch a {
	case model.ActionKill:
		return 0
	case model.ActionResume:
		return 1
	case model.ActionAnswer:
		return 2
	case model.ActionCompact:
		return 3
	case model.ActionMerge:
		return 4
	case model.ActionSurface:
		return 5
	case model.ActionWait:
		return 6
	}
	return 7
}

// needsAction is whether a node shows an action: any but none (`wait`
// included: the row says what the node waits for).
func needsAction(n *model.Node) bool {
	return n.Action != "" && n.Action != model.ActionNone
}

// operatorActs is what `n` and `N` stop at: an action the operator takes
// (kill, resume, answer, compact, merge, surface). A `wait` is its lead's
// or the clock's business, not the operator's.
func operatorActs(n *model.Node) bool {
	return needsAction(n) && n.Action != model.ActionWait
}

// rollupOf counts n's descendants (not n itself).
func rollupOf(n *model.Node) rollup {
	var r rollup
	var walk func(*model.Node)
	walk = func(p *model.Node) {
		for _, c := range p.Children {
			r.add(c)
			walk(c)
		}
	}
	walk(n)
	return r
}

func (r *rollup) add(n *model.Node) {
	switch d := cmp.Compare(stateRank(n.State), stateRank(r.state)); {
	case r.states == 0 || d < 0:
		r.state, r.states = n.State, 1
	case d == 0:
		r.states++
	}
	worst, found := model.Flag(""), false
	for _, f := range n.Flags {
		if !found || flagRank(f) < flagRank(worst) {
			worst, found = f, true
		}
	}
	if found {
		switch d := cmp.Compare(flagRank(worst), flagRank(r.flag)); {
		case r.flags == 0 || d < 0:
			r.flag, r.flags = worst, 1
		case d == 0:
			r.flags++
		}
	}
	if needsAction(n) {
		switch d := cmp.Compare(actionRank(n.Action), actionRank(r.action)); {
		case r.actions == 0 || d < 0:
			r.action, r.actions = n.Action, 1
		case d == 0:
			r.actions++
		}
	}
}

// String is the roll-up cell: `✖2 ◆1 ⊘1` (worst state, flag, action).
func (r rollup) String() string {
	if r.empty() {
		return ""
	}
	parts := make([]string, 0, 3)
	if r.states > 0 {
		parts = append(parts, fmt.Sprintf("%s%d", glyph.State(r.state), r.states))
	}
	if r.flags > 0 {
		parts = append(parts, fmt.Sprintf("%s%d", glyph.Flag(r.flag), r.flags))
	}
	if r.actions > 0 {
		parts = append(parts, fmt.Sprintf("%s%d", glyph.Action(r.action), r.actions))
	}
	return strings.Join(parts, " ")
}
