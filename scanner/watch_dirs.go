package scanner

// The directory index: every directory under the roots that the watcher
// holds, watched by fsnotify or polled (a watch limit, a network file
// system), and how directories are added, dropped, listed again and
// re-statted as they change.

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// dirIndex is every directory the watcher holds, by path.
type dirIndex struct {
	byPath map[string]*watchDir
	// netFS names the network file system a path is on, or "".
	netFS     func(path string) string
	netMounts map[string]string // roots and mount points on a network file system -> its name
	nWatched  int
	nPolled   int
	limitHit  string // why directories are polled past a watch limit
	// restatting is restat's list of the directories to compare, kept
	// between passes.
	restatting []*watchDir
}

func newDirIndex(netFS func(string) string) dirIndex {
	if netFS == nil {
		netFS = networkFS
	}
	return dirIndex{byPath: map[string]*watchDir{}, netFS: netFS, netMounts: map[string]string{}}
}

// watchDir is one directory held. There is one per directory (190,000 at
// 100,000 nodes): it is kept small.
type watchDir struct {
	path    string
	mtime   int64    // Unix nanoseconds
	dev     uint64   // the device it is on: a new one below the root is a mount
	subdirs dirNames // base names of known subdirectories
	polled  bool
	root    bool // it is a root
	network bool // it is on a network file system (netMounts names it)
}

// dirNames is a directory's few subdirectory names. A slice, not a map:
// there is one per directory (tens of thousands), most hold a handful of
// names or none, and a map costs several times the memory.
type dirNames []string

// add appends name; the caller knows it is new (addDir registers a
// directory once), which keeps adding 10,000 sessions linear.
func (d *dirNames) add(name string) { *d = append(*d, name) }

func (d *dirNames) remove(name string) {
	if i := slices.Index(*d, name); i >= 0 {
		*d = slices.Delete(*d, i, i+1)
	}
}

// watchInfo is the current mode, with the polled share explained.
func (w *Watcher) watchInfo() model.WatchInfo {
	info := w.mode
	for _, p := range slices.Sorted(maps.Keys(w.dirs.netMounts)) {
		info.Warnings = append(info.Warnings,
			fmt.Sprintf("%s is on %s: mtimes and inotify are unreliable there, it is polled", p, w.dirs.netMounts[p]))
	}
	if w.mode.Mode == ModePolling {
		return info
	}
	switch {
	case w.dirs.nPolled > 0 && w.dirs.nWatched == 0:
		info.Mode = ModePolling
	case w.dirs.nPolled > 0:
		info.Mode = ModeMixed
	}
	if w.dirs.nPolled > 0 {
		info.Interval = w.wo.FallbackPoll
		var why []string
		if w.dirs.limitHit != "" {
			why = append(why, w.dirs.limitHit)
		}
		if len(w.dirs.netMounts) > 0 {
			why = append(why, "network file system")
		}
		info.Reason = fmt.Sprintf("%d of %d directories polled (%s)", w.dirs.nPolled, w.dirs.nPolled+w.dirs.nWatched, strings.Join(why, ", "))
	}
	return info
}

// walkTaker takes in a walk's directories as its workers list them (see
// walked); adopt then takes in the nodes it read.
type walkTaker struct {
	w *Watcher
	// since: a directory changed since is listed again once the walk is
	// over (every one when zero), so that nothing falls between its
	// listing and its watch.
	since   int64
	recheck []*watchDir
	nodes   int // records walked made, their facts to come
}

// walkOptions are the options of a walk whose workers take in every
// directory they list, through the walkTaker returned; since is as
// walkTaker's.
func (w *Watcher) walkOptions(since time.Time) (Options, *walkTaker) {
	t := &walkTaker{w: w}
	if !since.IsZero() {
		t.since = since.UnixNano()
	}
	opts := w.opts
	opts.visited = t.walked
	opts.signStores = true
	return opts, t
}

