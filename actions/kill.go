package actions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

// pollEvery is how often kill looks whether its signals took effect.
const pollEvery = 20 * time.Millisecond

// sigkillSettle is how long a SIGKILLed process may take to be gone before
// the kill is reported as failed.
const sigkillSettle = 5 * time.Second

// victim is one process to signal, held (a pidfd) from before its identity
// was checked, so the process verified is the one signalled; where there
// are no pidfds, pinned by its create time, re-verified before each signal.
type victim struct {
	pid     int
	created time.Time
	proc    held
}

// releaseAll lets every victim's process go.
func releaseAll(vs []victim) {
	for _, v := range vs {
		v.proc.release()
	}
}

// kill ends a running node's process and its descendants (SPEC §5.1); with
// Tree, every running node below it first, bottom-up, within its session.
func (e *Engine) kill(ctx context.Context, req Request, snap *model.Snapshot, n *model.Node) (Result, error) {
	res := Result{Action: model.ActionKill, NodeID: n.ID, Root: n.Root, PID: n.PID()}
	grace := req.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	targets := []*model.Node{n}
	var firstErr error
	var skipped []skippedNode
	if req.Tree {
		var notes []string
		targets, notes, skipped = killOrder(snap, n)
		res.Plan = append(res.Plan, notes...)
		for _, sk := range skipped {
			r := Result{Action: model.ActionKill, NodeID: sk.node.ID, Root: sk.node.Root, PID: sk.node.PID(),
				Outcome: OutcomeSkipped, Message: fmt.Sprintf("not killed by --tree %s: %s", n.ID, sk.why)}
			if err := e.journalResult(req, r, nil); err != nil && firstErr == nil {
				firstErr = err
			}
		}
		// A lead that is no longer running may still have running
		// descendants (orphans): --tree ends those and skips the lead.
		if n.State != model.StateRunning && len(targets) > 1 {
			res.Checks = []string{fmt.Sprintf("state %s: skipped, its running descendants killed", n.State)}
			targets = targets[:len(targets)-1]
			res.Plan = append(res.Plan, fmt.Sprintf("skip %s: %s, not running", n.ID, n.State))
		}
	}
	protected := protectedPIDs(e.self)
	var refusals, done, doneMsgs []string
	// A dry run's own account: what would be killed, what refused.
	var wouldKill, wouldRefuse []string
	namedWhy := ""
	for _, t := range targets {
		r := Result{Action: model.ActionKill, NodeID: t.ID, Root: t.Root, PID: t.PID()}
		victims, checks, why := e.killChecks(t, protected)
		defer releaseAll(victims)
		r.Checks = checks
		if t == n {
			res.Checks = checks
		}
		if why != "" {
			r = refuse(r, why)
			refusals = append(refusals, why)
			wouldRefuse = append(wouldRefuse, t.ID+": "+why)
			if t == n {
				namedWhy = why
			}
			res.Plan = append(res.Plan, fmt.Sprintf("refuse %s: %s", t.ID, why))
			if err := e.journalResult(req, r, nil); err != nil && firstErr == nil {
				firstErr = err
			}
			continue
		}
		plan := fmt.Sprintf("SIGTERM %s (node %s, role %q)", pidList(victims), t.ID, t.Role())
		res.Plan = append(res.Plan, plan, fmt.Sprintf("wait up to %s, re-verify each pid, SIGKILL the survivors", grace))
		if req.DryRun {
			wouldKill = append(wouldKill, t.ID)
			continue
		}
		if err := e.step("kill:term " + t.ID); err != nil {
			return res, err
		}
		signals, killed, err := e.terminate(ctx, victims, grace)
		r.Checks = append(r.Checks, "re-verified identity before SIGKILL")
		if err != nil {
			r.Outcome, r.Message = OutcomeFailed, fmt.Sprintf("kill %s: %v", t.ID, err)
			refusals = append(refusals, r.Message)
			if firstErr == nil {
				firstErr = errors.New(r.Message)
			}
		} else {
			r.Outcome = OutcomeDone
			r.Message = fmt.Sprintf("ended pid %d of %s and %d descendant(s)", t.PID(), t.ID, len(victims)-1)
			if killed > 0 {
				r.Message += fmt.Sprintf(" (%d needed SIGKILL)", killed)
			}
			done = append(done, t.ID)
			doneMsgs = append(doneMsgs, r.Message)
		}
		if jerr := e.journalResult(req, r, func(j *JournalEntry) { j.Signals = signals }); jerr != nil && firstErr == nil {
			firstErr = jerr
		}
	}
	switch {
	case req.DryRun && namedWhy == "" && len(wouldKill) > 0:
		res.Outcome = OutcomeDryRun
		res.Message = fmt.Sprintf("would kill %d node(s): %s", len(wouldKill), strings.Join(wouldKill, ", "))
		if len(wouldRefuse) > 0 {
			res.Message += fmt.Sprintf("; would refuse %d: %s", len(wouldRefuse), strings.Join(wouldRefuse, "; "))
		}
	case req.DryRun:
		// The named node itself, or every target, would be refused.
		why := namedWhy
		if why == "" {
			why = refusals[0]
		}
		res = refuse(res, why)
		if len(refusals) > 1 {
			res.Message += fmt.Sprintf(" (and %d more refused)", len(refusals)-1)
		}
	case len(refusals) > 0 && len(done) == 0:
		res = refuse(res, refusals[0])
		if len(refusals) > 1 {
			res.Message += fmt.Sprintf(" (and %d more refused)", len(refusals)-1)
		}
	case len(refusals) > 0:
		res.Refused, res.Outcome = true, OutcomeFailed
		res.Message = fmt.Sprintf("killed %s; refused %d: %s", strings.Join(done, ", "), len(refusals), refusals[0])
	default:
		res.Outcome = OutcomeDone
		res.Message = strings.Join(doneMsgs, "; ")
	}
	if len(skipped) > 0 {
		ids := make([]string, len(skipped))
		for i, sk := range skipped {
			ids[i] = sk.node.ID
		}
		res.Message += fmt.Sprintf("; skipped %s and below: claimed by another session too", strings.Join(ids, ", "))
	}
	return res, firstErr
}

