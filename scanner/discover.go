package scanner

// Discovery (SPEC §1): every directory under a root that holds `.heartbeat`
// or `.running` is a node. The walk never descends into a git worktree (a
// directory with a `.git` entry, the root itself excepted), `.git`,
// `node_modules` or an ignored directory, never follows a directory symlink,
// and stops at the depth bound. A small pool of workers lists directories
// and reads node dirs in parallel.

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// Discover walks every native root of opts (and every store that holds a
// native tree too), reads every node dir it finds and reads the store of
// every other root through its source.
func Discover(opts Options) (*Walk, error) {
	walk, stores, err := gather(opts)
	if err != nil {
		return nil, err
	}
	for _, st := range stores {
		walk.Nodes = append(walk.Nodes, st.nodes...)
		walk.Problems = append(walk.Problems, st.problems...)
	}
	return walk, nil
}

// gather is Discover with the stores' facts apart, as the watcher keeps
// them: a store is read again whole, its problems replaced with it.
func gather(opts Options) (*Walk, []storeFacts, error) {
	if err := checkIgnore(opts.Ignore); err != nil {
		return nil, nil, err
	}
	roots, problems, err := PrepareRoots(opts.Roots, opts.Sources...)
	if err != nil {
		return nil, nil, err
	}
	roots = withIgnore(roots, opts.Ignore)
	// The stores are read, one after the other, while the walk runs: a
	// store's read waits on its files and its database as the walk does,
	// and neither needs the other's facts until both are done.
	storesRead := make(chan []storeFacts, 1)
	go func() { storesRead <- readStores(roots, opts) }()
	native := walkedRoots(roots)
	walk := &Walk{}
	if len(native) > 0 {
		w := newWalker(native, opts)
		jobs := make([]dirJob, len(native))
		for i := range native {
			jobs[i] = dirJob{root: &native[i], dir: native[i].Path}
		}
		walk = w.run(jobs)
	}
	stores := <-storesRead
	unread := slices.Concat(problems, unreadRoots(roots, walk, stores))
	if none := len(unread) == len(problems)+len(roots); none || opts.EveryRoot && len(unread) > 0 {
		return nil, nil, &UnreadRootsError{Roots: unread, None: none}
	}
	walk.Roots = roots
	walk.Problems = append(problems, walk.Problems...)
	return walk, stores, nil
}

// readStores reads the store of every non-native root, in order.
func readStores(roots []Root, opts Options) []storeFacts {
	var stores []storeFacts
	var now time.Time
	for _, r := range roots {
		if r.isNative() {
			continue
		}
		if now.IsZero() {
			now = time.Now()
			if opts.Now != nil {
				now = opts.Now()
			}
		}
		stores = append(stores, readStore(r, now, opts.signStores))
	}
	return stores
}

// unreadRoots are the roots that could not be read, each as the problem
// that says why (SPEC §4): a walked root whose own listing failed (a root
// that exists but cannot be read shows nothing, and nothing must not pass
// for a healthy, empty tree), and a store whose read found nothing but
// problems (a corrupt database, a missing table, a torn file), unless the
// walk of its directory found a node. A store that holds no record and
// says nothing wrong is read, and empty.
func unreadRoots(roots []Root, walk *Walk, stores []storeFacts) []model.Problem {
	listed := func(r Root) bool {
		i := sort.SearchStrings(walk.Dirs, r.Path)
		return i < len(walk.Dirs) && walk.Dirs[i] == r.Path
	}
	walkedNode := map[string]bool{}
	for _, n := range walk.Nodes {
		walkedNode[n.Root] = true
	}
	var unread []model.Problem
	for _, r := range roots {
		if !r.isNative() {
			continue
		}
		if !listed(r) {
			why := model.Problem{Path: r.Path, Error: "removed during the scan"}
			for _, p := range walk.Problems {
				if p.Path == r.Path {
					why = p
					break
				}
			}
			unread = append(unread, why)
		}
	}
	for _, st := range stores {
		if len(st.nodes) == 0 && len(st.problems) > 0 && !walkedNode[st.root.Path] {
			unread = append(unread, st.problems[0])
		}
	}
	return unread
}

