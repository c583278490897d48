package serve

import (
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dispatchtop/dispatchtop/model"
)

// Metric names: docs/metrics.md describes each, docs/alerts.yml uses them,
// and a test checks that the rules name only these.
const (
	MetricNodes             = "dispatchtop_nodes"
	MetricFlaggedNodes      = "dispatchtop_flagged_nodes"
	MetricHeartbeatAgeMax   = "dispatchtop_heartbeat_age_max_seconds"
	MetricActionableNodes   = "dispatchtop_actionable_nodes"
	MetricBlockedMax        = "dispatchtop_blocked_max_seconds"
	MetricSessions          = "dispatchtop_sessions"
	MetricProblems          = "dispatchtop_problems"
	MetricTransitions       = "dispatchtop_transitions_total"
	MetricScanDuration      = "dispatchtop_scan_duration_seconds"
	MetricSnapshotTimestamp = "dispatchtop_snapshot_timestamp_seconds"
	MetricWatchMode         = "dispatchtop_watch_mode"
	MetricWatchPoll         = "dispatchtop_watch_poll_interval_seconds"
	MetricWatchOverflows    = "dispatchtop_watch_overflows_total"
	MetricWatchWarnings     = "dispatchtop_watch_warnings"
	MetricPidCheck          = "dispatchtop_pid_check"
	MetricBuildInfo         = "dispatchtop_build_info"

	// One series a node: served only with Options.PerNodeMetrics.
	MetricHeartbeatAge = "dispatchtop_heartbeat_age_seconds"
	MetricNodeAction   = "dispatchtop_node_action"
	MetricBlocked      = "dispatchtop_blocked_seconds"
)

// Transition kinds, the `kind` label of dispatchtop_transitions_total.
const (
	KindAppeared = "appeared" // a node came into the forest
	KindVanished = "vanished" // a node left it
	KindState    = "state"    // its state changed
	KindFlags    = "flags"    // same state, other flags
)

// snapshotCollector computes every per-snapshot series from the newest
// snapshot when Prometheus scrapes, so a scrape never sees a half-updated
// model and serve keeps no copy of the forest.
type snapshotCollector struct {
	snapshot func() *model.Snapshot
	now      func() time.Time
	blocked  *blockedTracker
	scan     time.Duration
	version  string
	perNode  bool
	// maxSessions is how many sessions get a label of their own
	// (DefaultMaxSessionLabels when 0 or less).
	maxSessions int

	nodes, flagged, beatAgeMax, actionable, blockedMax *prometheus.Desc
	beatAge, action, blockedFor                        *prometheus.Desc
	sessions, problems, scanDur, snapTime              *prometheus.Desc
	watchMode, watchPoll, overflows, warnings, pidChk  *prometheus.Desc
	build                                              *prometheus.Desc
}

func newSnapshotCollector(snapshot func() *model.Snapshot, now func() time.Time, blocked *blockedTracker, scan time.Duration, version string, perNode bool) *snapshotCollector {
	d := prometheus.NewDesc
	return &snapshotCollector{
		snapshot: snapshot, now: now, blocked: blocked, scan: scan, version: version, perNode: perNode,
		nodes: d(MetricNodes, "Nodes per session and state (every state, zeros included).",
			[]string{"session", "state"}, nil),
		flagged: d(MetricFlaggedNodes, "Nodes per session carrying a flag (only flags present).",
			[]string{"session", "flag"}, nil),
		beatAgeMax: d(MetricHeartbeatAgeMax, "Seconds since the oldest heartbeat mtime among the running nodes of a session and role.",
			[]string{"session", "role"}, nil),
		actionable: d(MetricActionableNodes, "Nodes per session whose recommended action is not none, by action (only actions present).",
			[]string{"session", "action"}, nil),
		blockedMax: d(MetricBlockedMax, "Seconds the longest-waiting blocked node of a session and role has waited for a human.",
			[]string{"session", "role"}, nil),
		beatAge: d(MetricHeartbeatAge, "Seconds since the heartbeat's mtime, per running node.",
			[]string{"session", "node", "role"}, nil),
		action: d(MetricNodeAction, "1 for every node whose recommended action is not none.",
			[]string{"session", "node", "action"}, nil),
		blockedFor: d(MetricBlocked, "Seconds a blocked node has been waiting for a human: since its sentinel was written (else since this server first saw it blocked).",
			[]string{"session", "node", "role"}, nil),
		sessions: d(MetricSessions, "Sessions (trees) in the forest.", nil, nil),
		problems: d(MetricProblems, "Read and parse problems of the latest scan.", nil, nil),
		scanDur:  d(MetricScanDuration, "Wall time of the discovery scan that built the live model at start.", nil, nil),
		snapTime: d(MetricSnapshotTimestamp, "Unix time the served snapshot was classified.", nil, nil),
		watchMode: d(MetricWatchMode, "1 for the watch mode in use (fsnotify, polling or mixed).",
			[]string{"mode", "reason"}, nil),
		watchPoll: d(MetricWatchPoll, "Polling interval in seconds, 0 when nothing is polled.", nil, nil),
		overflows: d(MetricWatchOverflows, "fsnotify queue overflows answered by a re-stat.", nil, nil),
		warnings:  d(MetricWatchWarnings, "Watch warnings (e.g. a root on a network file system).", nil, nil),
		pidChk:    d(MetricPidCheck, "1 when pids are probed, 0 under --no-pid-check.", nil, nil),
		build:     d(MetricBuildInfo, "Always 1; the version label says which dispatchtop serves.", []string{"version"}, nil),
	}
}

