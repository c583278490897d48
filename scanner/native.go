package scanner

// The native file protocol (SPEC §1) as one source among others: the seam
// of package sources. A root is read by the source a `KIND:PATH` prefix
// names, else by the first registered source that detects its store there,
// else by the native one. Native roots keep their own machinery (one walk
// shared by every native root, the watcher's per-file incremental reads);
// every other source's store is read whole, and read again whole when one
// of its watch paths changes.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

// Native is the file protocol of SPEC §1 as a sources.Source: a root is a
// directory walked for infra dirs. Its nodes' Source is left "" (native).
type Native struct {
	Ignore   []string // --ignore globs
	MaxDepth int      // 0 means DefaultMaxDepth
}

var _ sources.Source = Native{}

// Kind is sources.Native.
func (Native) Kind() sources.Kind { return sources.Native }

// Detect reports whether path is a directory: any directory may hold
// infra dirs, so the native source is the fallback of every other.
func (Native) Detect(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// Read walks the directory path as a root of its own.
func (s Native) Read(path string, _ time.Time) sources.Facts {
	walk, err := Discover(Options{Roots: []string{path}, Ignore: s.Ignore, MaxDepth: s.MaxDepth})
	if err != nil {
		return sources.Facts{Problems: []model.Problem{{Path: path, Error: termtext.OneLine(err.Error(), 0)}}}
	}
	return sources.Facts{Nodes: walk.Nodes, Problems: walk.Problems}
}

// WatchPaths is the root: the watcher follows every directory below it.
func (Native) WatchPaths(path string) []string { return []string{path} }

// Thresholds are the defaults of SPEC §3.
func (Native) Thresholds() model.Thresholds { return model.DefaultThresholds() }

// registry is the sources of opts: the native one first, then the others.
func (opts Options) registry() []sources.Source {
	reg := []sources.Source{Native{Ignore: opts.Ignore, MaxDepth: opts.MaxDepth}}
	for _, s := range opts.Sources {
		if s != nil && s.Kind() != sources.Native {
			reg = append(reg, s)
		}
	}
	return reg
}

// kindPrefix matches the KIND of a `KIND:PATH` root.
var kindPrefix = regexp.MustCompile(`^([a-z][a-z0-9-]*):(.+)$`)

// sourceOfRoot picks the source of a root as given: a `KIND:PATH` prefix
// names it (an unknown KIND is an error naming the known ones); else the
// first non-native source that detects its store at the path; else the
// native source. A path that exists as given is never read as a prefix.
func sourceOfRoot(arg string, reg []sources.Source) (sources.Source, string, error) {
	if m := kindPrefix.FindStringSubmatch(arg); m != nil {
		if _, err := os.Lstat(arg); err != nil {
			for _, s := range reg {
				if string(s.Kind()) == m[1] {
					return s, m[2], nil
				}
			}
			known := make([]string, len(reg))
			for i, s := range reg {
				known[i] = string(s.Kind())
			}
			return nil, "", fmt.Errorf("root %q: unknown source %q (known: %s)", arg, m[1], strings.Join(known, ", "))
		}
	}
	for _, s := range reg[1:] {
		if s.Detect(arg) {
			return s, arg, nil
		}
	}
	return reg[0], arg, nil
}

// isNative reports whether a root is read by the native source.
func (r Root) isNative() bool {
	return r.Source == nil || r.Source.Kind() == sources.Native
}

// Kind names the source of the root.
func (r Root) Kind() sources.Kind {
	if r.Source == nil {
		return sources.Native
	}
	return r.Source.Kind()
}

// walked reports whether the native reader walks the root: a native root,
// or a store's whose tree holds infra dirs too (Root.AlsoNative).
func (r Root) walked() bool { return r.isNative() || r.AlsoNative }

// walkedRoots are the roots the native reader walks.
func walkedRoots(roots []Root) []Root {
	var out []Root
	for _, r := range roots {
		if r.walked() {
			out = append(out, r)
		}
	}
	return out
}

// isStoreNode reports whether n was read by a source other than the native
// one: such nodes are linked by their keys, never by their directories.
func isStoreNode(n *model.Node) bool {
	return n.Source != "" && n.Source != string(sources.Native)
}

// storeFacts is what one read of a non-native root found.
type storeFacts struct {
	root     Root
	nodes    []*model.Node
	problems []model.Problem
	// sigs are the watch paths' signatures taken before the read, when it
	// was asked to sign them (the watcher's first read).
	sigs map[string]pathSig
	// kept is what a sources.Rereader kept for its next read.
	kept sources.Kept
	// dense: every node the source gave is in nodes, at its position
	// (none was nil), so that its sources.Facts.Changed can say where the
	// next read moved.
	dense bool
	// moved are, when the read put nodes in place of the last read's
	// (sources.Facts.Changed), their positions and the nodes they
	// replaced; nodes is then the last read's own list, changed in place.
	// Nil: the list is made anew, to be compared whole.
	moved []movedNode
	// stamped counts the nodes the read stamped with the root (for the
	// watcher's stats).
	stamped int
}

// movedNode is a node a read put in place: where, and what was there.
type movedNode struct {
	at  int
	was *model.Node
}

// readStore reads a non-native root whole and stamps its nodes with the
// root and the source's kind. A source that panics is a problem of its
// root, never a crash. signed takes the watch paths' signatures first.
func readStore(r Root, now time.Time, signed bool) storeFacts {
	var sigs map[string]pathSig
	if signed {
		sigs = sign(r)
	}
	f := rereadStore(r, now, storeFacts{}, nil)
	f.sigs = sigs
	return f
}

// rereadStore reads a non-native root again: a sources.Rereader from what
// the last read kept, given the watch paths that changed (nil: not known,
// all), any other source whole. When the source says which nodes it put
// in place (sources.Facts.Changed) those alone are stamped, in place in
// the last read's list, which the result then holds (last's is no longer
// its own): a write of one file among a thousand costs its node.
func rereadStore(r Root, now time.Time, last storeFacts, changed []string) (f storeFacts) {
	f.root = r
	defer func() {
		if p := recover(); p != nil {
			f.nodes, f.kept, f.moved = nil, nil, nil
			f.problems = []model.Problem{{Path: r.Path, Error: termtext.OneLine(fmt.Sprintf("%s source: %v", r.Kind(), p), 0)}}
		}
	}()
	var facts sources.Facts
	if rr, ok := r.Source.(sources.Rereader); ok {
		facts, f.kept = rr.Reread(r.Path, now, last.kept, changed)
	} else {
		facts = r.Source.Read(r.Path, now)
	}
	f.problems = facts.Problems
	if inPlace(last, facts) {
		f.nodes, f.dense, f.moved = last.nodes, true, make([]movedNode, 0, len(facts.Changed))
		for _, i := range facts.Changed {
			n := facts.Nodes[i]
			if n == f.nodes[i] {
				continue
			}
			f.stamp(n)
			f.moved = append(f.moved, movedNode{at: i, was: f.nodes[i]})
			f.nodes[i] = n
		}
		return f
	}
	f.dense = true
	for _, n := range facts.Nodes {
		if n == nil {
			f.dense = false
			continue
		}
		f.stamp(n)
		f.nodes = append(f.nodes, n)
	}
	return f
}

// inPlace reports whether facts, read after last, say where they put
// nodes in place of last's, each position within the list and holding a
// node.
func inPlace(last storeFacts, facts sources.Facts) bool {
	if facts.Changed == nil || !last.dense || len(last.nodes) != len(facts.Nodes) {
		return false
	}
	for _, i := range facts.Changed {
		if i < 0 || i >= len(facts.Nodes) || facts.Nodes[i] == nil {
			return false
		}
	}
	return true
}

// stamp stamps a store's node with its root and, when its source left it
// unnamed, the root's kind.
func (f *storeFacts) stamp(n *model.Node) {
	n.Root = f.root.Path
	if n.Source == "" || n.Source == string(sources.Native) {
		n.Source = string(f.root.Kind())
	}
	f.stamped++
}

// errNotDir is the problem of a native root that is a file.
var errNotDir = errors.New("not a directory")

// storeRootPath is the absolute, clean path of a non-native root and the
// same with symlinks resolved.
func storeRootPath(p string) (abs, resolved string, err error) {
	if abs, err = filepath.Abs(p); err != nil {
		return "", "", err
	}
	if resolved, err = filepath.EvalSymlinks(abs); err != nil {
		return abs, "", err
	}
	return abs, resolved, nil
}
