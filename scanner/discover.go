package scanner

// Discovery (SPEC §1): every directory under a root that holds `.heartbeat`
// or `.running` is a node. The walk never descends into a git worktree (a
// directory with a `.git` entry, the root itself excepted), `.git`,
// `node_modules` or an ignored directory, never follows a directory symlink,
// and stops at the depth bound. A small pool of workers lists directories
// and reads node dirs in parallel.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
)

// PrepareRoots makes the given roots absolute and clean, resolves their
// symlinks, picks the source of each (a `KIND:PATH` prefix, else the first
// of srcs that detects its store, else the native file protocol), marks
// the stores the native reader walks too (sources.NativeTree), drops a
// native root given twice, or nested in (or the same as) a walked root
// (its nodes are found through that one), and a store given twice, and
// assigns id prefixes. A root that cannot be used is a problem; the error says so
// when no root is left, or names the known sources for an unknown KIND.
func PrepareRoots(paths []string, srcs ...sources.Source) ([]Root, []model.Problem, error) {
	reg := Options{Sources: srcs}.registry()
	var problems []model.Problem
	var roots []Root
	for _, arg := range paths {
		src, p, err := sourceOfRoot(arg, reg)
		if err != nil {
			return nil, problems, err
		}
		if src.Kind() != sources.Native {
			abs, resolved, err := storeRootPath(p)
			if err != nil {
				problems = append(problems, model.Problem{Path: p, Error: termtext.OneLine("root: "+err.Error(), 0)})
				continue
			}
			roots = append(roots, Root{Path: abs, Resolved: resolved, Source: src, AlsoNative: sources.HoldsNativeTree(src, abs)})
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			problems = append(problems, model.Problem{Path: p, Error: termtext.OneLine("root: "+err.Error(), 0)})
			continue
		}
		resolved, err := filepath.EvalSymlinks(abs)
		if err == nil {
			var fi os.FileInfo
			if fi, err = os.Stat(resolved); err == nil && !fi.IsDir() {
				err = errNotDir
			}
		}
		if err != nil {
			problems = append(problems, model.Problem{Path: abs, Error: termtext.OneLine("root: "+err.Error(), 0)})
			continue
		}
		roots = append(roots, Root{Path: abs, Resolved: resolved})
	}
	// A native root and a store that walks the same directory are one
	// root, the store's, where the first of the two was given.
	for i := range roots {
		if !roots[i].isNative() {
			continue
		}
		for j := i + 1; j < len(roots); j++ {
			if roots[j].AlsoNative && roots[j].Resolved == roots[i].Resolved {
				roots[i], roots[j] = roots[j], roots[i]
				break
			}
		}
	}
	// Keep the outermost of nested or repeated walked roots, in the order
	// given; a store is kept once, and nested in nothing: a walked store
	// inside another walked root keeps its store and leaves the walk of
	// its directory to the outer root.
	var kept []Root
	for i, r := range roots {
		covered := false
		for j, o := range roots {
			if i == j {
				continue
			}
			switch {
			case r.isNative() == o.isNative() && o.Resolved == r.Resolved && j < i:
				covered = true // given twice
			case r.isNative() && o.walked() && within(o.Resolved, r.Resolved) && (o.Resolved != r.Resolved || !o.isNative()):
				covered = true // walked through o
			case r.AlsoNative && o.walked() && o.Resolved != r.Resolved && within(o.Resolved, r.Resolved):
				r.AlsoNative = false
			}
		}
		if !covered {
			kept = append(kept, r)
		}
	}
	// The trees a store reads with the file protocol too, under the
	// walked root that walks them: its own, or the outer root it is
	// nested in. Their nodes are the store's system's own.
	for i := range kept {
		o := &kept[i]
		if !o.walked() {
			continue
		}
		for _, r := range roots {
			nt, ok := r.Source.(sources.NativeTree)
			if !ok || !r.AlsoNative || !within(o.Resolved, r.Resolved) {
				continue
			}
			if rel, err := filepath.Rel(o.Resolved, r.Resolved); err == nil {
				o.trees = append(o.trees, nativeTree{dir: filepath.Join(o.Path, rel), traits: nt.NativeTraits()})
			}
		}
	}
	if len(kept) > 1 {
		// Count up until the prefix is free: "x-2" made up for a second
		// "x" may be the real name of another root.
		taken := map[string]bool{}
		for i := range kept {
			base := filepath.Base(kept[i].Path)
			prefix := base
			for k := 2; taken[prefix]; k++ {
				prefix = fmt.Sprintf("%s-%d", base, k)
			}
			taken[prefix] = true
			kept[i].Prefix = prefix
		}
	}
	if len(kept) == 0 {
		msg := "no root given"
		if len(problems) > 0 {
			msg = problems[0].Path + ": " + problems[0].Error
		}
		return nil, problems, fmt.Errorf("no root could be read (%s)", msg)
	}
	return kept, problems, nil
}

