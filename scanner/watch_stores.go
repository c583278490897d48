package scanner

// The stores: roots read by a source other than the native one. Where the
// native roots are followed file by file, a store is read again when one
// of its watch paths changes (a sources.Rereader only where they moved:
// one bus, middle's rows past its watermark), and its changed nodes are
// patched into their sessions; the read waits for the same debounce as a
// heartbeat's, and a store read less than a StorePace ago waits until its
// last read is that old (pacing: a store written without pause is read at
// most once per StorePace, each read taking in all that was written
// since; the first write after a quiet StorePace is read at once). A
// watched file is followed
// through the directory holding it, filtered by name, so that a -wal
// written beside it or an atomic rename over it is seen. Every poll
// compares the watch paths' signatures too: a store is followed where
// inotify is not.
//
// A watch path's signature is its file's (size, mtime, inode) and, for a
// sources.Versioned source, its version: a SQLite commit is marked in the
// -shm after the -wal was written and synced, and no event says so. The
// signatures are taken before a read, so that whatever moves after shows
// at the next compare; a read whose signatures had a commit pending is
// followed by a settle check (settleStores), soon and then less often,
// which reads the store again once the commit is marked: a change is seen
// because the mark moved, never because a timer guessed it had.

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/fsnotify/fsnotify"
)

// storeSet is every store root the watcher holds.
type storeSet struct {
	stores []*store
	// byDir lists, per watched directory, the stores it matters to.
	byDir map[string][]*store
	// toRead holds the stores to read again at the next flush.
	toRead map[*store]bool
	// paced holds the stores marked to be read again whose last read is
	// not yet a StorePace old: each is read at its paceAt.
	paced map[*store]bool
	// settling holds the stores whose last read had a commit pending.
	settling map[*store]bool
	// session is, by key, the index of the published session holding a
	// store's node (set when the forest is built; renewals keep it).
	session map[string]int32
	// patch holds, by key, the new facts of store nodes whose edges held
	// through a read: the next publish renews their sessions only.
	patch map[string]*model.Node
}

// store is one store root: its last facts and what says it changed.
type store struct {
	facts storeFacts
	// paths are its watch paths with their signatures at the last read
	// (zero for a path that was absent).
	paths map[string]pathSig
	// names are, per watched directory, the base names that matter there;
	// nil for a directory the source named itself (every name matters).
	names map[string]map[string]bool
	// pending are the watch paths whose version had a commit pending at
	// the last read; the settle check looks at them at settleAt, then
	// settleWait later, doubling up to the fallback poll.
	pending    []string
	settleAt   time.Time
	settleWait time.Duration
	// lastRead is when its last read began (on the wall clock, as the
	// timers run); zero before the first the watcher made. paceAt is when
	// a paced store is due: lastRead and a StorePace.
	lastRead time.Time
	paceAt   time.Time
	// deferred: the store's read waits for a commit being written to be
	// marked (see readStores); a store is deferred once per read.
	deferred bool
	// changed are the watch paths seen to move since the last read, which
	// a sources.Rereader reads again; nil when that is not known (a
	// refresh, lost events): every path is signed and read again.
	changed map[string]bool
	// unnamed are the files that appeared in a directory the source named
	// and that its watch paths, asked again then, did not name: a write of
	// one (an agent's file) asks for them no more.
	unnamed map[string]bool
	// sigs counts the signatures taken (for tests).
	sigs int
}

// dirMoved reports whether the source may name new watch paths since the
// last read (a new job's dir, a bus made in one), so that it is asked for
// them again: a directory it named moved (the poll, a refresh), or an
// entry appeared in one that is a directory, or a file it was not asked
// about yet, unless it is a sources.DirWatched source (whose files are
// content, never watch paths). An entry gone by the read is neither: an
// atomic write's temp file, renamed over the file it writes, costs no
// listing of the store's dirs.
func (st *store) dirMoved() bool {
	_, dirsOnly := st.facts.root.Source.(sources.DirWatched)
	for p := range st.changed {
		if names, ok := st.names[p]; ok && names == nil {
			return true
		}
		if _, watched := st.paths[p]; watched {
			continue // a watch path of its own (a bus's -wal): known
		}
		if names, ok := st.names[filepath.Dir(p)]; !ok || names != nil || st.unnamed[p] {
			continue
		}
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			continue // gone: a temp file renamed over another
		case fi.IsDir():
			return true // a new dir
		case !dirsOnly:
			return true // a new file: a new bus
		}
	}
	return false
}