// walked registers a directory as a walk's worker lists it, before a node
// is read from it: its watch goes on (or it is polled), and for an infra
// dir a record gets the signatures of the files that matter, taken before
// the read, so that a change racing the read shows at the next comparison.
// The system is asked in the workers, in parallel; only the index is
// written under its lock (a directory's parent is registered before it:
// its subdirectories are queued after this returns).
func (t *walkTaker) walked(h dirHandle, entries []fs.DirEntry, isNode bool) {
	w, dir := t.w, h.path
	w.walkMu.Lock()
	_, held := w.dirs.byPath[dir]
	parent := w.dirs.byPath[filepath.Dir(dir)]
	w.walkMu.Unlock()
	if held {
		return
	}
	mtime, dev, err := h.stat()
	if err != nil {
		return // gone
	}
	d := &watchDir{path: dir, mtime: mtime, dev: dev, root: parent == nil}
	if w.wo.devOf != nil {
		d.dev = w.wo.devOf(dir)
	}
	// The file system is asked of the roots and of mount points (a device
	// other than the parent's); the others are on their parent's.
	mount := ""
	if parent != nil && parent.network {
		d.network = true
	} else if parent == nil || d.dev != parent.dev {
		mount = w.dirs.netFS(dir)
		d.network = mount != ""
	}
	var sigs fileSigs
	if isNode {
		sigs = h.sigs(entries)
	}
	// Room for the subdirectories listed, which the walk registers next.
	subdirs := 0
	for _, e := range entries {
		if e.IsDir() {
			subdirs++
		}
	}
	d.subdirs = make(dirNames, 0, subdirs)

	w.walkMu.Lock()
	defer w.walkMu.Unlock()
	if mount != "" {
		w.dirs.netMounts[dir] = mount
	}
	watched, ok := w.watch(dir, d.network)
	if !ok {
		return // gone
	}
	d.polled = !watched
	w.dirs.byPath[dir] = d
	if parent != nil {
		parent.subdirs.add(filepath.Base(dir))
	}
	if t.since == 0 || d.mtime >= t.since {
		t.recheck = append(t.recheck, d)
	}
	if isNode {
		w.nodes.byDir[dir] = &liveNode{own: true, session: -1, sigs: sigs}
		t.nodes++
	}
}

// watch puts an fsnotify watch on dir when it can (watched), else counts it
// polled; ok is false when dir is gone. A network file system is polled
// (SPEC §1), and so is every directory past the watch limit.
func (w *Watcher) watch(dir string, network bool) (watched, ok bool) {
	if w.fsw != nil && !network && w.dirs.limitHit == "" {
		if w.wo.MaxWatches > 0 && w.dirs.nWatched >= w.wo.MaxWatches {
			w.dirs.limitHit = fmt.Sprintf("watch limit of %d reached", w.wo.MaxWatches)
		} else if err := w.wo.addWatch(w.fsw, dir); err == nil {
			watched = true
		} else if errors.Is(err, syscall.ENOSPC) {
			w.dirs.limitHit = fmt.Sprintf("inotify watch limit reached after %d watches", w.dirs.nWatched)
		} else if errors.Is(err, fs.ErrNotExist) {
			delete(w.dirs.netMounts, dir)
			return false, false
		} else {
			w.addWalkProblem(dir, fmt.Errorf("watch: %w", err))
		}
	}
	if watched {
		w.dirs.nWatched++
	} else {
		w.dirs.nPolled++
	}
	return watched, true
}