func (c *snapshotCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.nodes, c.flagged, c.beatAgeMax, c.actionable, c.blockedMax, c.sessions, c.problems, c.scanDur,
		c.snapTime, c.watchMode, c.watchPoll, c.overflows, c.warnings, c.pidChk, c.build,
	} {
		ch <- d
	}
	if c.perNode {
		ch <- c.beatAge
		ch <- c.action
		ch <- c.blockedFor
	}
}

func (c *snapshotCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		// Ids come from directory names, which need not be UTF-8; a label
		// value must be, or the whole scrape would fail.
		for i, l := range labels {
			labels[i] = strings.ToValidUTF8(l, "\uFFFD")
		}
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(c.build, 1, c.version)
	gauge(c.scanDur, c.scan.Seconds())
	snap := c.snapshot()
	if snap == nil {
		return
	}
	now := c.now()
	gauge(c.sessions, float64(len(snap.Sessions)))
	gauge(c.problems, float64(len(snap.Problems)))
	gauge(c.snapTime, model.EpochSeconds(snap.GeneratedAt))
	wi := snap.Watch
	if wi.Mode != "" {
		gauge(c.watchMode, 1, wi.Mode, wi.Reason)
	}
	gauge(c.watchPoll, wi.Interval.Seconds())
	ch <- prometheus.MustNewConstMetric(c.overflows, prometheus.CounterValue, float64(wi.Overflows))
	gauge(c.warnings, float64(len(wi.Warnings)))
	pid := 1.0
	if snap.Thresholds.NoPidCheck {
		pid = 0
	}
	gauge(c.pidChk, pid)

	blockedSince := c.blocked.sync(snap)
	var agg sessionAggregates
	limit := c.maxSessions
	if limit <= 0 {
		limit = DefaultMaxSessionLabels
	}
	for _, group := range sessionGroups(snap.Sessions, limit) {
		agg.reset()
		for _, s := range group.sessions {
			c.collectSession(s, &agg, blockedSince, now, gauge)
		}
		c.emitSession(group.label, &agg, gauge)
	}
}

// The session labels that stand for several sessions (SPEC §4.2): the
// sessions whose every node finished, and those past the cap.
const (
	SessionFinished = "(finished)"
	SessionOther    = "(other)"
)

// DefaultMaxSessionLabels is how many sessions get a label of their own
// unless Options.MaxSessionLabels says otherwise.
const DefaultMaxSessionLabels = 100

// sessionGroup is what one session label counts.
type sessionGroup struct {
	label    string
	sessions []*model.Node
}

// sessionGroups keeps the session label bounded as sessions come and go:
// a session whose nodes all finished is counted under SessionFinished; of
// the others, max get their own label, those that want attention (a dead
// node, a recommended action, a blocked node) first, then in the
// snapshot's order; the rest are counted under SessionOther.
func sessionGroups(sessions []*model.Node, max int) []sessionGroup {
	var own, finished, other []*model.Node
	var calm []*model.Node
	for _, s := range sessions {
		done, attention := true, false
		s.Walk(func(n *model.Node) {
			done = done && n.State == model.StateFinished
			attention = attention || n.State == model.StateDead || n.Blocked != nil ||
				(n.Action != "" && n.Action != model.ActionNone)
		})
		switch {
		case done:
			finished = append(finished, s)
		case attention && len(own) < max:
			own = append(own, s)
		case attention:
			other = append(other, s)
		default:
			calm = append(calm, s)
		}
	}
	for _, s := range calm {
		if len(own) < max {
			own = append(own, s)
		} else {
			other = append(other, s)
		}
	}
	groups := make([]sessionGroup, 0, len(own)+2)
	for _, s := range own {
		groups = append(groups, sessionGroup{label: s.ID, sessions: []*model.Node{s}})
	}
	if len(finished) > 0 {
		groups = append(groups, sessionGroup{label: SessionFinished, sessions: finished})
	}
	if len(other) > 0 {
		groups = append(groups, sessionGroup{label: SessionOther, sessions: other})
	}
	return groups
}

