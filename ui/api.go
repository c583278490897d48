package ui

import (
	"context"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/themes"
)

// Update is one change of the forest as the live engine reports it: the new
// snapshot, the ids that changed and the state transitions among them.
type Update struct {
	Snapshot    *model.Snapshot
	Changed     []string
	Transitions []model.Transition
	// Hosts is a fleet view's reachability (dispatchtop --remote); nil
	// keeps what the previous update said.
	Hosts []Host
}

// Host is one host of a fleet view: the top-level node whose id is Name
// holds that host's sessions (their ids prefixed "Name/"), and is shown as
// a host row rather than a node; the header says which hosts answer.
type Host struct {
	Name      string
	Reachable bool
	// Since is when the current reachability began (unreachable since).
	Since time.Time
	Err   string // why it is unreachable
}

// Feed delivers updates. The channel closing ends the feed (the screen keeps
// the last snapshot). The cli adapts the scanner's watcher to it.
type Feed interface {
	Updates() <-chan Update
}

// Refresher is a Feed that can be asked to re-read now (after an action).
type Refresher interface {
	Refresh()
}

// ActionRequest asks the recovery engine for one action on one node.
type ActionRequest struct {
	Action model.Action // kill, resume, compact, merge
	NodeID string       // the id captured when the dialog opened
	Tree   bool         // kill the subtree
	DryRun bool
}

// ActionResult is what the engine did or would do.
type ActionResult struct {
	Action  model.Action
	NodeID  string
	Refused bool     // a precondition failed
	Message string   // one line
	Plan    []string // the dry-run text, one step a line
}

// Runner runs actions: the recovery engine behind an adapter.
type Runner interface {
	Run(ctx context.Context, req ActionRequest) (ActionResult, error)
}

// JournalLoader returns the journal lines that concern a node, oldest
// first. It reads files, so the ui only calls it from a command.
type JournalLoader func(ctx context.Context, n *model.Node) ([]string, error)

// Options build the program's model.
type Options struct {
	// Context bounds the actions and journal reads started from the ui.
	Context context.Context
	// Initial is shown before the first update arrives (may be nil).
	Initial *model.Snapshot
	Feed    Feed // nil: a still picture of Initial
	Runner  Runner
	Journal JournalLoader
	// Readonly disables every action key (they vanish from help).
	Readonly bool
	// Themes is the set `t` cycles through; empty means the built-ins.
	Themes themes.Set
	// Now is the clock (time.Now when nil); ages are measured against it.
	Now func() time.Time
	// Tick is how often ages and the clock are redrawn without any file
	// event (1 s when zero; negative disables, for tests).
	Tick time.Duration
	// Notes are extra header notes from the cli (a theme error, say).
	Notes []string
	// Hosts, when not empty, make this a fleet view: the top-level nodes
	// are hosts (see Host). Updates may bring newer reachability.
	Hosts []Host
}