// within reports whether p is dir or below it (both clean and absolute).
func within(dir, p string) bool {
	if p == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return strings.HasPrefix(p, dir)
	}
	return strings.HasPrefix(p, dir) && p[len(dir)] == filepath.Separator
}

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

type dirJob struct {
	root  *Root
	dir   string
	depth int
	// heartbeat is the path of dir's heartbeat, made with dir in one
	// string: most directories a walk lists are node dirs, and at 100,000
	// nodes a path of its own each was 10 MB. "" for a root, and for a
	// directory between a node and a child its registry names (dir is then
	// a slice of that entry's string; a heartbeat found there is joined).
	heartbeat string
	// above is the heartbeat path of the nearest node above dir ("" when
	// none): a node's parent_heartbeat, which names it most of the time,
	// is then held as that one string.
	above string
	// named are the paths the registry of that node names (nil when none),
	// for pathsNamed: its children are often a directory or two below.
	named map[string]string
	// parent is the directory dir was listed in, held open to open dir
	// relative to it by its name ("" and nil for a root).
	parent *dirRef
	name   string
}

// dirRef is a listed directory kept open while its subdirectories wait to
// be opened relative to it: opening a directory by its whole path walks
// every component of the path again, as long as listing it. The last
// subdirectory opened closes it.
type dirRef struct {
	h    dirHandle
	refs atomic.Int32
}

func (r *dirRef) release() {
	if r.refs.Add(-1) == 0 {
		r.h.close()
	}
}

type walker struct {
	ignore   []string
	maxDepth int
	omitRaw  bool
	readDir  func(string) ([]fs.DirEntry, error)
	visited  func(dirHandle, []fs.DirEntry, bool) // Options.visited

	// Work sharing: each worker walks depth first from its own stack and
	// hands a directory to the shared queue only while another worker is
	// idle, so the common case takes no lock (profiling showed a shared
	// queue per directory spending more in futex than in reading).
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []dirJob     // guarded by mu
	idle    atomic.Int32 // workers waiting for the queue
	pending atomic.Int64 // directories queued, stacked or being visited
}

func newWalker(roots []Root, opts Options) *walker {
	w := &walker{ignore: opts.Ignore, maxDepth: opts.MaxDepth, omitRaw: opts.OmitRaw, readDir: opts.readDir, visited: opts.visited}
	if w.maxDepth <= 0 {
		w.maxDepth = DefaultMaxDepth
	}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// result is one worker's share of the walk, merged at the end so workers
// never contend on shared slices.
type result struct {
	nodes    []*model.Node
	dirs     []string
	problems []model.Problem
	stack    []dirJob // this worker's own directories still to visit
	reader   nodeReader
	listing  listing // where this worker lists the directory it visits
}

func (w *walker) run(jobs []dirJob) *Walk {
	w.pending.Add(int64(len(jobs)))
	w.queue = append(w.queue, jobs...)
	workers := max(2, runtime.GOMAXPROCS(0))
	results := make([]result, workers)
	for i := range results {
		results[i].reader.omitRaw = w.omitRaw
	}
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func(res *result) {
			defer wg.Done()
			for {
				j, ok := w.next(res)
				if !ok {
					// Each worker sorts its own share, on its own core:
					// merging sorted shares is linear, sorting the whole
					// walk after it was a serial tenth of its time.
					slices.SortFunc(res.nodes, byInfraDir)
					slices.Sort(res.dirs)
					slices.SortStableFunc(res.problems, byPath)
					return
				}
				w.visit(j, res)
				if w.pending.Add(-1) == 0 {
					// Under the lock, so no worker is between its check
					// and its Wait.
					w.mu.Lock()
					w.cond.Broadcast()
					w.mu.Unlock()
				}
			}
		}(&results[i])
	}
	wg.Wait()
	nodes := make([][]*model.Node, len(results))
	dirs := make([][]string, len(results))
	problems := make([][]model.Problem, len(results))
	for i, r := range results {
		nodes[i], dirs[i], problems[i] = r.nodes, r.dirs, r.problems
	}
	return &Walk{
		Nodes:    mergeSorted(nodes, byInfraDir),
		Dirs:     mergeSorted(dirs, strings.Compare),
		Problems: mergeSorted(problems, byPath),
	}
}

