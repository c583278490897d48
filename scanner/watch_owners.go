package scanner

// The owners of per-turn pids (SPEC §3 idle): the live engine records, when
// it first sees such a pid alive, the process that owns it — its parent and
// the parent's create time — and carries that across snapshots, so that
// once the turn's pid is gone a living owner says "between turns" and a
// gone one says dead. `--once` has no memory and records none.

import (
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

// ownerBook holds the owner recorded for each per-turn node, by its
// heartbeat key (unique across every store of the host).
type ownerBook struct {
	byKey map[string]recordedOwner
}

// recordedOwner is the owner read for the node's pid pid, which every
// copy of the node is given (never written: the copies share it).
type recordedOwner struct {
	pid   int
	owner *model.Owner
}

// apply gives every node of s the owner recorded for it, before s is
// classified.
func (b *ownerBook) apply(s *model.Node) {
	if len(b.byKey) == 0 {
		return
	}
	s.Walk(func(n *model.Node) {
		if r, ok := b.byKey[n.HeartbeatPath]; ok && n.Traits.PIDPerTurn {
			n.Owner = r.owner
		}
	})
}

// note records the owner of every per-turn pid of s, just classified at
// now, that runs as the node's process and was not recorded yet: a new
// turn's pid is read once. The pid is asked here, whatever the classifier
// asked: a fresh beat makes it ask none, and the owner must be read while
// the turn runs. The node is given its owner at once (it is not published
// yet), so the snapshot shows what the next classification will use.
func (b *ownerBook) note(s *model.Node, probe liveness.Probe, now time.Time, global model.Thresholds) {
	if global.NoPidCheck {
		return
	}
	var boot time.Time
	if bt, ok := probe.(liveness.BootTimer); ok {
		boot = bt.BootTime()
	}
	s.Walk(func(n *model.Node) {
		pid := n.PID()
		if !n.Traits.PIDPerTurn || pid <= 0 || n.HeartbeatPath == "" || n.Heartbeat == nil {
			return
		}
		if r, ok := b.byKey[n.HeartbeatPath]; ok && r.pid == pid {
			return
		}
		if n.Process == model.ProcessGone || n.Process == model.ProcessReused {
			return
		}
		th := liveness.ThresholdsFor(n, global)
		status, _ := liveness.VerifyWithin(probe.Lookup(pid), n.Heartbeat.Started, n.Traits.StartSlack, th.StartTolerance, boot, now)
		if status != model.ProcessAlive {
			return
		}
		owner, ok := liveness.OwnerOf(probe, pid)
		if !ok {
			return
		}
		if b.byKey == nil {
			b.byKey = map[string]recordedOwner{}
		}
		r := recordedOwner{pid: pid, owner: &owner}
		b.byKey[n.HeartbeatPath] = r
		n.Owner = r.owner
	})
}

// prune forgets the owners of nodes no longer in sessions.
func (b *ownerBook) prune(sessions []*model.Node) {
	if len(b.byKey) == 0 {
		return
	}
	present := make(map[string]bool, len(b.byKey))
	for _, s := range sessions {
		s.Walk(func(n *model.Node) {
			if _, ok := b.byKey[n.HeartbeatPath]; ok {
				present[n.HeartbeatPath] = true
			}
		})
	}
	for k := range b.byKey {
		if !present[k] {
			delete(b.byKey, k)
		}
	}
}