// skippedNode is a descendant --tree leaves alone, and why.
type skippedNode struct {
	node *model.Node
	why  string
}

// killOrder lists n's running descendants bottom-up (children before their
// parent, siblings in id order), then n itself. Trees are scoped (SPEC §2):
// the walk stays in n's session, so a descendant that another session also
// claims (a conflict whose losing parent lies in another session) is not
// n's alone to end — it and what is below it are skipped. notes say, for
// the plan, what was skipped and which registered nodes of other sessions
// were never in the tree.
func killOrder(snap *model.Snapshot, n *model.Node) (order []*model.Node, notes []string, skipped []skippedNode) {
	session := topOf(n)
	var walk func(*model.Node)
	walk = func(p *model.Node) {
		for _, id := range p.RefusedChildren() {
			notes = append(notes, fmt.Sprintf("leave %s: %s's .children names it, but it belongs to another session (conflict)", id, p.ID))
		}
		for _, c := range p.Children {
			if by := claimedElsewhere(snap, c, session); len(by) > 0 {
				why := fmt.Sprintf("also claimed by %s of another session (conflict)", strings.Join(by, ", "))
				notes = append(notes, fmt.Sprintf("skip %s and below: %s", c.ID, why))
				skipped = append(skipped, skippedNode{node: c, why: why})
				continue
			}
			walk(c)
			if c.State == model.StateRunning {
				order = append(order, c)
			}
		}
	}
	walk(n)
	return append(order, n), notes, skipped
}

// claimedElsewhere lists the losing parents of a conflict node that lie
// outside session (a parent not in the snapshot counts as outside).
func claimedElsewhere(snap *model.Snapshot, n, session *model.Node) []string {
	if !n.HasScanFlag(model.FlagConflict) {
		return nil
	}
	var out []string
	for _, id := range n.OtherParents() {
		if p := snap.Node(id); p == nil || topOf(p) != session {
			out = append(out, id)
		}
	}
	return out
}

