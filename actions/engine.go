package actions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// Request asks the engine for one action on one node.
type Request struct {
	Action model.Action  // kill, resume, compact or merge
	Node   string        // node id, infra dir or .heartbeat path
	All    bool          // compact: every registry under the roots
	Tree   bool          // kill: every running node below too, bottom-up
	Grace  time.Duration // kill: SIGTERM to SIGKILL; 10 s when zero
	Force  bool          // resume: override the retry budget (only the budget)
	DryRun bool          // say what would be done; change nothing

	// quietNoop: a compaction that removes nothing is not journaled
	// (compact --all visits every registry).
	quietNoop bool
	// scope, when set, is the infra dir of a self-contained session that
	// holds the node: recover re-reads only that subtree (see sessionScopes).
	scope string
	// planned, when set, is the action recover planned for the node: the
	// step runs only while the node, re-read, still recommends it.
	planned model.Action
}

// Outcomes of an action, as results and journal lines say them.
const (
	OutcomeDone    = "done"
	OutcomeRefused = "refused"
	OutcomeFailed  = "failed"
	OutcomeDryRun  = "dry-run"
	OutcomeSkipped = "skipped"
)

// Result is what the engine did, would do, or refused.
type Result struct {
	Action  model.Action
	NodeID  string
	Root    string
	PID     int  // the pid the node names (0 when none)
	Refused bool // a precondition failed (exit 1)
	// Outcome is done, refused, failed, dry-run or skipped.
	Outcome string
	Message string   // one line: what was done, or what was refused and why
	Plan    []string // what it would do / did, one step a line (the dry-run text)
	Checks  []string // the preconditions checked, as the journal records them
	// Removed holds the registry lines compaction removed (or would remove).
	Removed []string
}

// ScanError is a failure to read the roots at all: no root could be read,
// or an ignore glob is malformed. It is bad usage (exit 2), not a refusal.
type ScanError struct{ Err error }

func (e *ScanError) Error() string { return e.Err.Error() }
func (e *ScanError) Unwrap() error { return e.Err }

// scanRoots reads the forest under the configured roots.
func (e *Engine) scanRoots() (*model.Snapshot, error) {
	snap, err := e.scan(e.opts.Scan)
	if err != nil {
		return nil, &ScanError{Err: err}
	}
	return snap, nil
}

// DefaultGrace is the time between SIGTERM and SIGKILL when none is given.
const DefaultGrace = 10 * time.Second

// EngineOptions configure an Engine.
type EngineOptions struct {
	Scan   scanner.Options // roots, ignore, thresholds, probe, clock
	Config Config
	// ConfigPath is the file Config was read from ("" when none): an action
	// is refused while it lies inside a root, as LoadConfig refuses it.
	ConfigPath string
	Readonly   bool
	// Journaled, when set, is called with every line the engine appends to
	// a journal, once it is written: the command line's --json shows them.
	Journaled func(JournalEntry)
}

// Engine carries out actions. One engine serves the TUI, the subcommands and
// recover; it holds no state between actions but its options.
type Engine struct {
	opts EngineOptions
	self int
	// hook, when set (tests), is called between the steps of an action; an
	// error stops the action on the spot, as if the process had been killed.
	hook func(step string) error
	// scan reads the forest; scanner.Scan unless a test replaces it.
	scan func(scanner.Options) (*model.Snapshot, error)
	// drainHold bounds how long compaction waits for a process that holds
	// the replaced registry open for writing.
	drainHold time.Duration
	// journalWriter, when set (tests), stands between a journal append and
	// the file: a full disk is a writer that fails part-way.
	journalWriter func(io.Writer) io.Writer
}

// New builds an engine.
func New(opts EngineOptions) *Engine {
	return &Engine{opts: opts, self: os.Getpid(), scan: scanner.Scan, drainHold: defaultDrainHold}
}

func (e *Engine) now() time.Time {
	if e.opts.Scan.Now != nil {
		return e.opts.Scan.Now()
	}
	return time.Now()
}

func (e *Engine) thresholds() model.Thresholds {
	th := e.opts.Scan.Thresholds
	def := model.DefaultThresholds()
	if th.Stale <= 0 {
		th.Stale = def.Stale
	}
	if th.StartTolerance <= 0 {
		th.StartTolerance = def.StartTolerance
	}
	return th
}

