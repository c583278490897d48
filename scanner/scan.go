package scanner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// Scan reads every root once, builds the forest and classifies it:
// Discover + BuildForest + Classify. It fails (usage-level, exit 2) only
// when no root could be read or an ignore glob is malformed.
func Scan(opts Options) (*model.Snapshot, error) {
	walk, err := Discover(opts)
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	snap := BuildForest(walk.Roots, walk.Nodes, walk.Problems)
	Classify(snap, opts)
	return snap, nil
}

// Classify stamps the snapshot with the time and thresholds of opts and
// runs the liveness classifier over its forest.
func Classify(snap *model.Snapshot, opts Options) {
	now := time.Now()
	if opts.Now != nil {
		now = opts.Now()
	}
	th := opts.Thresholds
	if th == (model.Thresholds{}) {
		th = model.DefaultThresholds()
	}
	var probe liveness.Probe = liveness.SystemProbe{}
	if opts.Probe != nil {
		probe = opts.Probe
	}
	snap.GeneratedAt = now
	snap.Thresholds = th
	fillThresholds(snap.Sessions, sourceThresholds(opts, th))
	// Only the system probe is known to be safe to ask from several
	// goroutines at once; injected probes are asked in order.
	if _, ok := probe.(liveness.SystemProbe); ok {
		probe = prefetch(snap.Sessions, probe, now, th)
	}
	liveness.ClassifyForest(snap.Sessions, probe, now, th)
}

// DefaultRoots are the roots used when none is given (SPEC §1):
// `<cwd>/.teaparty/jobs` and `<cwd>/.sessions` where they exist, else cwd.
func DefaultRoots(cwd string) []string {
	var roots []string
	for _, rel := range []string{protocol.JobsRoot, protocol.SessionsRoot} {
		p := filepath.Join(cwd, filepath.FromSlash(rel))
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			roots = append(roots, p)
		}
	}
	if len(roots) == 0 {
		roots = []string{cwd}
	}
	return roots
}

// ResolveNode finds a node of snap by id, by infra dir, or by the path of
// its `.heartbeat` (or `.running`); paths may be absolute or relative to the
// working directory; then by any other form of its id a screen shows
// (idForms). An unknown node is an error that says so.
func ResolveNode(snap *model.Snapshot, arg string) (*model.Node, error) {
	if snap == nil {
		return nil, fmt.Errorf("node %q: no snapshot to look in", arg)
	}
	if n := snap.Node(strings.TrimSuffix(arg, "/")); n != nil && arg != "" {
		return n, nil
	}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return nil, fmt.Errorf("node %q: %w", arg, err)
	}
	b := &builder{}
	candidates := pathCandidates(b, abs)
	if n := nodeAtPath(snap, candidates...); n != nil {
		return n, nil
	}
	// The infra dir of a node found through a symlinked root.
	roots := make([]Root, 0, len(snap.Roots))
	for _, r := range snap.Roots {
		roots = append(roots, Root{Path: r, Resolved: b.resolve(r)})
	}
	b.roots = roots
	for _, c := range candidates {
		if _, lex, ok := b.locate(c); ok {
			if n := nodeInDir(snap, lex); n != nil {
				return n, nil
			}
		}
	}
	// The id in another form a screen shows: another view's prefix, a root
	// further up or down the same tree (idForms).
	if n, ok, err := resolveForm(snap, arg); err != nil || ok {
		return n, err
	}
	return nil, fmt.Errorf("node %q: no such node under %s", arg, strings.Join(snap.Roots, ", "))
}

// pathCandidates are the places abs may name a node by: itself, the dir of
// a sentinel it names, and the same with their symlinks resolved (for a
// root given through one).
func pathCandidates(b *builder, abs string) []string {
	candidates := []string{abs}
	if base := filepath.Base(abs); base == protocol.HeartbeatFile || base == protocol.RunningFile {
		candidates = append(candidates, filepath.Dir(abs))
	}
	for _, c := range append([]string(nil), candidates...) {
		if real := b.resolve(c); real != c {
			candidates = append(candidates, real)
		}
	}
	return candidates
}

// nodeInDir is the node of snap whose infra dir is dir; nil when none is.
func nodeInDir(snap *model.Snapshot, dir string) *model.Node {
	for _, n := range snap.ByID {
		if n.InfraDir == dir {
			return n
		}
	}
	return nil
}

// nodeAtPath is a node of snap whose infra dir or heartbeat path is one of
// paths; nil when none is.
func nodeAtPath(snap *model.Snapshot, paths ...string) *model.Node {
	for _, n := range snap.ByID {
		for _, c := range paths {
			if n.InfraDir == c || n.HeartbeatPath == c {
				return n
			}
		}
	}
	return nil
}
