package ui

import (
	"context"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/themes"
)

// MaxFPS caps how many frames a second the program's renderer draws (its
// tea.WithFPS). Bubble Tea's renderer wakes at that rate for the program's
// whole life, idle or not, and those wakes are most of an idle dashboard's
// CPU (SPEC §8: ≤ 0.5 % of a core with 10,000 nodes): each costs about as
// much at 25 as at 60, so the rate is the cost. At 25 a frame reaches the
// terminal within 40 ms of its View: a touch right after an update (held
// for the watcher's 10 ms debounce) is on screen within the 60 ms of SPEC
// §8, a key press within a frame of its own View.
const MaxFPS = 25

// Feed delivers updates (model.Update states what a slow reader gets). The
// channel closing ends the feed (the screen keeps the last snapshot). The
// live engine (scanner.Watcher) and a fleet (remote.Fleet) are feeds.
type Feed interface {
	Updates() <-chan model.Update
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

// NodeDirReader reads a node's infra dir afresh, its files' bytes kept
// (scanner.ReadNodeDir). It reads files, so the ui only calls it from a
// command.
type NodeDirReader func(root, dir string) (*model.Node, error)

// Options build the program's model.
type Options struct {
	// Context bounds the actions and journal reads started from the ui.
	Context context.Context
	// Initial is shown before the first update arrives (may be nil).
	Initial *model.Snapshot
	Feed    Feed // nil: a still picture of Initial
	Runner  Runner
	Journal JournalLoader
	// Output reads a node's output tail for the details and finds the file
	// `o` pages; nil (a remote view) shows none.
	Output OutputReader
	// Files reads, when the details open, the bytes of the node's files
	// that the live engine does not keep: the heartbeat as read, the
	// node's line in its parent's registry, the CfA history. Nil (a remote
	// view) reads none: the details show what the nodes hold.
	Files NodeDirReader
	// Answer writes an answer where a blocked node's system reads it and
	// journals it; nil (a remote view) writes none.
	Answer AnswerWriter
	// Editor is the operator's $EDITOR, split at spaces (no shell): `a`
	// opens it on a draft that quotes the question; empty, `a` opens an
	// editor in the dashboard.
	Editor string
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
	// Hosts, when not empty, make this a fleet view: the top-level node
	// named after each host stands for it and is shown as a host row; the
	// header says which hosts answer. Updates may bring newer reachability.
	Hosts []model.Host
	// Released, when set, is called in a command (off the program's loop)
	// once the model has let go of a snapshot most of whose sessions the
	// new one renewed: a forest's nodes are garbage from then on (a fleet
	// crossing a threshold together, a refresh of most sessions). The
	// dashboard collects then (SPEC §8 memory).
	Released func()
}