// DryRun is Run with DryRun set: what the action would do, changing nothing.
func (e *Engine) DryRun(ctx context.Context, req Request) (Result, error) {
	req.DryRun = true
	return e.Run(ctx, req)
}

// Run carries out one action: it re-reads the node from disk, re-checks the
// action's preconditions, acts (or says what it would do) and appends the
// outcome to the journal of the node's root. A refusal is a Result with
// Refused set and a nil error; an error means the action could not be
// attempted or failed part-way (the Result still says how far it got).
func (e *Engine) Run(ctx context.Context, req Request) (Result, error) {
	res := Result{Action: req.Action, NodeID: req.Node}
	switch req.Action {
	case model.ActionKill, model.ActionResume, model.ActionCompact, model.ActionMerge:
	default:
		return res, fmt.Errorf("unknown action %q (kill, resume, compact or merge)", req.Action)
	}
	if req.Action == model.ActionCompact && req.All {
		return e.compactAll(ctx, req)
	}
	if req.Node == "" {
		return res, errors.New("no node given")
	}
	snap, n, err := e.locate(req.Node, req.scope)
	if err != nil {
		return res, err
	}
	res.NodeID, res.Root, res.PID = n.ID, n.Root, n.PID()
	if e.opts.Readonly && !req.DryRun {
		// Read-only promises that nothing is written, the journal included;
		// a dry run writes nothing.
		return refuse(res, "read-only mode: no action can run"), nil
	}
	// Before any side effect: an action that could not be journaled must
	// not run, and this refusal cannot be journaled either.
	if err := journalUsable(n.Root); err != nil {
		res = refuse(res, fmt.Sprintf("%v: no action runs that cannot be journaled", err))
		return res, errors.New(res.Message)
	}
	if !req.DryRun {
		e.finishCompactions(snap)
	}
	if why := e.configInRoot(n); why != "" {
		return e.refused(req, res, why)
	}
	if req.Action != model.ActionKill {
		// Before the scan's flag: this refusal names the dir.
		if why := e.confined(n); why != "" {
			return e.refused(req, res, why)
		}
	}
	if n.HasScanFlag(model.FlagOutsideRoot) {
		if !isNative(n) && n.InfraDir != "" {
			return e.refused(req, res, fmt.Sprintf("node %s: its dir %s lies outside every root: never acted on", n.ID, n.InfraDir))
		}
		return e.refused(req, res, fmt.Sprintf("node %s names a path outside every root: never acted on", n.ID))
	}
	if why := stillPlanned(req.planned, n); why != "" {
		res.Checks = []string{fmt.Sprintf("recommended action %s (planned %s)", n.Action, req.planned)}
		return e.refused(req, res, why)
	}
	if n.InfraDir == "" && (req.Action == model.ActionResume || req.Action == model.ActionMerge) {
		// Both work in the node's dir: with none, every path they name
		// would be one of the working directory (SPEC §3).
		return e.refused(req, res, fmt.Sprintf("node %s cannot be %s here: its %s record has no dir", n.ID, pastTense[req.Action], sourceName(n)))
	}
	switch req.Action {
	case model.ActionKill:
		return e.kill(ctx, req, snap, n)
	case model.ActionResume:
		if why := sharedDirRuns(snap, n); why != "" {
			return e.refused(req, res, why)
		}
		return e.resume(ctx, req, n)
	case model.ActionCompact:
		return e.compactNode(ctx, req, n)
	default:
		return e.merge(ctx, req, n)
	}
}

// pastTense words an action in a refusal ("cannot be resumed").
var pastTense = map[model.Action]string{model.ActionResume: "resumed", model.ActionMerge: "merged"}

// configInRoot says why the config may not act on n, or "": it lies inside
// one of the engine's roots, or inside n's own — a NODE outside every root
// given acts in the directory that holds its session, and a config there is
// as untrusted as one inside a root (SPEC §5.5). The engine checks whoever
// loaded the config: a read-only load (LoadReadOnlyConfig) never arms it.
func (e *Engine) configInRoot(n *model.Node) string {
	if e.opts.ConfigPath == "" {
		return ""
	}
	roots := append(append([]string(nil), e.opts.Scan.Roots...), n.Root)
	if root, inside := insideAnyRoot(e.opts.ConfigPath, roots); inside {
		return fmt.Sprintf("config %s is inside the watched root %s: actions refused (keep the config outside every root, or name narrower roots)", e.opts.ConfigPath, root)
	}
	return ""
}