// UnreadRootsError is a scan that could not read its roots: none of them
// (None), or, under Options.EveryRoot, some. Roots holds each one's
// problem.
type UnreadRootsError struct {
	Roots []model.Problem
	None  bool
}

func (e *UnreadRootsError) Error() string {
	whys := make([]string, len(e.Roots))
	for i, p := range e.Roots {
		whys[i] = ProblemText(p)
	}
	if e.None {
		return fmt.Sprintf("no root could be read (%s)", whys[0])
	}
	if len(whys) == 1 {
		return "a root could not be read: " + whys[0]
	}
	return fmt.Sprintf("%d roots could not be read: %s", len(whys), strings.Join(whys, "; "))
}

// ProblemText is a problem as one sentence that begins with its path:
// the error itself when it does ("read /x/db.sqlite3: file is not a
// database"), else the path before it.
func ProblemText(p model.Problem) string {
	if p.Path == "" || strings.HasPrefix(p.Error, p.Path+": ") || strings.HasPrefix(p.Error, "read "+p.Path+": ") {
		return p.Error
	}
	return p.Path + ": " + p.Error
}

// DiscoverDir walks one directory below a root (a directory that appeared
// while watching) with the same rules as Discover: nothing is returned for a
// directory the full walk would not have entered.
func DiscoverDir(roots []Root, dir string, opts Options) (*Walk, error) {
	if err := checkIgnore(opts.Ignore); err != nil {
		return nil, err
	}
	dir = filepath.Clean(dir)
	roots = withIgnore(walkedRoots(roots), opts.Ignore)
	for i := range roots {
		r := &roots[i]
		if !within(r.Path, dir) {
			continue
		}
		w := newWalker(roots, opts)
		rel, err := filepath.Rel(r.Path, dir)
		if err != nil {
			return nil, fmt.Errorf("discover %s: %w", dir, err)
		}
		depth := 0
		if rel != "." {
			segs := strings.Split(filepath.ToSlash(rel), "/")
			depth = len(segs)
			for k, seg := range segs {
				if w.skipDir(seg, strings.Join(segs[:k+1], "/")) {
					return &Walk{Roots: roots}, nil
				}
			}
			if depth > w.maxDepth {
				return &Walk{Roots: roots}, nil
			}
		}
		walk := w.run([]dirJob{{root: r, dir: dir, depth: depth}})
		walk.Roots = roots
		return walk, nil
	}
	return nil, fmt.Errorf("discover %s: not under any root", dir)
}

// DiscoverSession is Discover narrowed to one session's directory dir: the
// roots are prepared as Discover prepares them (each with its source), the
// native walk goes below dir alone, with DiscoverDir's rules, and every
// store is read whole, as a store's records may hang anywhere in the tree
// (a TeaParty job's workers are rows of a bus, under its lead's dir). A dir
// under no walked root holds nothing the full walk would find there.
func DiscoverSession(opts Options, dir string) (*Walk, error) {
	if err := checkIgnore(opts.Ignore); err != nil {
		return nil, err
	}
	roots, problems, err := PrepareRoots(opts.Roots, opts.Sources...)
	if err != nil {
		return nil, err
	}
	roots = withIgnore(roots, opts.Ignore)
	dir = filepath.Clean(dir)
	walked, stores := false, false
	for _, r := range roots {
		walked = walked || r.walked() && within(r.Path, dir)
		stores = stores || !r.isNative()
	}
	walk := &Walk{}
	if walked || !stores {
		if walk, err = DiscoverDir(roots, dir, opts); err != nil {
			return nil, err
		}
	}
	walk.Roots = roots
	walk.Problems = append(problems, walk.Problems...)
	for _, st := range readStores(roots, opts) {
		walk.Nodes = append(walk.Nodes, st.nodes...)
		walk.Problems = append(walk.Problems, st.problems...)
	}
	return walk, nil
}

// withIgnore is roots, copied, each carrying the ignore globs.
func withIgnore(roots []Root, ignore []string) []Root {
	out := make([]Root, len(roots))
	for i, r := range roots {
		r.Ignore = ignore
		out[i] = r
	}
	return out
}

// checkIgnore rejects malformed globs up front (a usage error).
func checkIgnore(globs []string) error {
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("ignore glob %q: %w", g, err)
		}
	}
	return nil
}
