package scanner

// Building and publishing: the facts are linked into a forest only when an
// edge changed, and each update classifies only the sessions that may have
// changed (SPEC §2: trees are scoped).

import (
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

// builtForest is the facts linked into a forest, not classified: the
// template every published snapshot is cloned from.
type builtForest struct {
	snap *model.Snapshot // nil when an edge changed: rebuilt before the next publish
	gen  int             // bumped by every rebuild
	// byDir is the forest's node of every native infra dir, patched in
	// place when new facts keep the edges; sessionOf its session.
	byDir     map[string]*model.Node
	sessionOf map[string]*model.Node
}

// rebuild links the facts into a new forest (BuildForest). The forest's
// nodes are the facts themselves, not copies (at 10,000 nodes a copy is
// about 6 MiB held for nothing): BuildForest resets their tree fields
// first, published snapshots are clones, and a change of facts either
// replaces the record (and patches it into the forest, see patchFacts) or
// rebuilds the forest.
func (w *Watcher) rebuild() {
	facts := make([]*model.Node, 0, len(w.nodes.byDir))
	for _, ln := range w.nodes.byDir {
		facts = append(facts, ln.n)
	}
	probs := make([]model.Problem, 0, len(w.walkProbs))
	for _, p := range w.walkProbs {
		probs = append(probs, p)
	}
	sort.Slice(probs, func(i, j int) bool { return probs[i].Path < probs[j].Path })
	if len(w.stores.stores) > 0 {
		stored, storeProbs := w.storeFactsForBuild()
		facts, probs = append(facts, stored...), append(probs, storeProbs...)
	}
	w.built.snap = BuildForest(w.allRoots, facts, probs)
	w.built.gen++
	w.built.byDir = make(map[string]*model.Node, len(facts))
	w.built.sessionOf = make(map[string]*model.Node, len(facts))
	for _, s := range w.built.snap.Sessions {
		s.Walk(func(n *model.Node) {
			if isStoreNode(n) {
				return // a store is read whole: its forest is rebuilt
			}
			w.built.byDir[n.InfraDir] = n
			w.built.sessionOf[n.InfraDir] = s
		})
	}
	w.stats.mu.Lock()
	w.stats.rebuilds++
	w.stats.mu.Unlock()
}

// publish classifies a copy of the forest at now, diffs it against the
// previous snapshot and hands it out. Trees are scoped (SPEC §2: a change
// in one session never changes another), so only some sessions are copied
// and classified again, the others are shared with the previous snapshot:
//   - after a file event, the sessions holding a touched node;
//   - on a tick, the sessions due (see dueSessions);
//   - every session for the first snapshot and after a rebuilt forest.
func (w *Watcher) publish(now time.Time, tick bool) {
	if tick {
		defer func(t0 time.Time) {
			w.stats.mu.Lock()
			w.stats.fullTime += time.Since(t0)
			w.stats.fulls++
			w.stats.mu.Unlock()
		}(time.Now())
	}
	if w.built.snap == nil {
		w.rebuild()
	}
	sameTree := w.prev != nil && w.prevGen == w.built.gen
	var affected map[*model.Node]bool
	if sameTree {
		affected = map[*model.Node]bool{}
		for dir := range w.nodes.unpublished {
			if s := w.built.sessionOf[dir]; s != nil {
				affected[s] = true
			}
		}
		if tick {
			w.due.ticks++
			if w.due.ticks%reasonRefreshTicks == 0 {
				affected = nil // every reason's ages, in one snapshot
			} else {
				t0 := time.Now()
				w.due.dueSessions(w.built.snap.Sessions, now, affected)
				w.stats.mu.Lock()
				w.stats.dueTime += time.Since(t0)
				w.stats.mu.Unlock()
			}
		}
		if affected != nil && len(affected) == 0 && w.mode.Overflows == w.prev.Watch.Overflows {
			clear(w.nodes.unpublished)
			return // nothing the model shows has changed
		}
	}

	clear(w.nodes.unpublished)

	var snap *model.Snapshot
	if affected == nil {
		snap = cloneForest(w.built.snap)
		fillThresholds(snap.Sessions, w.opts, w.opts.Thresholds)
		w.owners.prune(snap.Sessions)
		for _, s := range snap.Sessions {
			w.owners.apply(s)
		}
		liveness.ClassifyForest(snap.Sessions, w.probe, now, w.opts.Thresholds)
		w.due.reset()
		for i, s := range snap.Sessions {
			w.owners.note(s, w.probe, now, w.opts.Thresholds)
			w.due.noteClassified(w.built.snap.Sessions[i], s, now)
		}
		w.due.prunePids()
	} else {
		cp := *w.prev
		snap = &cp
		if len(affected) > 0 {
			// The id map is shared until a session is replaced.
			snap.Sessions = slices.Clone(w.prev.Sessions)
			snap.ByID = maps.Clone(w.prev.ByID)
		}
		for i, ts := range w.built.snap.Sessions {
			if !affected[ts] {
				continue
			}
			c := cloneSession(ts, snap.ByID)
			fillThresholds([]*model.Node{c}, w.opts, w.opts.Thresholds)
			w.owners.apply(c)
			liveness.ClassifyForest([]*model.Node{c}, w.probe, now, w.opts.Thresholds)
			w.owners.note(c, w.probe, now, w.opts.Thresholds)
			w.due.noteClassified(ts, c, now)
			snap.Sessions[i] = c
		}
	}
	snap.GeneratedAt = now
	snap.Thresholds = w.opts.Thresholds
	snap.Watch = w.watchInfo()
	// The sessions nothing touched are prev's own nodes, which Diff skips.
	trans := model.Diff(w.prev, snap, now, "vanished from disk")
	w.prev, w.prevGen = snap, w.built.gen
	w.latest.Store(snap)
	w.lastFlush = time.Now()
	model.Publish(w.updates, model.Update{Snapshot: snap, Transitions: trans})
	w.stats.mu.Lock()
	w.stats.publishes++
	w.stats.mu.Unlock()
}

// reasonRefreshTicks bounds how stale the ages quoted in a reason ("last
// beat 12s ago", "orphaned since 11:58:30 (2m ago)") get in the snapshots:
// every this many ticks the whole forest is classified again and published
// as one snapshot. In between, a tick publishes only when a session is due
// (see dueSessions), so an idle fleet costs its consumer one snapshot per
// this many ticks, not one a tick: at 10,000 nodes a full classification
// and the consumer's rebuild of its rows cost tens of milliseconds. The ui
// shows beat ages (the column and the one a reason quotes) from BeatMtime at
// its own clock. States and flags are never late: they change at known
// times (nextDue) or when a probe answers differently.
const reasonRefreshTicks = 30
