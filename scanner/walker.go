package scanner

// The walkers of discovery: each owns a stack of directories, opens each
// relative to its parent, lists it once, reads the node dirs it finds, and
// sorts its own share; the shares are merged in order at the end.

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

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
		above, named = w.readVisited(j, h, entries, res)
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
	if j.depth > 0 && hasEntry(entries, ".git") {
		return // a git worktree: its checkout holds no nodes of ours
	}
	for _, e := range entries {
		// Type() is from the listing: a symlink to a directory is not
		// ModeDir, so directory symlinks are never followed.
		if e.IsDir() {
			ref = w.pushChild(j, h, e.Name(), above, named, ref, res)
		}
	}
}

// pushChild pushes the subdirectory name of j's dir (open as h) unless it
// is skipped or deeper than the bound, with what it inherits: the nearest
// heartbeat above and the paths named by the registry above. ref is the
// hold on h the subdirectories share, made on the first pushed.
func (w *walker) pushChild(j dirJob, h dirHandle, name, above string, named map[string]string, ref *dirRef, res *result) *dirRef {
	child, heartbeat := pathsNamed(named, j.dir, name)
	rel := strings.TrimPrefix(filepath.ToSlash(child[len(j.root.Path):]), "/")
	if w.skipDir(name, rel) {
		return ref
	}
	if j.depth+1 > w.maxDepth {
		res.problems = append(res.problems, model.Problem{Path: child,
			Error: fmt.Sprintf("not scanned: deeper than the depth bound %d", w.maxDepth)})
		return ref
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
	return ref
}

// readVisited reads the node dir of j (opened as h) and adds its node to res; above and
// named are what its subdirectories inherit: the nearest heartbeat above
// them and the paths its registry names (j's own when the dir is no longer
// a node).
func (w *walker) readVisited(j dirJob, h dirHandle, entries []fs.DirEntry, res *result) (above string, named map[string]string) {
	above, named = j.above, j.named
	if n := readNode(j.root.Path, h, entries, &res.reader); n != nil {
		n.Traits = j.root.nativeTraits(j.dir)
		res.nodes = append(res.nodes, n)
		if n.HeartbeatPath != "" {
			above = n.HeartbeatPath
		}
		named = registeredPaths(n)
	}
	return above, named
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
	for _, line := range n.RegistryLines() {
		if line.Entry == nil {
			continue
		}
		if named == nil {
			named = make(map[string]string, len(n.RegistryLines()))
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