// topOf is the session n belongs to: its topmost ancestor.
func topOf(n *model.Node) *model.Node {
	for n.Parent != nil {
		n = n.Parent
	}
	return n
}

// killChecks re-checks a kill's preconditions at execution time and
// collects the processes to signal: the node's pid and its descendants.
// A non-empty reason refuses.
func (e *Engine) killChecks(n *model.Node, protected map[int]bool) ([]victim, []string, string) {
	var checks []string
	checks = append(checks, fmt.Sprintf("state %s", n.State))
	if n.State != model.StateRunning {
		return nil, checks, fmt.Sprintf("node %s is %s, not running: %s", n.ID, n.State, n.Reason)
	}
	if e.thresholds().NoPidCheck {
		return nil, checks, "--no-pid-check: the pids of this tree are not this host's to signal"
	}
	if n.Traits.NeverKill {
		return nil, checks, fmt.Sprintf("node %s is controlled by a human (its %s record says so): never killed", n.ID, sourceName(n))
	}
	pid := n.PID()
	checks = append(checks, fmt.Sprintf("pid %d", pid))
	if pid <= 1 {
		return nil, checks, fmt.Sprintf("pid %d of node %s is never signalled", pid, n.ID)
	}
	if protected[pid] {
		return nil, checks, fmt.Sprintf("pid %d of node %s is dispatchtop itself or one of its ancestors: never signalled", pid, n.ID)
	}
	if p := n.Parent; p != nil && p.PID() == pid {
		// An agent that runs inside its parent's process (a Claude Code
		// in-process teammate): signalling it would end the parent.
		return nil, checks, fmt.Sprintf("pid %d of node %s is its parent %s's: it runs inside that process, so only killing %s ends it", pid, n.ID, p.ID, p.ID)
	}
	// Held before its identity is checked: if the process checked is
	// still the one held afterwards, the signals reach that process and
	// no other, whatever takes its pid meanwhile.
	proc, gone := hold(pid)
	created, why := e.verifyIdentity(n)
	if why == "" && (gone || proc.exited()) {
		why = fmt.Sprintf("pid %d of node %s is gone", pid, n.ID)
	}
	if why != "" {
		proc.release()
		checks = append(checks, "identity: "+why)
		return nil, checks, why
	}
	within := fmt.Sprintf("within %s of started", liveness.ThresholdsFor(n, e.thresholds()).StartTolerance)
	if slack := n.Traits.StartSlack; slack > 0 {
		within += fmt.Sprintf(" (or up to %s before it: its source stamps started late)", slack)
	}
	checks = append(checks, fmt.Sprintf("identity: pid %d created %s, %s", pid, created.UTC().Format(time.RFC3339Nano), within))
	victims := []victim{{pid: pid, created: created, proc: proc}}
	desc := descendants(victims[0], protected)
	victims = append(victims, desc...)
	checks = append(checks, fmt.Sprintf("descendants: %d", len(desc)))
	return victims, checks, ""
}

