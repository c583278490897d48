package scanner

// The scanner's API. A full scan is Scan = Discover + BuildForest + Classify;
// the watcher (watch*.go) uses the same building blocks to keep a snapshot
// current without rescanning:
//
//   PrepareRoots(paths, srcs...) ([]Root, []model.Problem, error)  absolute, deduplicated roots, each with its source
//   Discover(opts) (*Walk, error)                         walk every native root, read every other root's store
//   DiscoverDir(roots, dir, opts) (*Walk, error)          the same, for one new subtree
//   DiscoverSession(opts, dir) (*Walk, error)             the native walk of one session's dir, every store read
//   ReadNodeDir(root, dir) (*model.Node, error)           the facts of one infra dir
//   CopyFacts(n) *model.Node                              a node's facts without tree or class
//   BuildForest(roots, nodes, problems) *model.Snapshot   edges, ids, missing nodes, flags
//   Classify(snap, opts)                                  liveness on the built forest
//   ResolveNode(snap, arg) (*model.Node, error)           NODE argument -> node
//   DefaultRoots(cwd) []string                            SPEC §1 default roots
//
// The file names and the parsers of what it reads are protocol's. Roots are
// read through the seam of package sources (native.go): the native file
// protocol is one source, Options.Sources registers the others.

import (
	"io/fs"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

// Options configure a scan (and a watcher).
type Options struct {
	Roots      []string // as given; made absolute by Scan
	Ignore     []string // --ignore globs, matched against a directory's base name and its root-relative path
	MaxDepth   int      // 0 means the default, 32
	Thresholds model.Thresholds
	Probe      liveness.Probe // nil means liveness.SystemProbe
	Now        func() time.Time
	// Sources are the sources a root may be read by besides the native
	// one, which is always known (see package sources): a `KIND:PATH` root
	// names one, else the first whose Detect accepts the root reads it.
	Sources []sources.Source
	// ThresholdsGiven say which of Thresholds the operator gave: those are
	// put over each source's own defaults (thresholds.go).
	ThresholdsGiven GivenThresholds

	// OmitRaw: the nodes keep no bytes of their files (Node.HeartbeatRaw,
	// RegistryLine.Raw, CfaState.History), which only the dashboard's
	// detail pane shows: a one-shot report sets it, and at 100,000 nodes
	// they weigh tens of MB.
	OmitRaw bool

	// EveryRoot: a root that cannot be read fails the scan
	// (UnreadRootsError), not only all of them: a one-shot report for CI
	// must not pass over a root mistyped or broken (SPEC §4). The live
	// engine leaves it unset and shows the problem.
	EveryRoot bool

	// readDir replaces os.ReadDir in tests that need a read error root
	// cannot provoke (an unreadable directory); nil means os.ReadDir.
	readDir func(string) ([]fs.DirEntry, error)
	// visited, when set, is called by the walk's worker that listed a
	// directory, with it still open, before a node is read from it and
	// before its subdirectories are queued (the watcher puts its watch on
	// there). It is called from several workers at once; the entries are
	// the worker's listing, valid during the call only.
	visited func(h dirHandle, entries []fs.DirEntry, isNode bool)
	// signStores takes a store's watch path signatures before its read
	// (the watcher's first read: what moves after it shows at a compare).
	signStores bool
}

// DefaultMaxDepth bounds how deep discovery descends below a root.
const DefaultMaxDepth = 32

// Root is one root being scanned.
type Root struct {
	Path     string // absolute and clean, as given (symlinks not resolved)
	Resolved string // Path with symlinks resolved, for containment checks
	// Prefix is prepended to ids ("" with a single root, else the root's
	// base name, made unique).
	Prefix string
	// Ignore holds the --ignore globs: where the walk does not go, a path
	// named in a registry or a parent_heartbeat does not lead either.
	Ignore []string
	// Source reads the root; nil is the native file protocol.
	Source sources.Source
	// AlsoNative says the native reader walks the root too: a store whose
	// tree the file protocol is written in as well (sources.NativeTree).
	AlsoNative bool
	// trees are the directories, under a walked root, that a store reads
	// with the file protocol too (its own root's, or a store's nested in
	// this one): the nodes the file protocol reads there carry the store's
	// traits (see nativeTraits).
	trees []nativeTree
}

// nativeTree is a store's tree that the file protocol reads too
// (sources.NativeTree): its dir under a walked root, as the walk names it,
// and the traits of the nodes read there.
type nativeTree struct {
	dir    string
	traits model.Traits
}

// nativeTraits are the traits of the node the file protocol reads at dir
// under r: a store's, where dir lies in its tree (a TeaParty job's lead is
// TeaParty's, whichever reader found it); none elsewhere.
func (r *Root) nativeTraits(dir string) model.Traits {
	for _, t := range r.trees {
		if within(t.dir, dir) {
			return t.traits
		}
	}
	return model.Traits{}
}

// nativeTraitsIn is nativeTraits of the walked root of roots that dir lies
// under (walked roots never nest).
func nativeTraitsIn(roots []Root, dir string) model.Traits {
	for i := range roots {
		if len(roots[i].trees) > 0 && within(roots[i].Path, dir) {
			return roots[i].nativeTraits(dir)
		}
	}
	return model.Traits{}
}

// Walk is what discovery found under the roots.
type Walk struct {
	Roots []Root
	// Nodes holds the facts of every infra dir found (no tree fields),
	// sorted by InfraDir, then the nodes of every other source's store.
	Nodes []*model.Node
	// Dirs lists every directory listed by the walk, sorted: the watcher
	// puts a watch on each.
	Dirs []string
	// Problems are the walk's own problems (unreadable directories, depth
	// bound, missing roots); node problems travel with the nodes.
	Problems []model.Problem
}