// noteUnnamed notes the files of changed that lie in a directory the
// source named and that its watch paths, just asked, do not name; a file
// gone is forgotten.
func (st *store) noteUnnamed(changed []string) {
	for _, p := range changed {
		if _, watched := st.paths[p]; watched {
			continue
		}
		if names, ok := st.names[filepath.Dir(p)]; !ok || names != nil {
			continue
		}
		if _, err := os.Lstat(p); err != nil {
			delete(st.unnamed, p)
			continue
		}
		if st.unnamed == nil {
			st.unnamed = map[string]bool{}
		}
		st.unnamed[p] = true
	}
}

// noteChanged notes that the watch path p of st moved; "" that what moved
// is not known.
func (st *store) noteChanged(p string) {
	switch {
	case p == "":
		st.changed = nil
	case st.changed != nil:
		st.changed[p] = true
	}
}

// pathSig is what says a watch path changed: its file's signature and its
// version (zero unless the source is sources.Versioned).
type pathSig struct {
	file fileSig
	ver  sources.Version
}

// sig is the watch path p's signature now.
func (st *store) sig(p string) pathSig {
	st.sigs++
	return pathSig{file: storeSig(p), ver: sources.VersionOf(st.facts.root.Source, p)}
}

// sign is the signatures of every watch path of the root r, taken before
// a read of it so that a change racing the read shows at the next compare.
func sign(r Root) map[string]pathSig {
	sigs := map[string]pathSig{}
	for _, p := range r.Source.WatchPaths(r.Path) {
		p = filepath.Clean(p)
		sigs[p] = pathSig{file: storeSig(p), ver: sources.VersionOf(r.Source, p)}
	}
	return sigs
}

// adoptStores takes in the stores a gather read: each one's watch paths
// get a watch on their directories (or are polled) and the signatures
// taken before the read (see Options.signStores); a store whose read had
// a commit pending is settled as after any read.
func (w *Watcher) adoptStores(read []storeFacts) {
	w.stores.byDir = map[string][]*store{}
	w.stores.toRead = map[*store]bool{}
	w.stores.paced = map[*store]bool{}
	w.stores.settling = map[*store]bool{}
	w.stores.session = map[string]int32{}
	w.stores.patch = map[string]*model.Node{}
	for _, f := range read {
		st := &store{facts: f, paths: map[string]pathSig{}, names: map[string]map[string]bool{}, changed: map[string]bool{}}
		w.followStore(st)
		w.settleAfterRead(st)
		w.stores.stores = append(w.stores.stores, st)
	}
}

// followStore asks the store's source for its watch paths and follows
// each one not followed yet: a job started after the watcher brings a new
// bus in a new directory. A path signed before the store's read keeps
// that signature; one found since gets a zero one, so that its first
// change is never taken for what a read already saw.
func (w *Watcher) followStore(st *store) {
	for _, p := range st.facts.root.Source.WatchPaths(st.facts.root.Path) {
		p = filepath.Clean(p)
		if _, ok := st.paths[p]; ok {
			continue
		}
		st.paths[p] = st.facts.sigs[p]
		dir, name := p, ""
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			dir, name = filepath.Dir(p), filepath.Base(p)
		}
		names, had := st.names[dir]
		switch {
		case name == "":
			st.names[dir] = nil
		case !had:
			st.names[dir] = map[string]bool{name: true}
		case names != nil:
			names[name] = true
		}
		if slices.Contains(w.stores.byDir[dir], st) {
			continue
		}
		if len(w.stores.byDir[dir]) == 0 && w.fsw != nil {
			// Unwatched, the poll's signatures still see the change.
			_ = w.wo.addWatch(w.fsw, dir)
		}
		w.stores.byDir[dir] = append(w.stores.byDir[dir], st)
	}
}