// verifyIdentity checks the node's pid is still the process the heartbeat
// names; it returns the create time, or why it is not (or cannot be) sure.
// The comparison is liveness.VerifyWithin's, the classifier's own.
func (e *Engine) verifyIdentity(n *model.Node) (time.Time, string) {
	pid := n.PID()
	info := e.lookup(pid)
	if !info.Exists {
		return time.Time{}, fmt.Sprintf("pid %d of node %s is gone", pid, n.ID)
	}
	unreadable := fmt.Sprintf("pid %d of node %s cannot be verified (create time unreadable): not signalled", pid, n.ID)
	if n.Heartbeat != nil && n.Heartbeat.Started != 0 {
		// The node's own tolerance and its source's slack: the
		// classifier's window, not a narrower one that would call a
		// late-stamped process reused.
		tolerance := liveness.ThresholdsFor(n, e.thresholds()).StartTolerance
		status, why := liveness.VerifyWithin(info, n.Heartbeat.Started, n.Traits.StartSlack, tolerance, e.bootTime(), e.now())
		switch {
		case status == model.ProcessAlive:
			return info.CreateTime, ""
		case status == model.ProcessReused:
			return time.Time{}, fmt.Sprintf("pid %d now belongs to another process", pid)
		case status == model.ProcessGone:
			return time.Time{}, fmt.Sprintf("pid %d of node %s is gone", pid, n.ID)
		case why != nil:
			return time.Time{}, fmt.Sprintf("pid %d of node %s cannot be verified (%v): not signalled", pid, n.ID, why)
		}
		return time.Time{}, unreadable
	}
	if info.CreateTimeErr != nil || info.CreateTime.IsZero() {
		return time.Time{}, unreadable
	}
	if n.Legacy && !n.BeatMtime.IsZero() {
		// A legacy sentinel has no started time: the process must have
		// existed when `.running` was written — a time that can be a
		// process's of this host at all: a mtime far ahead is passed by
		// every process.
		tolerance := e.thresholds().StartTolerance
		if err := liveness.CheckStarted(model.EpochSeconds(n.BeatMtime), e.bootTime(), e.now(), tolerance); err != nil {
			return time.Time{}, fmt.Sprintf("pid %d of node %s cannot be verified (.running %s): not signalled", pid, n.ID,
				strings.TrimPrefix(err.Error(), "started "))
		}
		if info.CreateTime.After(n.BeatMtime.Add(tolerance)) {
			return time.Time{}, fmt.Sprintf("pid %d now belongs to another process", pid)
		}
		return info.CreateTime, ""
	}
	return time.Time{}, fmt.Sprintf("node %s has no started time to verify pid %d against: not signalled", n.ID, pid)
}

// bootTime is the host's last boot as the configured probe knows it (zero
// when it does not), else as the operating system says.
func (e *Engine) bootTime() time.Time {
	if p := e.opts.Scan.Probe; p != nil {
		if bt, ok := p.(liveness.BootTimer); ok {
			return bt.BootTime()
		}
		return time.Time{}
	}
	return liveness.SystemProbe{}.BootTime()
}

// lookup asks the configured probe, else the operating system.
func (e *Engine) lookup(pid int) liveness.ProcessInfo {
	if e.opts.Scan.Probe != nil {
		return e.opts.Scan.Probe.Lookup(pid)
	}
	return osLookup(pid)
}

func osLookup(pid int) liveness.ProcessInfo {
	if pid <= 0 {
		return liveness.ProcessInfo{}
	}
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return liveness.ProcessInfo{}
	}
	ms, err := p.CreateTime()
	if err != nil {
		return liveness.ProcessInfo{Exists: true, CreateTimeErr: err}
	}
	return liveness.ProcessInfo{Exists: true, CreateTime: time.UnixMilli(ms)}
}

// descendants collects every process below top (children first found,
// breadth first), each held from before it is known as a child: a process
// held whose parent is, after the hold, the held parent still running is
// that parent's child, not a process that took a child's pid. Protected
// pids are left out.
func descendants(top victim, protected map[int]bool) []victim {
	var out []victim
	seen := map[int]bool{top.pid: true}
	queue := []victim{top}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		p, err := process.NewProcess(int32(parent.pid))
		if err != nil {
			continue
		}
		kids, err := p.Children()
		if err != nil {
			continue
		}
		for _, k := range kids {
			kp := int(k.Pid)
			if seen[kp] || kp <= 1 || protected[kp] {
				continue
			}
			seen[kp] = true
			proc, gone := hold(kp)
			if gone {
				continue
			}
			ppid, perr := k.Ppid()
			ms, cerr := k.CreateTime()
			if perr != nil || cerr != nil || int(ppid) != parent.pid || proc.exited() || parent.proc.exited() {
				proc.release() // cannot be pinned as this parent's child: never signalled
				continue
			}
			v := victim{pid: kp, created: time.UnixMilli(ms), proc: proc}
			out = append(out, v)
			queue = append(queue, v)
		}
	}
	return out
}