func byInfraDir(a, b *model.Node) int { return strings.Compare(a.InfraDir, b.InfraDir) }

func byPath(a, b model.Problem) int { return strings.Compare(a.Path, b.Path) }

// mergeSorted merges lists each sorted by cmp into one sorted list; of
// equal elements, those of an earlier list come first. The lists are few
// (one a worker), so the smallest head is looked for in turn.
func mergeSorted[T any](lists [][]T, cmp func(a, b T) int) []T {
	total := 0
	for _, l := range lists {
		total += len(l)
	}
	if total == 0 {
		return nil
	}
	out := make([]T, 0, total)
	for {
		best := -1
		for i, l := range lists {
			if len(l) > 0 && (best < 0 || cmp(l[0], lists[best][0]) < 0) {
				best = i
			}
		}
		if best < 0 {
			return out
		}
		out = append(out, lists[best][0])
		lists[best] = lists[best][1:]
	}
}

// openDir lists the job's directory into l, kept open for reading its
// files, relative to its parent when that is open; a listing replaced by a
// test is read by path. The job's hold on its parent ends here.
func (w *walker) openDir(j dirJob, l *listing) (dirHandle, []fs.DirEntry, error) {
	if j.parent != nil {
		defer j.parent.release()
	}
	switch {
	case w.readDir != nil:
		entries, err := w.readDir(j.dir)
		return dirHandle{path: j.dir, fd: -1}, entries, err
	case j.parent != nil && j.parent.h.fd >= 0:
		return openDirAt(j.parent.h, j.name, j.dir, l)
	}
	return openDir(j.dir)
}

// push queues a directory: shared when a worker is idle, else local.
func (w *walker) push(j dirJob, res *result) {
	w.pending.Add(1)
	if w.idle.Load() > 0 {
		w.mu.Lock()
		w.queue = append(w.queue, j)
		w.mu.Unlock()
		w.cond.Signal()
		return
	}
	res.stack = append(res.stack, j)
}

// next returns the worker's next directory: its own first, then the
// shared queue; false when the whole walk is done.
func (w *walker) next(res *result) (dirJob, bool) {
	if n := len(res.stack); n > 0 {
		j := res.stack[n-1]
		res.stack = res.stack[:n-1]
		return j, true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.queue) == 0 && w.pending.Load() > 0 {
		w.idle.Add(1)
		w.cond.Wait()
		w.idle.Add(-1)
	}
	if len(w.queue) == 0 {
		return dirJob{}, false
	}
	j := w.queue[len(w.queue)-1]
	w.queue = w.queue[:len(w.queue)-1]
	return j, true
}

// visit lists one directory, reads it when it is a node and queues the
// subdirectories the rules allow.
func (w *walker) visit(j dirJob, res *result) {
	h, entries, err := w.openDir(j, &res.listing)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return // removed while the scan ran: nothing to report
		}
		res.problems = append(res.problems, model.Problem{Path: j.dir, Error: termtext.OneLine("read directory: "+err.Error(), 0)})
		return
	}
	res.dirs = append(res.dirs, j.dir)
	isNode := isNodeDir(entries)
	if w.visited != nil {
		w.visited(h, entries, isNode)
	}
	above, named := j.above, j.named
	if isNode {
		h.heartbeat, h.above = j.heartbeat, j.above
		if n := readNode(j.root.Path, h, entries, &res.reader); n != nil {
			n.Traits = j.root.nativeTraits(j.dir)
			res.nodes = append(res.nodes, n)
			if n.HeartbeatPath != "" {
				above = n.HeartbeatPath
			}
			named = registeredPaths(n)
		}
	}
	// Held open for the subdirectories pushed below (made on the first),
	// closed with the last of them or, when there is none, here.
	var ref *dirRef
	defer func() {
		if ref != nil {
			ref.release()
		} else {
			h.close()
		}
	}()
	if j.depth > 0 {
		for _, e := range entries {
			if e.Name() == ".git" {
				return // a git worktree: its checkout holds no nodes of ours
			}
		}
	}
	for _, e := range entries {
		// Type() is from the listing: a symlink to a directory is not
		// ModeDir, so directory symlinks are never followed.
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		child, heartbeat := pathsNamed(named, j.dir, name)
		rel := strings.TrimPrefix(filepath.ToSlash(child[len(j.root.Path):]), "/")
		if w.skipDir(name, rel) {
			continue
		}
		if j.depth+1 > w.maxDepth {
			res.problems = append(res.problems, model.Problem{Path: child,
				Error: fmt.Sprintf("not scanned: deeper than the depth bound %d", w.maxDepth)})
			continue
		}
		if ref == nil && h.fd >= 0 {
			ref = &dirRef{h: h}
			ref.refs.Store(1) // this visit's own hold, released at its end
		}
		if ref != nil {
			ref.refs.Add(1)
		}
		w.push(dirJob{root: j.root, dir: child, depth: j.depth + 1, heartbeat: heartbeat, above: above, named: named,
			parent: ref, name: child[len(child)-len(name):]}, res)
	}
}

