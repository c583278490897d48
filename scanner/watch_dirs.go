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
}

func newDirIndex(netFS func(string) string) dirIndex {
	if netFS == nil {
		netFS = networkFS
	}
	return dirIndex{byPath: map[string]*watchDir{}, netFS: netFS, netMounts: map[string]string{}}
}

type watchDir struct {
	path    string
	root    string
	polled  bool
	mtime   time.Time
	dev     uint64   // the device it is on: a new one below the root is a mount
	netFS   string   // the network file system it is on, or ""
	subdirs dirNames // base names of known subdirectories
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

// adopt takes in what a walk found: every directory gets a watch (or is
// polled), every node its record. A directory changed since start (every
// one when start is zero) is listed again, and a node whose files moved since it
// was read is re-read, so nothing falls between the walk and the watch.
func (w *Watcher) adopt(walk *Walk, start time.Time) {
	for _, p := range walk.Problems {
		w.walkProbs[p.Path] = p
	}
	var recheck []*watchDir
	for _, dir := range walk.Dirs {
		if _, ok := w.dirs.byPath[dir]; ok {
			continue
		}
		d := w.addDir(dir)
		if d == nil {
			continue
		}
		if start.IsZero() || !d.mtime.Before(start) {
			recheck = append(recheck, d)
		}
	}
	for _, n := range walk.Nodes {
		if _, ok := w.dirs.byPath[n.InfraDir]; !ok {
			continue
		}
		ln := &liveNode{n: n, own: true, session: -1, sigs: nodeSigs(n.InfraDir), regOff: -1}
		w.nodes.byDir[n.InfraDir] = ln
		w.nodes.unpublished[n.InfraDir] = true
		if stale(ln) || n.RegistryCompacting != "" && w.wo.RecoverCompactions {
			w.nodes.toRead[n.InfraDir] |= kindNode
		}
	}
	for _, d := range recheck {
		w.relist(d)
	}
	w.built.stale = true
}

// addDir registers a directory: an fsnotify watch when possible, else it
// is polled. nil when the directory is gone. A directory on a network file
// system is polled (SPEC §1): the file system is asked of the roots and of
// mount points below them (a device other than the parent's); the others
// are on their parent's.
func (w *Watcher) addDir(dir string) *watchDir {
	d := &watchDir{path: dir, root: w.rootOf(dir)}
	parent := w.dirs.byPath[filepath.Dir(dir)]
	if dir == d.root || parent == nil {
		parent = nil
		d.netFS = w.networkMount(dir)
	} else {
		d.netFS = parent.netFS
	}
	watched := false
	if w.fsw != nil && d.netFS == "" && w.dirs.limitHit == "" {
		if w.wo.MaxWatches > 0 && w.dirs.nWatched >= w.wo.MaxWatches {
			w.dirs.limitHit = fmt.Sprintf("watch limit of %d reached", w.wo.MaxWatches)
		} else if err := w.wo.addWatch(w.fsw, dir); err == nil {
			watched = true
		} else if errors.Is(err, syscall.ENOSPC) {
			w.dirs.limitHit = fmt.Sprintf("inotify watch limit reached after %d watches", w.dirs.nWatched)
		} else if errors.Is(err, fs.ErrNotExist) {
			return nil
		} else {
			w.addWalkProblem(dir, fmt.Errorf("watch: %w", err))
		}
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		if watched {
			_ = w.fsw.Remove(dir)
		}
		return nil
	}
	d.mtime = fi.ModTime()
	d.dev = w.wo.devOf(dir, fi)
	if parent != nil && d.dev != parent.dev && d.netFS == "" {
		if d.netFS = w.networkMount(dir); d.netFS != "" && watched {
			_ = w.fsw.Remove(dir)
			watched = false
		}
	}
	d.polled = !watched
	if d.polled {
		w.dirs.nPolled++
	} else {
		w.dirs.nWatched++
	}
	w.dirs.byPath[dir] = d
	if parent, ok := w.dirs.byPath[filepath.Dir(dir)]; ok && dir != d.root {
		parent.subdirs.add(filepath.Base(dir))
	}
	return d
}

// networkMount names the network file system dir is on (recording it for
// the header's warning), or "".
func (w *Watcher) networkMount(dir string) string {
	name := w.dirs.netFS(dir)
	if name != "" {
		w.dirs.netMounts[dir] = name
	}
	return name
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
	if dir == d.root {
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
	walk, err := DiscoverDir(w.roots, dir, w.opts)
	if err != nil {
		w.addWalkProblem(dir, err)
		return
	}
	// A new subtree is small and still being filled: list every directory
	// again once its watch is on.
	w.adopt(walk, time.Time{})
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
	worktree := d.path != d.root && slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == gitEntry })
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
	dirs := make([]*watchDir, 0, len(w.dirs.byPath))
	for _, d := range w.dirs.byPath {
		if !polledOnly || d.polled {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		if _, still := w.dirs.byPath[d.path]; !still {
			continue // dropped with a parent meanwhile
		}
		fi, err := os.Lstat(d.path)
		if err != nil {
			w.dropDir(d.path)
			continue
		}
		if !fi.ModTime().Equal(d.mtime) {
			d.mtime = fi.ModTime()
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