// markStores marks the stores a changed path matters to; op is what its
// event says was done to it. A write of a watch path moved its content:
// it is marked with no stat. Any other event of one (a creation, a
// rename, a Chmod) is compared with the signature the last read saw: a
// reader opening a database sets its -wal's mode (a Chmod event), so
// every read would otherwise cause the next. A -shm is SQLite's shared
// index, never the store's content (its version is read through the
// -wal's path).
func (w *Watcher) markStores(path string, op fsnotify.Op) {
	dir, name := filepath.Dir(path), filepath.Base(path)
	if strings.HasSuffix(name, "-shm") {
		return
	}
	for _, st := range w.stores.byDir[dir] {
		names := st.names[dir]
		if names != nil && !names[name] {
			continue
		}
		if w.stores.waiting(st) && (st.changed == nil || st.changed[path]) {
			continue // to be read, this path with it: nothing to add, no stat
		}
		if seen, ok := st.paths[path]; ok && op != fsnotify.Write && st.sig(path) == seen {
			continue
		}
		// A watch path, or a file in a directory the source named, by its
		// own path: a sources.Rereader reads that file alone (one agent's).
		st.noteChanged(path)
		w.stores.mark(st)
	}
}

// refreshStores marks every store to be read again though no watch path
// moved, and reports whether there is one. Some systems keep a sign of
// life outside the paths their store is watched by — a TeaParty worker's
// stream.jsonl, a Codex thread's rollout — which a read stats beside the
// rows; without this such an agent would read stalled whenever nothing
// else of its store moved. A Rereader is told that its directories moved,
// so it maps its units again without querying them (a TeaParty bus's rows
// are mapped again, its database not asked); any other source, and a
// Rereader that names no directory of its own (middle: one database, its
// rows read past a watermark), reads its store whole. Only the sessions
// whose facts moved are renewed.
func (w *Watcher) refreshStores() bool {
	for _, st := range w.stores.stores {
		dirs := 0
		if _, ok := st.facts.root.Source.(sources.Rereader); ok {
			for dir, names := range st.names {
				if names == nil {
					st.noteChanged(dir)
					dirs++
				}
			}
		}
		if dirs == 0 {
			st.noteChanged("")
		}
		w.stores.mark(st)
	}
	return len(w.stores.stores) > 0
}

// restatStores marks every store whose watch paths' signatures moved
// (all when every is set: a refresh after an action).
func (w *Watcher) restatStores(every bool) {
	for _, st := range w.stores.stores {
		if every {
			st.noteChanged("")
			w.stores.mark(st)
			continue
		}
		for p, sig := range st.paths {
			if st.sig(p) != sig {
				st.noteChanged(p)
				w.stores.mark(st)
			}
		}
	}
}

// waiting reports whether st is marked to be read: at the next flush, or
// at its pace.
func (s *storeSet) waiting(st *store) bool { return s.toRead[st] || s.paced[st] }

// mark marks st to be read at the next flush, unless it is paced: then it
// is read at its pace, and a flush meanwhile would read nothing.
func (s *storeSet) mark(st *store) {
	if !s.paced[st] {
		s.toRead[st] = true
	}
}

