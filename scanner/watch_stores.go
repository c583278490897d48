package scanner

// The stores: roots read by a source other than the native one. Where the
// native roots are followed file by file, a store is read again whole when
// one of its watch paths changes, and the forest rebuilt; the read waits
// for the same debounce as a heartbeat's. A watched file is followed
// through the directory holding it, filtered by name, so that a -wal
// written beside it or an atomic rename over it is seen. Every poll
// compares the watch paths' signatures too: a store is followed where
// inotify is not.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// storeSet is every store root the watcher holds.
type storeSet struct {
	stores []*store
	// byDir lists, per watched directory, the stores it matters to.
	byDir map[string][]*store
	// toRead holds the stores to read again at the next flush.
	toRead map[*store]bool
	// unsettled holds the stores whose last read may have missed a write
	// (storeSettle): the next tick reads them again.
	unsettled map[*store]bool
}

// storeSettle is how soon after a watch path was written a read of its
// store may have missed that write. SQLite (WAL mode) appends a
// transaction's frames to the -wal, whose event brings the read, and only
// then publishes them in the -shm index that readers go by (and that is not
// followed: every read writes it); a writer preempted between the two
// leaves a read that saw nothing new, and no event to come. A second read
// at the next tick sees the commit.
const storeSettle = time.Second

// store is one store root: its last facts and what says it changed.
type store struct {
	facts storeFacts
	// paths are its watch paths with their signatures at the last read
	// (zero for a path that was absent).
	paths map[string]fileSig
	// names are, per watched directory, the base names that matter there;
	// nil for a directory the source named itself (every name matters).
	names map[string]map[string]bool
}

// adoptStores takes in the stores a gather read: each one's watch paths
// get a watch on their directories (or are polled) and their signatures.
func (w *Watcher) adoptStores(read []storeFacts) {
	w.stores.byDir = map[string][]*store{}
	w.stores.toRead = map[*store]bool{}
	w.stores.unsettled = map[*store]bool{}
	for _, f := range read {
		st := &store{facts: f, paths: map[string]fileSig{}, names: map[string]map[string]bool{}}
		w.followStore(st, true)
		w.stores.stores = append(w.stores.stores, st)
	}
}

// followStore asks the store's source for its watch paths and follows
// each one not followed yet: a job started after the watcher brings a new
// bus in a new directory. A path adopted with the store's first read gets
// its signature; one found later a zero one, so that its first change is
// never taken for what a read already saw.
func (w *Watcher) followStore(st *store, adopting bool) {
	for _, p := range st.facts.root.Source.WatchPaths(st.facts.root.Path) {
		p = filepath.Clean(p)
		if _, ok := st.paths[p]; ok {
			continue
		}
		if adopting {
			st.paths[p] = storeSig(p)
		} else {
			st.paths[p] = fileSig{}
		}
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

// markStores marks the stores a changed path matters to. A watch path
// whose signature is what the last read saw did not change: a reader
// opening a database sets its -wal's mode (a Chmod event), so every read
// would otherwise cause the next. A -shm is SQLite's shared index, never
// the store's content. It stats one file at most.
func (w *Watcher) markStores(path string) {
	dir, name := filepath.Dir(path), filepath.Base(path)
	if strings.HasSuffix(name, "-shm") {
		return
	}
	var sig *fileSig
	for _, st := range w.stores.byDir[dir] {
		names := st.names[dir]
		if names != nil && !names[name] {
			continue
		}
		if seen, ok := st.paths[path]; ok {
			if sig == nil {
				s := storeSig(path)
				sig = &s
			}
			if *sig == seen {
				continue
			}
		}
		w.stores.toRead[st] = true
	}
}

// restatStores marks every store whose watch paths' signatures moved
// (all when every is set: a refresh after an action).
func (w *Watcher) restatStores(every bool) {
	for _, st := range w.stores.stores {
		if every {
			w.stores.toRead[st] = true
			continue
		}
		for p, sig := range st.paths {
			if storeSig(p) != sig {
				w.stores.toRead[st] = true
				break
			}
		}
	}
}

// readStores reads the marked stores again whole; the forest is rebuilt.
// Signatures first: a change racing the read shows at the next compare; a
// read that starts within storeSettle of a write is unsettled.
func (w *Watcher) readStores(now time.Time) {
	suspect := time.Now().Add(-storeSettle).UnixNano()
	if w.stores.unsettled == nil {
		w.stores.unsettled = map[*store]bool{}
	}
	for st := range w.stores.toRead {
		delete(w.stores.toRead, st)
		delete(w.stores.unsettled, st)
		for p := range st.paths {
			sig := storeSig(p)
			st.paths[p] = sig
			if sig.mtime > suspect {
				w.stores.unsettled[st] = true
			}
		}
		st.facts = readStore(st.facts.root, now)
		w.followStore(st, false)
		w.built.stale = true
	}
}

// settleStores marks the stores whose last read was unsettled, to be read
// again; it reports whether there are any.
func (w *Watcher) settleStores() bool {
	for st := range w.stores.unsettled {
		delete(w.stores.unsettled, st)
		w.stores.toRead[st] = true
	}
	return len(w.stores.toRead) > 0
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
