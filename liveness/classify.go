package liveness

// Classification (SPEC §3), in two passes over a forest the scanner built:
//
//  1. ClassifyNode: one node's state, flags, reason and probe result, from
//     its own facts only: gathered and worded in classify_node.go and
//     reason_beat.go, judged by the tables in verdict.go.
//  2. Recommend (and orphaned), node by node from the sessions down: what
//     depends on the parent's or the children's state (classify_tree.go).
//
// This file holds the entry points, the beat-age edges and the boot time.
//
// Where the tables leave a case open, the reading decided is written in
// SPEC §3.1 (docs/spec.md); each has a named case in classify_test.go.

import (
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// ClassifyForest classifies every node of the forest: State, Flags, Reason,
// Action, Process and OrphanedSince. Children and Parent links must already
// be built (and cycles broken) by the scanner. probe nil means SystemProbe.
// Pids are looked up only for nodes whose beat is older than the exit grace,
// and never with th.NoPidCheck.
func ClassifyForest(sessions []*model.Node, probe Probe, now time.Time, th model.Thresholds) {
	if probe == nil {
		probe = SystemProbe{}
	}
	if bt, ok := probe.(BootTimer); ok {
		// The boot time is the same for every legacy node: read it once.
		probe = &bootOnce{Probe: probe, timer: bt}
	}
	for _, s := range sessions {
		s.Walk(func(n *model.Node) { ClassifyNode(n, probe, now, th) })
	}
	// Walk visits a parent before its children, so a node's recommendation
	// can name the one its dead parent was given.
	for _, s := range sessions {
		s.Walk(func(n *model.Node) { classifyInTree(n, now, th) })
	}
}

// ClassifyNode sets n's State, Flags, Reason (and ReasonAge) and Process
// from n's own facts.
// The parts that depend on the tree — the orphaned flag, then the action
// (Recommend) — are ClassifyForest's second pass; Action and OrphanedSince
// are reset here.
func ClassifyNode(n *model.Node, probe Probe, now time.Time, th model.Thresholds) {
	th = ThresholdsFor(n, th)
	var c classification
	switch {
	case n.HasHeartbeat:
		c = classifyHeartbeat(n, probe, now, th)
	case n.Legacy:
		c = classifyLegacy(n, probe, now, th)
	default:
		c = classifyUnstarted(n, now)
	}
	n.State, n.Reason, n.ReasonAge, n.Process = c.state, c.reason.text, c.reason.age, c.process
	n.Flags = c.flags.with(n.ScanFlags())
	n.Action = ""
	n.SetOrphanedSince(time.Time{})
}

// classification is one node's own: its state and flags, their reason,
// and what the probe said of its pid.
type classification struct {
	state   model.State
	flags   flagSet
	reason  reason
	process model.ProcessStatus
}

// BeatEdges are the beat ages past which classifyHeartbeat judges a node
// differently: the mtime is no longer in the future (-ClockSkew), the pid
// is asked (exit grace), quiet (beat), stalled or dead by mtime (stale),
// kill candidate (kill-after, measured from the beat like stale: SPEC's
// appendix makes a beat 360 s old one). Every comparison is `age > edge`.
// The live engine re-classifies a node just past each edge, so that
// time-based states appear with no file event. For a node with its own
// thresholds or a launch timeout, NodeEdges gives its edges.
func BeatEdges(th model.Thresholds) [5]time.Duration {
	return [5]time.Duration{-ClockSkew, th.ExitGrace, th.Beat, th.Stale, th.KillAfter}
}

// NodeEdges are the ages of n's beat past which the classifier judges n
// differently: BeatEdges of n's own thresholds (ThresholdsFor), then its
// launch timeout while it is starting (kill-after again otherwise). The
// live engine re-classifies n just past each, as for BeatEdges.
func NodeEdges(n *model.Node, th model.Thresholds) [6]time.Duration {
	th = ThresholdsFor(n, th)
	e := BeatEdges(th)
	launch := th.KillAfter
	if n.Traits.LaunchTimeout > 0 && n.Status() == model.StatusStarting {
		launch = n.Traits.LaunchTimeout
	}
	return [6]time.Duration{e[0], e[1], e[2], e[3], e[4], launch}
}

// ClockSkew is how far in the future a sentinel's mtime may be and still
// count as written just now. Clocks disagree a little: a writer in a VM or
// on another host a few seconds off NTP, a file server that stamps mtimes
// with its own clock, coarse (2 s) timestamps on FAT or SMB. An mtime this
// far ahead or more is no such rounding: its age means nothing (clock_skew)
// and the pid decides at once. Kept as small as the default exit grace: an
// mtime less than this ahead delays the pid's say by no more than that.
const ClockSkew = 5 * time.Second

// skewedBy reports whether mtime is ClockSkew or more after now, and by how
// much; the arithmetic saturates rather than overflows for any mtime.
func skewedBy(mtime, now time.Time) (time.Duration, bool) {
	if now.Sub(mtime) > -ClockSkew {
		return 0, false
	}
	return TimeDistance(mtime, now), true
}

// bootOnce asks its BootTimer at most once. ClassifyForest is sequential,
// so it needs no lock.
type bootOnce struct {
	Probe
	timer BootTimer
	boot  time.Time
	read  bool
}

// NeverSignalled is the wrapped probe's.
func (b *bootOnce) NeverSignalled(pid int) bool { return neverSignalledBy(b.Probe, pid) }

// neverSignalledBy says whether pid is one dispatchtop never signals: pid 1
// and below, and the pids probe's SignalGuard names (none without one).
func neverSignalledBy(probe Probe, pid int) bool {
	if pid <= 1 {
		return true
	}
	g, ok := probe.(SignalGuard)
	return ok && g.NeverSignalled(pid)
}

func (b *bootOnce) BootTime() time.Time {
	if !b.read {
		b.boot, b.read = b.timer.BootTime(), true
	}
	return b.boot
}

func bootTime(probe Probe) time.Time {
	if bt, ok := probe.(BootTimer); ok {
		return bt.BootTime()
	}
	return time.Time{}
}