// readStores reads the marked stores again: what changed in each, when
// its source is a sources.Rereader and what changed is known, else whole;
// the forest is rebuilt. Signatures first, of what changed (the others'
// are what the last read saw, or an event would have said otherwise): a
// change racing the read shows at the next compare. A store read less than
// a StorePace ago is paced: it waits, with all that moves meanwhile, until
// its last read is a StorePace old (paceStores puts it back), so that one
// written without pause costs a read, a publish and a frame per StorePace,
// not per debounce.
func (w *Watcher) readStores(now time.Time) {
	for st := range w.stores.toRead {
		delete(w.stores.toRead, st)
		if at := st.lastRead.Add(w.wo.StorePace); time.Now().Before(at) {
			st.paceAt = at
			w.stores.paced[st] = true
			continue
		}
		if st.deferred && time.Now().Before(st.settleAt) {
			continue // the rest of the commit's writes: the settle check reads it
		}
		if !st.deferred && w.deferStore(st) {
			continue
		}
		st.deferred = false
		var changed []string
		if st.changed == nil {
			for p := range st.paths {
				st.paths[p] = st.sig(p)
			}
		} else {
			changed = make([]string, 0, len(st.changed))
			for p := range st.changed {
				if _, ok := st.paths[p]; ok {
					st.paths[p] = st.sig(p)
				} else if dir := filepath.Dir(p); st.names[dir] == nil {
					// A file in a directory the source named: the
					// directory's signature moved with it, which the poll
					// would take for a change the read has not seen.
					if _, ok := st.paths[dir]; ok {
						st.paths[dir] = st.sig(dir)
					}
				}
				changed = append(changed, p)
			}
			slices.Sort(changed)
		}
		follow := st.changed == nil || st.dirMoved()
		st.changed = map[string]bool{}
		last := st.facts
		st.lastRead = time.Now()
		w.noteStoreRead(st)
		st.facts = rereadStore(st.facts.root, now, st.facts, changed)
		if follow {
			w.followStore(st)
			st.noteUnnamed(changed)
		}
		w.settleAfterRead(st)
		touched := st.facts.stamped
		if !w.built.stale {
			ok, compared := w.patchStore(last, st.facts)
			w.built.stale, touched = !ok, touched+compared
		}
		w.noteStoreNodes(touched)
	}
}

// noteStoreRead counts a read of st (watchStats.storeReads).
func (w *Watcher) noteStoreRead(st *store) {
	w.stats.mu.Lock()
	defer w.stats.mu.Unlock()
	if w.stats.storeReads == nil {
		w.stats.storeReads = map[string]int{}
	}
	w.stats.storeReads[st.facts.root.Path]++
}

// noteStoreNodes counts n nodes of a store read again that the watcher
// stamped or compared (watchStats.storeNodes).
func (w *Watcher) noteStoreNodes(n int) {
	w.stats.mu.Lock()
	defer w.stats.mu.Unlock()
	w.stats.storeNodes += n
}

// patchStore notes the nodes of a store read again whose facts changed but
// not the forest's edges, for the next publish to patch into their
// sessions (as a heartbeat's facts are), and reports whether it could: a
// node come or gone, reordered, or linked otherwise, a problem of the
// store's changed, or a node the forest does not hold (a key two stores
// share) needs the forest built again. A node a sources.Rereader kept is
// the last read's own: unchanged, nothing to patch; so is one whose facts
// are the same.
func (w *Watcher) patchStore(last, next storeFacts) (ok bool, compared int) {
	if !slices.Equal(last.problems, next.problems) {
		return false, 0
	}
	if next.moved != nil {
		// Put in place (next.nodes is last's list, changed there): the
		// nodes moved are compared with those they replaced, no other.
		for _, m := range next.moved {
			compared++
			if !w.samePlace(m.was, next.nodes[m.at]) {
				return false, compared
			}
		}
		for _, m := range next.moved {
			if n := next.nodes[m.at]; !sameFacts(n, m.was) {
				w.stores.patch[n.HeartbeatPath] = n
			}
		}
		return true, compared
	}
	if len(last.nodes) != len(next.nodes) {
		return false, 0
	}
	for i, n := range next.nodes {
		o := last.nodes[i]
		compared++
		if n != o && !w.samePlace(o, n) {
			return false, compared
		}
	}
	for i, n := range next.nodes {
		compared++
		if n != last.nodes[i] && !sameFacts(n, last.nodes[i]) {
			w.stores.patch[n.HeartbeatPath] = n
		}
	}
	return true, compared
}

// samePlace reports whether the node n, read in place of o, stands where
// o stood in the forest: in a session the forest holds, the same id, the
// same edges and flags.
func (w *Watcher) samePlace(o, n *model.Node) bool {
	_, held := w.stores.session[n.HeartbeatPath]
	return held && n.ID == o.ID && sameEdges(o, n) && slices.Equal(o.ScanFlags(), n.ScanFlags())
}

// sameFacts reports whether two reads of a store's node say the same. Both
// are as their source made them (no tree, no classification yet): every
// field is a fact. A source read whole (no sources.Rereader) makes every
// node anew; only those whose facts moved are patched, so that a row
// changed among a thousand renews its session alone.
func sameFacts(a, b *model.Node) bool { return reflect.DeepEqual(a, b) }