// collectSession adds s's nodes to agg (and sends the per-node series).
func (c *snapshotCollector) collectSession(s *model.Node, agg *sessionAggregates, blockedSince map[string]time.Time,
	now time.Time, gauge func(d *prometheus.Desc, v float64, labels ...string)) {
	{
		session := s.ID
		s.Walk(func(n *model.Node) {
			agg.states[n.State]++
			for _, f := range n.Flags {
				agg.flags[f]++
			}
			role := n.Role()
			if n.State == model.StateRunning && !n.BeatMtime.IsZero() {
				age := max(0, now.Sub(n.BeatMtime).Seconds())
				agg.beatAgeMax[role] = max(agg.beatAgeMax[role], age)
				if c.perNode {
					gauge(c.beatAge, age, session, n.ID, role)
				}
			}
			if n.Action != "" && n.Action != model.ActionNone {
				agg.actions[n.Action]++
				if c.perNode {
					gauge(c.action, 1, session, n.ID, string(n.Action))
				}
			}
			since, blocked := blockedSince[n.ID]
			if n.Blocked != nil && !n.Blocked.Since.IsZero() {
				since, blocked = n.Blocked.Since, true
			}
			if blocked {
				waited := max(0, now.Sub(since).Seconds())
				agg.blockedMax[role] = max(agg.blockedMax[role], waited)
				if c.perNode {
					gauge(c.blockedFor, waited, session, n.ID, role)
				}
			}
		})
	}
}

// emitSession sends agg's series under the session label.
func (c *snapshotCollector) emitSession(session string, agg *sessionAggregates, gauge func(d *prometheus.Desc, v float64, labels ...string)) {
	{
		for _, st := range model.States {
			gauge(c.nodes, float64(agg.states[st]), session, string(st))
		}
		for _, f := range model.Flags {
			if k := agg.flags[f]; k > 0 {
				gauge(c.flagged, float64(k), session, string(f))
			}
		}
		for action, k := range agg.actions {
			gauge(c.actionable, float64(k), session, string(action))
		}
		for role, age := range agg.beatAgeMax {
			gauge(c.beatAgeMax, age, session, role)
		}
		for role, waited := range agg.blockedMax {
			gauge(c.blockedMax, waited, session, role)
		}
	}
}

// sessionAggregates are one session's counts and maxima, kept across
// sessions so a scrape of many sessions allocates its maps once.
type sessionAggregates struct {
	states     map[model.State]int
	flags      map[model.Flag]int
	actions    map[model.Action]int
	beatAgeMax map[string]float64 // by role
	blockedMax map[string]float64 // by role
}

func (a *sessionAggregates) reset() {
	if a.states == nil {
		*a = sessionAggregates{states: map[model.State]int{}, flags: map[model.Flag]int{}, actions: map[model.Action]int{},
			beatAgeMax: map[string]float64{}, blockedMax: map[string]float64{}}
		return
	}
	clear(a.states)
	clear(a.flags)
	clear(a.actions)
	clear(a.beatAgeMax)
	clear(a.blockedMax)
}

// blockedTracker remembers since when each node has been blocked, for the
// nodes whose sentinel's mtime is unknown: from the transition that set the
// flag when serve saw it happen, else from the first snapshot that showed it.
type blockedTracker struct {
	mu    sync.Mutex
	since map[string]time.Time
}

func newBlockedTracker() *blockedTracker {
	return &blockedTracker{since: map[string]time.Time{}}
}

// observe records the transitions into and out of `blocked`.
func (b *blockedTracker) observe(trans []model.Transition) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range trans {
		was, is := hasFlag(t.FromFlags, model.FlagBlocked), hasFlag(t.ToFlags, model.FlagBlocked)
		switch {
		case is && !was:
			if _, ok := b.since[t.ID]; !ok {
				b.since[t.ID] = t.Time
			}
		case was && !is:
			delete(b.since, t.ID)
		}
	}
}

// sync brings the record in line with snap (nodes blocked there and not yet
// known start now; nodes no longer blocked are forgotten) and returns a copy.
func (b *blockedTracker) sync(snap *model.Snapshot) map[string]time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]time.Time{}
	for _, s := range snap.Sessions {
		s.Walk(func(n *model.Node) {
			if !n.HasFlag(model.FlagBlocked) {
				return
			}
			since, ok := b.since[n.ID]
			if !ok {
				since = snap.GeneratedAt
			}
			out[n.ID] = since
		})
	}
	b.since = out
	return maps.Clone(out)
}

func hasFlag(fs []model.Flag, f model.Flag) bool {
	for _, g := range fs {
		if g == f {
			return true
		}
	}
	return false
}

// transitionKind names what a transition changed.
func transitionKind(t model.Transition) string {
	switch {
	case t.From == "":
		return KindAppeared
	case t.To == "":
		return KindVanished
	case t.From != t.To:
		return KindState
	}
	return KindFlags
}

// toLabel is the `to` label: the state after, "none" for a vanished node.
func toLabel(t model.Transition) string {
	if t.To == "" {
		return "none"
	}
	return string(t.To)
}
