package actions

import (
	"context"
	"fmt"
	"strings"

	"github.com/dispatchtop/dispatchtop/model"
)

// Step is one recommended action of the recovery scan (SPEC §3).
type Step struct {
	NodeID string
	Root   string
	Action model.Action
	State  model.State
	PID    int
	Reason string
}

// actionable are the recommendations recover can carry out; the others
// (answer, surface) need a person and are listed for them.
var actionable = map[model.Action]bool{
	model.ActionKill: true, model.ActionResume: true, model.ActionMerge: true, model.ActionCompact: true,
}

// Plan scans the roots and lists every node whose recommended action is not
// none or wait, in forest order.
func (e *Engine) Plan(_ context.Context) ([]Step, error) {
	steps, _, err := e.plan()
	return steps, err
}

func (e *Engine) plan() ([]Step, *model.Snapshot, error) {
	snap, err := e.scanRoots()
	if err != nil {
		return nil, nil, err
	}
	var steps []Step
	for _, s := range snap.Sessions {
		s.Walk(func(n *model.Node) {
			switch n.Action {
			case model.ActionNone, model.ActionWait, "":
				return
			}
			steps = append(steps, Step{NodeID: n.ID, Root: n.Root, Action: n.Action, State: n.State, PID: n.PID(), Reason: n.Reason})
		})
	}
	return steps, snap, nil
}

// NoTreeError is Recover's answer when the roots hold no tree at all: a
// recovery run from the wrong directory must not pass as "nothing to do"
// (SPEC §4). The caller decides whether an empty forest is accepted.
type NoTreeError struct {
	Roots []string
}

func (e *NoTreeError) Error() string {
	return fmt.Sprintf("no tree found under %s", strings.Join(e.Roots, ", "))
}

// Recover runs the recovery scan. Without apply every actionable step is a
// dry run; with apply merge, resume and compact are carried out, and kill
// only when killStalled is set. Every step is re-checked by Run at
// execution time, and refused unless the node still recommends the action
// planned for it. Steps that need a person (answer, surface) come back as
// skipped results that say so.
func (e *Engine) Recover(ctx context.Context, apply, killStalled bool) ([]Result, error) {
	steps, snap, err := e.plan()
	if err != nil {
		return nil, err
	}
	if len(snap.Sessions) == 0 {
		return nil, &NoTreeError{Roots: snap.Roots}
	}
	if err := e.step("recover:planned"); err != nil {
		return nil, err
	}
	if apply && !e.opts.Readonly {
		e.finishCompactions(snap)
	}
	// Each step re-reads its node at execution; where its session is
	// self-contained, only that session's directory is read again.
	scopes := sessionScopes(snap)
	var out []Result
	for _, st := range steps {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		base := Result{Action: st.Action, NodeID: st.NodeID, Root: st.Root, PID: st.PID, Outcome: OutcomeSkipped}
		if !actionable[st.Action] {
			base.Message = fmt.Sprintf("needs a person: %s", st.Reason)
			out = append(out, base)
			continue
		}
		req := Request{Action: st.Action, Node: st.NodeID, DryRun: !apply, scope: scopes[st.NodeID], planned: st.Action}
		if st.Action == model.ActionKill && apply && !killStalled {
			base.Message = "not killed without --kill-stalled: " + st.Reason
			out = append(out, base)
			continue
		}
		r, err := e.Run(ctx, req)
		if err != nil && r.Message == "" {
			r.Outcome, r.Message = OutcomeFailed, err.Error()
		}
		if r.NodeID == "" {
			r.NodeID, r.Action, r.Root = st.NodeID, st.Action, st.Root
		}
		out = append(out, r)
	}
	return out, nil
}