// stillPlanned says why a recover step no longer applies to n, or "" when
// n (re-read) still recommends the planned action. Between the plan and the
// step other steps ran, each kill with its grace: a node may have asked a
// human, beaten again, or had its lead come back meanwhile.
func stillPlanned(planned model.Action, n *model.Node) string {
	if planned == "" {
		return ""
	}
	if n.Action == planned && (planned != model.ActionKill || n.HasFlag(model.FlagKillCandidate) && !n.HasFlag(model.FlagBlocked)) {
		return ""
	}
	return fmt.Sprintf("node %s now recommends %s, not the %s planned: %s", n.ID, n.Action, planned, n.Reason)
}

// refused refuses res with msg and journals the refusal.
func (e *Engine) refused(req Request, res Result, msg string) (Result, error) {
	res = refuse(res, msg)
	return res, e.journalResult(req, res, nil)
}

func refuse(res Result, msg string) Result {
	res.Refused = true
	res.Outcome = OutcomeRefused
	res.Message = msg
	return res
}

// locate re-reads the forest from disk and finds arg in it. A node found
// under the configured roots belongs to its root; a path outside every root
// is looked up under the directory that holds its session (its topmost
// ancestor through parent_heartbeat).
func (e *Engine) locate(arg, scope string) (*model.Snapshot, *model.Node, error) {
	opts := e.opts.Scan
	if scope != "" {
		if snap, err := e.scanSession(scope); err == nil {
			if n, err := scanner.ResolveNode(snap, arg); err == nil && n != nil {
				return snap, n, nil
			}
		}
		// The session changed shape since the plan: read everything.
	}
	var firstErr error
	if len(opts.Roots) > 0 {
		snap, err := e.scanRoots()
		if err == nil {
			if n, rerr := scanner.ResolveNode(snap, arg); rerr == nil && n != nil {
				return snap, n, nil
			} else if rerr != nil {
				firstErr = rerr
			}
		} else {
			firstErr = err
		}
	}
	root, ok := sessionHolder(arg)
	if !ok {
		if firstErr == nil {
			firstErr = fmt.Errorf("no node %q under %v", arg, opts.Roots)
		}
		return nil, nil, firstErr
	}
	opts.Roots = []string{root}
	snap, err := e.scan(opts)
	if err != nil {
		return nil, nil, fmt.Errorf("scan %s for %s: %w", root, arg, err)
	}
	n, err := scanner.ResolveNode(snap, arg)
	if err != nil {
		return nil, nil, err
	}
	if n == nil {
		return nil, nil, fmt.Errorf("no node %q under %s", arg, root)
	}
	return snap, n, nil
}

// scanSession re-reads and classifies only the subtree of the directory
// dir (a session's infra dir) under the configured roots, prepared with
// their sources as the scan prepares them, and the stores those name.
func (e *Engine) scanSession(dir string) (*model.Snapshot, error) {
	opts := e.opts.Scan
	walk, err := scanner.DiscoverSession(opts, dir)
	if err != nil {
		return nil, err
	}
	snap := scanner.BuildForest(walk.Roots, walk.Nodes, walk.Problems)
	scanner.Classify(snap, opts)
	return snap, nil
}

// sessionScopes maps the id of every node of a self-contained session to
// that session's infra dir. A session is self-contained when its nodes are
// exactly the nodes whose infra dirs lie inside its own: re-reading that
// directory alone then rebuilds the same tree, at a fraction of the cost
// of the whole forest.
func sessionScopes(snap *model.Snapshot) map[string]string {
	scopes := map[string]string{}
	dirs := infraDirs(snap)
	for _, s := range snap.Sessions {
		if selfContained(s, dirs) {
			s.Walk(func(n *model.Node) { scopes[n.ID] = s.InfraDir })
		}
	}
	return scopes
}

// infraDirs lists every node's infra dir, sorted.
func infraDirs(snap *model.Snapshot) []string {
	var dirs []string
	for _, s := range snap.Sessions {
		s.Walk(func(n *model.Node) { dirs = append(dirs, n.InfraDir) })
	}
	sort.Strings(dirs)
	return dirs
}