// heartbeatIn is the path of the heartbeat of dir's entry name, made in
// one string with the entry's own path, which is its prefix (dir is clean
// and name a listed one, as joinClean takes them).
func heartbeatIn(dir, name string) string {
	if dir == "" || dir[len(dir)-1] == filepath.Separator {
		return filepath.Join(dir, name, protocol.HeartbeatFile)
	}
	const sep = string(filepath.Separator)
	return dir + sep + name + sep + protocol.HeartbeatFile
}

// registeredPaths are the paths n's registry names (nil when none), for
// pathsNamed, each as a slice of its entry's string: the heartbeat path of
// each child, and the directories between n's and the child's (a team's).
// Each key is its own value.
func registeredPaths(n *model.Node) map[string]string {
	var named map[string]string
	dir := n.InfraDir
	for _, line := range n.Registry {
		if line.Entry == nil {
			continue
		}
		if named == nil {
			named = make(map[string]string, len(n.Registry))
		}
		hb := line.Entry.Heartbeat
		named[hb] = hb
		if len(hb) <= len(dir)+1 || hb[:len(dir)] != dir || hb[len(dir)] != filepath.Separator {
			continue // not below n: no directory between
		}
		// The child's own directory is named with its heartbeat; the
		// ones above it, up to n's, are named here.
		below := hb[:strings.LastIndexByte(hb, filepath.Separator)]
		for {
			i := strings.LastIndexByte(below, filepath.Separator)
			if i <= len(dir) {
				break
			}
			below = below[:i]
			named[below] = below
		}
	}
	return named
}

// pathsNamed is the path of dir's subdirectory name and of the heartbeat in
// it, made in one string, as the very string of a registry entry when one
// names them (named, from registeredPaths): a registered child's path is
// then held once, not once by the entry and again by the child (10 MB at
// 100,000 nodes), and so is a directory between (7 MB), whose heartbeat is
// then "" (it is joined if there is one). dir is clean and name a listed
// one, as joinClean takes them.
func pathsNamed(named map[string]string, dir, name string) (child, heartbeat string) {
	if len(named) > 0 && dir != "" && dir[len(dir)-1] != filepath.Separator {
		var buf [256]byte
		key := append(buf[:0], dir...)
		key = append(key, filepath.Separator)
		key = append(key, name...)
		sub := len(key)
		key = append(key, filepath.Separator)
		key = append(key, protocol.HeartbeatFile...)
		if s, ok := named[string(key)]; ok {
			return s[:sub], s
		}
		if s, ok := named[string(key[:sub])]; ok {
			return s, ""
		}
	}
	heartbeat = heartbeatIn(dir, name)
	return heartbeat[:len(heartbeat)-len(protocol.HeartbeatFile)-1], heartbeat
}

// skipDir applies the never-descend rules and the ignore globs (matched
// against the base name and the root-relative path).
func (w *walker) skipDir(name, rel string) bool { return skipDir(w.ignore, name, rel) }

// skipDir is the walk's rule for one directory, by name and root-relative
// path; BuildForest applies it to the paths files name, too.
func skipDir(ignore []string, name, rel string) bool {
	if name == ".git" || name == "node_modules" {
		return true
	}
	for _, g := range ignore {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
		if ok, _ := path.Match(g, rel); ok {
			return true
		}
	}
	return false
}