// adopt takes in the nodes a walk read into the records its workers made,
// and the walk's problems. A directory changed since the walk began is
// listed again, and a node whose files moved since they were signed is
// read again, so nothing falls between the walk and the watch.
func (t *walkTaker) adopt(walk *Walk) {
	w := t.w
	for _, p := range walk.Problems {
		w.walkProbs[p.Path] = p
	}
	adopted := 0
	for _, n := range walk.Nodes {
		ln := w.nodes.byDir[n.InfraDir]
		if ln == nil || ln.n != nil {
			continue // not walked here
		}
		ln.n = n
		adopted++
		if stale(ln) || n.RegistryCompacting() != "" && w.wo.RecoverCompactions {
			w.nodes.toRead[n.InfraDir] |= kindNode
		}
	}
	if adopted < t.nodes {
		// Some were not nodes after all (the sentinel went before the
		// read): their directories are held, and relisted if they changed.
		for dir, ln := range w.nodes.byDir {
			if ln.n == nil {
				delete(w.nodes.byDir, dir)
			}
		}
	}
	for _, d := range t.recheck {
		if w.dirs.byPath[d.path] == d {
			w.relist(d)
		}
	}
	w.built.stale = true
}

// rootOf is the path of the root holding dir.
func (w *Watcher) rootOf(dir string) string {
	best := ""
	for _, r := range w.roots {
		if within(r.Path, dir) && len(r.Path) > len(best) {
			best = r.Path
		}
	}
	return best
}

// dropDir forgets a directory and everything below it.
func (w *Watcher) dropDir(dir string) {
	d, ok := w.dirs.byPath[dir]
	if !ok {
		return
	}
	// Each drop removes its name from d.subdirs: walk a copy.
	for _, sub := range slices.Clone(d.subdirs) {
		w.dropDir(filepath.Join(dir, sub))
	}
	delete(w.dirs.byPath, dir)
	delete(w.dirs.netMounts, dir)
	if d.polled {
		w.dirs.nPolled--
	} else {
		w.dirs.nWatched--
		// The kernel drops the watch of a deleted directory itself; a
		// renamed one is removed here. Either way the error is moot.
		_ = w.fsw.Remove(dir)
	}
	if parent, ok := w.dirs.byPath[filepath.Dir(dir)]; ok {
		parent.subdirs.remove(filepath.Base(dir))
	}
	if _, ok := w.nodes.byDir[dir]; ok {
		delete(w.nodes.byDir, dir)
		w.built.stale = true
	}
	if filepath.Base(dir) == protocol.MiddleDir {
		if pln := w.nodes.byDir[filepath.Dir(dir)]; pln != nil {
			if _, had := pln.sigs.get(middleBlocked); had {
				w.nodes.toRead[pln.n.InfraDir] |= kindNode // its sentinel went with it
			}
		}
	}
	delete(w.nodes.toRead, dir)
	delete(w.nodes.readFailed, dir)
	for p := range w.walkProbs {
		if within(dir, p) {
			delete(w.walkProbs, p)
		}
	}
	if d.root {
		w.addWalkProblem(dir, errors.New("root vanished; it is looked for again at every poll"))
	}
}

// findLostRoots discovers again the roots that vanished while watched (a
// root deleted and made again): nothing watches a root's parent, so they
// are looked for at every poll. A root present costs a map lookup.
func (w *Watcher) findLostRoots() {
	for _, r := range w.roots {
		if _, held := w.dirs.byPath[r.Path]; held {
			continue
		}
		if fi, err := os.Stat(r.Path); err != nil || !fi.IsDir() {
			continue
		}
		delete(w.walkProbs, r.Path)
		w.discover(r.Path)
	}
}

// discover walks a directory that appeared and adopts what it holds;
// nothing inside a worktree (SPEC §1).
func (w *Watcher) discover(dir string) {
	if w.inWorktree(dir) {
		return
	}
	// A new subtree is small and still being filled: every directory is
	// listed again once its watch is on.
	opts, taker := w.walkOptions(time.Time{})
	walk, err := DiscoverDir(w.roots, dir, opts)
	if err != nil {
		w.addWalkProblem(dir, err)
		return
	}
	taker.adopt(walk)
}

// gitEntry marks a git worktree (a file or a directory), which discovery
// never descends into.
const gitEntry = ".git"