// selfContained reports whether session s holds exactly the nodes whose
// infra dirs lie inside its own (dirs: every node's, sorted), and no
// conflict: a claim on a member from another session's registry lies
// outside s, so a re-read of s alone would not see it (SPEC §2).
func selfContained(s *model.Node, dirs []string) bool {
	members, contained := 0, true
	s.Walk(func(n *model.Node) {
		members++
		if !within(s.InfraDir, n.InfraDir) || n.HasScanFlag(model.FlagConflict) {
			contained = false
		}
	})
	if !contained {
		return false
	}
	// The paths inside s.InfraDir are s.InfraDir itself and one contiguous
	// run of paths starting with s.InfraDir + "/".
	sep := string(filepath.Separator)
	inside := countEqual(dirs, s.InfraDir)
	lo := sort.SearchStrings(dirs, s.InfraDir+sep)
	hi := sort.SearchStrings(dirs, s.InfraDir+string(rune(filepath.Separator+1)))
	inside += hi - lo
	return inside == members
}

func countEqual(sorted []string, v string) int {
	i := sort.SearchStrings(sorted, v)
	k := 0
	for i+k < len(sorted) && sorted[i+k] == v {
		k++
	}
	return k
}

// RunWithHint is Run for a caller that holds a recent snapshot (the TUI):
// the hint only chooses what to re-read — the node's own session when it is
// self-contained, else everything — and the action still re-reads its node
// from disk and re-checks it at execution time.
func (e *Engine) RunWithHint(ctx context.Context, req Request, hint *model.Snapshot) (Result, error) {
	if n := hint.Node(req.Node); n != nil && !req.All {
		top := n
		for top.Parent != nil {
			top = top.Parent
		}
		if selfContained(top, infraDirs(hint)) {
			req.scope = top.InfraDir
		}
	}
	return e.Run(ctx, req)
}

// sessionHolder finds the directory that holds the session of the node at
// path (an infra dir or a .heartbeat): it follows parent_heartbeat up to the
// topmost ancestor that exists and returns that ancestor's parent directory.
func sessionHolder(path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	infra := abs
	if st, err := os.Stat(abs); err != nil {
		return "", false
	} else if !st.IsDir() {
		infra = filepath.Dir(abs)
	}
	if !isInfraDir(infra) {
		return "", false
	}
	seen := map[string]bool{}
	for i := 0; i < 64 && !seen[infra]; i++ {
		seen[infra] = true
		parent := declaredParent(infra)
		if parent == "" {
			break
		}
		if !filepath.IsAbs(parent) {
			parent = filepath.Join(infra, parent)
		}
		pdir := filepath.Dir(filepath.Clean(parent))
		if !isInfraDir(pdir) {
			break
		}
		infra = pdir
	}
	return filepath.Dir(infra), true
}

func isInfraDir(dir string) bool {
	for _, name := range []string{protocol.HeartbeatFile, protocol.RunningFile} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// declaredParent is the parent_heartbeat of the heartbeat in infra, or "".
// A heartbeat with a bad field still names its parent; one that does not
// parse names none.
func declaredParent(infra string) string {
	b, err := protocol.ReadFile(filepath.Join(infra, protocol.HeartbeatFile), protocol.MaxDocumentSize)
	if err != nil {
		return ""
	}
	hb, _ := protocol.ParseHeartbeat(b)
	return hb.ParentHeartbeat
}

// joinErrors is errors.Join for errors that must print as one line (SPEC
// §4: an error is one line): the ones that are not nil, joined with "; ".
func joinErrors(errs ...error) error {
	var kept joinedError
	for _, err := range errs {
		if err != nil {
			kept = append(kept, err)
		}
	}
	switch len(kept) {
	case 0:
		return nil
	case 1:
		return kept[0]
	}
	return kept
}

type joinedError []error

func (j joinedError) Error() string {
	parts := make([]string, len(j))
	for i, err := range j {
		parts[i] = err.Error()
	}
	return strings.Join(parts, "; ")
}

func (j joinedError) Unwrap() []error { return j }

// step runs the test hook between steps of an action.
func (e *Engine) step(name string) error {
	if e.hook == nil {
		return nil
	}
	return e.hook(name)
}