// protectedPIDs is dispatchtop itself and every ancestor of it.
func protectedPIDs(self int) map[int]bool {
	out := map[int]bool{self: true, 0: true, 1: true}
	pid := self
	for i := 0; i < 1024 && pid > 1; i++ {
		p, err := process.NewProcess(int32(pid))
		if err != nil {
			break
		}
		pp, err := p.Ppid()
		if err != nil {
			break
		}
		pid = int(pp)
		out[pid] = true
	}
	return out
}

// alive reports whether v is still the same, unreaped-and-running process:
// the held process has not exited, or, held by its pid only, the pid's
// create time is still v's.
func alive(v victim) bool {
	if v.proc.pinned() {
		return !v.proc.exited()
	}
	p, err := process.NewProcess(int32(v.pid))
	if err != nil {
		return false
	}
	ms, err := p.CreateTime()
	if err != nil || liveness.TimeDistance(time.UnixMilli(ms), v.created) > 50*time.Millisecond {
		return false
	}
	if st, err := p.Status(); err == nil {
		for _, s := range st {
			if s == process.Zombie {
				return false // ended; its parent has yet to reap it
			}
		}
	}
	return true
}

// terminate sends SIGTERM to every victim still alive, waits up to grace for
// them to end, re-verifies each survivor's identity and SIGKILLs it. It
// returns the signals sent (for the journal) and how many needed SIGKILL.
// Each signal goes through the victim's hold: the process checked, or none.
func (e *Engine) terminate(ctx context.Context, victims []victim, grace time.Duration) ([]string, int, error) {
	var signals []string
	for _, v := range victims {
		if !alive(v) {
			continue
		}
		if err := e.step(fmt.Sprintf("kill:signal TERM %d", v.pid)); err != nil {
			return signals, 0, err
		}
		if err := v.proc.signal(v.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return signals, 0, fmt.Errorf("SIGTERM pid %d: %w", v.pid, err)
		}
		signals = append(signals, fmt.Sprintf("TERM %d", v.pid))
	}
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
wait:
	for anyAlive(victims) {
		select {
		case <-ctx.Done():
			// Interrupted during the grace: the operator gave up on this
			// kill, so no SIGKILL goes out that they did not wait for.
			return signals, 0, fmt.Errorf("interrupted after SIGTERM, before the grace ended: SIGKILL not sent: %w", ctx.Err())
		case <-deadline.C:
			break wait
		case <-tick.C:
		}
	}
	killed := 0
	for _, v := range victims {
		if !alive(v) { // re-verified: a pid reused meanwhile is left alone
			continue
		}
		if err := e.step(fmt.Sprintf("kill:signal KILL %d", v.pid)); err != nil {
			return signals, killed, err
		}
		if err := v.proc.signal(v.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return signals, killed, fmt.Errorf("SIGKILL pid %d: %w", v.pid, err)
		}
		signals = append(signals, fmt.Sprintf("KILL %d", v.pid))
		killed++
	}
	// SIGKILL cannot be caught, but on a loaded machine the kernel may take
	// a while to tear a big process down: wait for it before calling the
	// kill failed.
	for end := time.Now().Add(sigkillSettle); anyAlive(victims) && time.Now().Before(end); {
		time.Sleep(pollEvery)
	}
	for _, v := range victims {
		if alive(v) {
			return signals, killed, fmt.Errorf("pid %d survived SIGKILL", v.pid)
		}
	}
	return signals, killed, nil
}

func anyAlive(vs []victim) bool {
	for _, v := range vs {
		if alive(v) {
			return true
		}
	}
	return false
}

func pidList(vs []victim) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprint(v.pid)
	}
	if len(vs) == 1 {
		return "pid " + s[0]
	}
	return fmt.Sprintf("pid %s and descendants %s", s[0], strings.Join(s[1:], " "))
}
