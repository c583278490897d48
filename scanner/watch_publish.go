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

// builtForest says whether the published forest's edges still hold.
type builtForest struct {
	// stale: an edge changed (a node came or went, a registry line was
	// added, a store was read): the facts are linked again before the next
	// publish.
	stale bool
}

// rebuild links the facts into a new forest (BuildForest), which the
// publish then classifies in place: it is the snapshot handed out, and the
// engine's facts are its nodes from then on (at 100,000 nodes a second copy
// of the forest is about 75 MiB held for nothing). Facts that are a
// published snapshot's own are copied first (BuildForest sets tree fields),
// the engine's own are linked as they are.
func (w *Watcher) rebuild() *model.Snapshot {
	facts := make([]*model.Node, 0, len(w.nodes.byDir))
	for _, ln := range w.nodes.byDir {
		if ln.own {
			resetClassification(ln.n)
		} else {
			ln.n, ln.own = CopyFacts(ln.n), true
		}
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
	snap := BuildForest(w.allRoots, facts, probs)
	// The nodes are the snapshot's once it is classified: never written
	// again.
	clear(w.stores.session)
	clear(w.stores.patch)
	for i, s := range snap.Sessions {
		s.Walk(func(n *model.Node) {
			if isStoreNode(n) {
				w.stores.session[n.HeartbeatPath] = int32(i)
			} else if ln := w.liveNodeOf(n); ln != nil {
				ln.n, ln.own, ln.session = n, false, int32(i)
			}
		})
	}
	w.built.stale = false
	w.stats.mu.Lock()
	w.stats.rebuilds++
	w.stats.mu.Unlock()
	return snap
}

// liveNodeOf is the record whose facts n holds, or nil for a node made by
// BuildForest (a registry entry's missing node) or read from a store.
func (w *Watcher) liveNodeOf(n *model.Node) *liveNode {
	if isStoreNode(n) {
		return nil
	}
	return w.nodes.byDir[n.InfraDir]
}

// publish classifies the forest at now, diffs it against the previous
// snapshot and hands it out. Trees are scoped (SPEC §2: a change in one
// session never changes another), so only some sessions are copied from
// the previous snapshot (with the facts that changed since) and classified
// again, the others are shared with it:
//   - after a file event, the sessions holding a touched node;
//   - on a tick, the sessions due (see dueSessions) and, every
//     reasonRefreshTicks, those whose reasons quote an age as plain text;
//   - every session for the first snapshot and after a rebuilt forest
//     (whose nodes are new and classified in place).
func (w *Watcher) publish(now time.Time, tick bool) {
	if tick {
		defer func(t0 time.Time) {
			w.stats.mu.Lock()
			w.stats.fullTime += time.Since(t0)
			w.stats.fulls++
			w.stats.mu.Unlock()
		}(time.Now())
	}
	var snap *model.Snapshot
	switch affected := w.affectedSessions(now, tick); {
	case w.prev == nil || w.built.stale:
		clear(w.nodes.unpublished)
		snap = w.rebuild()
		// By its sessions, which the later snapshots renew one by one.
		snap.IndexSessions()
		w.classifyAll(snap, now)
	case len(affected) == 0 && w.mode.Overflows == w.prev.Watch.Overflows:
		clear(w.nodes.unpublished)
		return // nothing the model shows has changed
	default:
		clear(w.nodes.unpublished)
		cp := *w.prev
		snap = &cp
		if len(affected) > 0 {
			snap.Sessions = slices.Clone(w.prev.Sessions)
		}
		for i := range affected {
			c := w.renewSession(w.prev.Sessions[i])
			fillThresholds([]*model.Node{c}, w.bySource)
			w.owners.apply(c)
			liveness.ClassifyForest([]*model.Node{c}, w.probe, now, w.opts.Thresholds)
			w.owners.note(c, w.probe, now, w.opts.Thresholds)
			w.due.noteClassified(i, c, now)
			snap.Sessions[i] = c
		}
		// The id index is prev's but for the sessions renewed: an update
		// costs what it renewed, not the forest.
		snap.RenewSessions(maps.Keys(affected))
	}
	clear(w.stores.patch)
	snap.GeneratedAt = now
	snap.Thresholds = w.opts.Thresholds
	snap.Watch = w.watchInfo()
	// The sessions nothing touched are prev's own nodes, which Diff skips.
	trans := model.DiffFor(w.prev, snap, now, "vanished from disk", w.wo.Transitions)
	w.prev = snap
	w.latest.Store(snap)
	w.lastFlush = time.Now()
	model.Publish(w.updates, model.Update{Snapshot: snap, Transitions: trans})
	w.stats.mu.Lock()
	w.stats.publishes++
	w.stats.mu.Unlock()
}

// affectedSessions are the indexes of the sessions to classify again when
// the forest's edges hold: those holding a node whose facts changed and,
// on a tick, those due and, every reasonRefreshTicks, those whose reasons
// quote an age as plain text. nil means every session (no snapshot yet, or
// a stale forest).
func (w *Watcher) affectedSessions(now time.Time, tick bool) map[int]bool {
	if w.prev == nil || w.built.stale {
		return nil
	}
	affected := map[int]bool{}
	for dir := range w.nodes.unpublished {
		if ln := w.nodes.byDir[dir]; ln != nil && ln.session >= 0 {
			affected[int(ln.session)] = true
		}
	}
	for key := range w.stores.patch {
		affected[int(w.stores.session[key])] = true
	}
	if tick {
		w.due.ticks++
		if w.due.ticks%reasonRefreshTicks == 0 {
			w.due.quotingClock(affected)
		}
		t0 := time.Now()
		w.due.dueSessions(w.prev.Sessions, now, affected)
		w.stats.mu.Lock()
		w.stats.dueTime += time.Since(t0)
		w.stats.mu.Unlock()
	}
	return affected
}

// classifyAll classifies every session of snap at now, which is either a
// rebuilt forest or a copy of the previous one, and notes what the ticks
// need of each.
func (w *Watcher) classifyAll(snap *model.Snapshot, now time.Time) {
	fillThresholds(snap.Sessions, w.bySource)
	w.owners.prune(snap.Sessions)
	for _, s := range snap.Sessions {
		w.owners.apply(s)
	}
	liveness.ClassifyForest(snap.Sessions, w.probe, now, w.opts.Thresholds)
	w.due.reset(len(snap.Sessions))
	for i, s := range snap.Sessions {
		w.owners.note(s, w.probe, now, w.opts.Thresholds)
		w.due.noteClassified(i, s, now)
	}
	w.due.prunePids()
}

// reasonRefreshTicks bounds how stale the ages a reason quotes as plain
// text ("lead dead since 11:58:30 (2m00s ago)", "kill candidate in 1m30s")
// get in the snapshots: every this many ticks the sessions holding one are
// classified again, in one snapshot. The beat's age in a reason ("last beat
// 12s ago") moves by itself: every view renders it at its own clock
// (model.Node.ReasonAt), so a fleet whose reasons quote no other age costs
// no refresh at all. In between, a tick publishes only when a session is
// due (see dueSessions): at 10,000 nodes a full classification and the
// consumer's rebuild of its rows cost tens of milliseconds. States and
// flags are never late: they change at known times (nextDue) or when a
// probe answers differently.
const reasonRefreshTicks = 30