// inWorktree reports whether dir lies below a directory that holds a `.git`
// entry (its root excepted, as the walk excepts it). DiscoverDir checks only
// the names on the way, so this asks the disk: a checkout makes its
// directories after its `.git`, and directories appear rarely.
func (w *Watcher) inWorktree(dir string) bool {
	root := w.rootOf(dir)
	if root == "" {
		return false
	}
	for p := filepath.Dir(dir); p != root && within(root, p); p = filepath.Dir(p) {
		if _, err := os.Lstat(filepath.Join(p, gitEntry)); err == nil {
			return true
		}
	}
	return false
}

// relist lists a directory again: new subdirectories are discovered,
// vanished ones dropped, and the infra dir re-read.
func (w *Watcher) relist(d *watchDir) {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			w.dropDir(d.path)
		}
		return
	}
	seen := map[string]bool{}
	known := make(map[string]bool, len(d.subdirs))
	for _, name := range d.subdirs {
		known[name] = true
	}
	// A worktree's own files may matter (it may be a node), its
	// directories never do: as if it had none, the known ones are dropped.
	worktree := !d.root && slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == gitEntry })
	isNode, moved := false, false
	ln := w.nodes.byDir[d.path]
	for _, e := range entries {
		name := e.Name()
		if name == protocol.HeartbeatFile || name == protocol.RunningFile {
			isNode = true
		}
		if !e.IsDir() {
			// A file of the node that was not there when it was read.
			if ln != nil && kindOf(name) != 0 {
				if _, had := ln.sigs.get(name); !had {
					moved = true
				}
			}
			continue
		}
		if worktree {
			continue
		}
		seen[name] = true
		if !known[name] {
			if _, ok := w.dirs.byPath[filepath.Join(d.path, name)]; !ok {
				w.discover(filepath.Join(d.path, name))
			}
		}
	}
	for _, name := range slices.Clone(d.subdirs) {
		if !seen[name] {
			w.dropDir(filepath.Join(d.path, name))
		}
	}
	if filepath.Base(d.path) == protocol.MiddleDir {
		// The sentinel is its parent's: the parent's signatures say whether
		// it was there when the parent was read.
		if pln := w.nodes.byDir[filepath.Dir(d.path)]; pln != nil {
			_, had := pln.sigs.get(middleBlocked)
			has := slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == protocol.BlockedFile })
			if had != has {
				w.nodes.toRead[pln.n.InfraDir] |= kindNode
			}
		}
	}
	switch {
	case isNode != (ln != nil), moved:
		w.nodes.toRead[d.path] |= kindNode
	case ln != nil:
		w.restatNode(ln) // replaced or removed files show in their signatures
	}
}

// restat compares what is held with the disk: every directory's mtime
// (relisting the changed ones) and every node's files. polledOnly limits it
// to the polled directories (the poll tick); an overflow or Refresh covers
// all of them.
func (w *Watcher) restat(polledOnly bool) {
	// The list is kept for the next pass: a poll comes every few seconds.
	dirs := w.dirs.restatting[:0]
	for _, d := range w.dirs.byPath {
		if !polledOnly || d.polled {
			dirs = append(dirs, d)
		}
	}
	defer func() {
		clear(dirs)
		w.dirs.restatting = dirs[:0]
	}()
	for _, d := range dirs {
		if _, still := w.dirs.byPath[d.path]; !still {
			continue // dropped with a parent meanwhile
		}
		// Stat, as the walk's fstat of the open directory: a root may be
		// a symlink.
		sig, err := statSig(d.path)
		if err != nil {
			w.dropDir(d.path)
			continue
		}
		if sig.mtime != d.mtime {
			d.mtime = sig.mtime
			w.relist(d)
		}
		if base := filepath.Base(d.path); base == protocol.MiddleDir {
			if ln := w.nodes.byDir[filepath.Dir(d.path)]; ln != nil {
				w.restatNode(ln)
			}
		}
		if ln := w.nodes.byDir[d.path]; ln != nil {
			w.restatNode(ln)
		}
	}
}