// deferStore defers the read of a store every one of whose changed watch
// paths has a commit pending now: the -wal's event came as the commit was
// written, before it was marked, and a read now would see none of it and
// have to be made again once it is. The settle check reads the store as
// soon as the mark moves, or at the check whatever it says (a commit held
// open is not waited for longer than that).
func (w *Watcher) deferStore(st *store) bool {
	if len(st.changed) == 0 {
		return false
	}
	var pending []string
	for p := range st.changed {
		if _, ok := st.paths[p]; !ok || !st.sig(p).ver.Pending {
			return false
		}
		pending = append(pending, p)
	}
	st.deferred, st.pending = true, pending
	w.stores.settling[st] = true
	st.settleWait = w.wo.Debounce
	st.settleAt = time.Now().Add(st.settleWait)
	return true
}

// settleAfterRead notes the watch paths whose signature, taken before the
// read, had a commit pending: the read may not have seen it, and no event
// will say when it is marked. The first look is a debounce away (on the
// wall clock, which the settle timer runs on, not Options.Now).
func (w *Watcher) settleAfterRead(st *store) {
	st.pending = st.pending[:0]
	for p, sig := range st.paths {
		if sig.ver.Pending {
			st.pending = append(st.pending, p)
		}
	}
	if len(st.pending) == 0 {
		delete(w.stores.settling, st)
		return
	}
	w.stores.settling[st] = true
	st.settleWait = w.wo.Debounce
	st.settleAt = time.Now().Add(st.settleWait)
}

// settleStores looks at the pending watch paths of every settling store
// that is due: one whose signature moved (the commit marked, or another
// begun) is read again; one still pending is looked at again after twice
// the wait, up to the fallback poll (a transaction held open, or frames
// a rollback left for the next commit to write over); one that settled
// with nothing moved leaves the set.
func (w *Watcher) settleStores(now time.Time) {
	for st := range w.stores.settling {
		if now.Before(st.settleAt) {
			continue
		}
		moved, pending := false, false
		for _, p := range st.pending {
			sig := st.sig(p)
			moved = moved || sig != st.paths[p]
			pending = pending || sig.ver.Pending
		}
		switch {
		case moved || st.deferred:
			for _, p := range st.pending {
				st.noteChanged(p)
			}
			w.stores.mark(st)
			delete(w.stores.settling, st)
		case !pending:
			delete(w.stores.settling, st)
		default:
			st.settleWait = min(2*st.settleWait, w.wo.FallbackPoll)
			st.settleAt = now.Add(st.settleWait)
		}
	}
}

// paceStores marks to be read at the next flush every paced store whose
// last read is a StorePace old by now.
func (w *Watcher) paceStores(now time.Time) {
	for st := range w.stores.paced {
		if !now.Before(st.paceAt) {
			delete(w.stores.paced, st)
			w.stores.toRead[st] = true
		}
	}
}

// nextStoreDue is when the next settle check or paced read is due; false
// when no store is settling or paced.
func (w *Watcher) nextStoreDue() (time.Time, bool) {
	var next time.Time
	for st := range w.stores.settling {
		if next.IsZero() || st.settleAt.Before(next) {
			next = st.settleAt
		}
	}
	for st := range w.stores.paced {
		if next.IsZero() || st.paceAt.Before(next) {
			next = st.paceAt
		}
	}
	return next, !next.IsZero()
}

// storeFactsForBuild are copies of every store's nodes (BuildForest sets
// their tree fields; the records keep the store's own ids) and problems.
func (w *Watcher) storeFactsForBuild() ([]*model.Node, []model.Problem) {
	var nodes []*model.Node
	var probs []model.Problem
	for _, st := range w.stores.stores {
		for _, n := range st.facts.nodes {
			c := *n
			nodes = append(nodes, &c)
		}
		probs = append(probs, st.facts.problems...)
	}
	return nodes, probs
}

// storeSig is a watch path's signature; zero when it is absent.
func storeSig(p string) fileSig {
	sig, _ := statSig(p)
	return sig
}
