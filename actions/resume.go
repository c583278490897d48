package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// resume re-dispatches a dead node (SPEC §5.2).
func (e *Engine) resume(_ context.Context, req Request, n *model.Node) (Result, error) {
	res := Result{Action: model.ActionResume, NodeID: n.ID, Root: n.Root, PID: n.PID()}
	// Every line of a forced resume says so, refusals and failures too.
	journal := func(res Result) error {
		return e.journalResult(req, res, func(j *JournalEntry) { j.Force = req.Force })
	}
	refused := func(msg string) (Result, error) {
		res = refuse(res, msg)
		return res, journal(res)
	}
	failed := func(err error) (Result, error) {
		res.Outcome, res.Message = OutcomeFailed, err.Error()
		return res, joinErrors(err, journal(res))
	}
	res.Checks = append(res.Checks, fmt.Sprintf("state %s", n.State))
	if n.State != model.StateDead {
		return refused(fmt.Sprintf("node %s is %s, not dead: %s", n.ID, n.State, n.Reason))
	}
	phase := ""
	if n.Cfa != nil {
		phase = n.Cfa.State
		res.Checks = append(res.Checks, fmt.Sprintf("cfa %s (%s)", n.Cfa.State, n.Cfa.Outcome()))
		if n.Cfa.Outcome() == model.OutcomeFailure {
			return refused(fmt.Sprintf("node %s: CfA state %s is a terminal failure, not retryable", n.ID, n.Cfa.State))
		}
	}
	rc, err := readRetryCount(n.InfraDir)
	if err != nil {
		return refused(err.Error())
	}
	budget := budgetLine(rc, phase)
	res.Checks = append(res.Checks, "budget "+budget)
	if spent := budgetSpent(rc, phase); spent != "" {
		if !req.Force {
			return refused(fmt.Sprintf("node %s: retry budget spent (%s); --force overrides", n.ID, spent))
		}
		res.Checks = append(res.Checks, "budget spent ("+spent+"): overridden by --force")
	}
	argv, err := expandArgv("resume.argv", e.opts.Config.Resume.Argv, n)
	if err != nil {
		return refused(err.Error())
	}
	if argv[0], err = resolveCommand("resume.argv", argv[0]); err != nil {
		return refused(err.Error())
	}
	dir, err := workDir(n)
	if err != nil {
		return refused(err.Error())
	}
	marker := filepath.Join(n.InfraDir, protocol.ResumePendingFile)
	since, pending, err := e.pendingSince(n, marker)
	if err != nil {
		return refused(fmt.Sprintf("node %s: %v: refused rather than guess whether a resume is pending", n.ID, err))
	}
	if pending {
		return refused(fmt.Sprintf("node %s: a resume is already pending since %s", n.ID, since.UTC().Format(time.RFC3339)))
	}
	res.Checks = append(res.Checks, "no resume pending")
	// Before any side effect: a beat since the lookup is known now, and
	// refused without claiming (and removing) the marker.
	if why := fileBeatSince(n); why != "" {
		return refused(why)
	}
	next := bumped(rc, phase)
	logPath := filepath.Join(n.InfraDir, protocol.ResumeLogFile)
	// Before the claim and the bump: the log is opened only after both.
	if err := protocol.CheckRegular(logPath); err != nil {
		return refused(fmt.Sprintf("node %s: %v: the command's output has nowhere to go", n.ID, err))
	}
	res.Plan = []string{
		fmt.Sprintf("create %s (O_EXCL: one resume at a time)", marker),
		fmt.Sprintf("bump %s: %s -> %s", filepath.Join(n.InfraDir, protocol.RetryCountFile), budgetLine(rc, phase), budgetLine(next, phase)),
		fmt.Sprintf("start %s detached, output to %s", quoteArgv(argv), logPath),
	}
	if ownsDir(n) {
		res.Plan[2] = fmt.Sprintf("start %s detached in %s (its session's cwd), output to %s", quoteArgv(argv), dir, logPath)
		res.Plan = append([]string{fmt.Sprintf("make %s, dispatchtop's own dir for the session (its store and its cwd are never written)", n.InfraDir)}, res.Plan...)
	}
	if req.Force {
		res.Plan = append(res.Plan, "forced: the retry budget is overridden")
	}
	if req.DryRun {
		res.Outcome = OutcomeDryRun
		res.Message = fmt.Sprintf("would resume %s: %s", n.ID, quoteArgv(argv))
		return res, nil
	}

	// The directory lock makes check-expired-then-replace one step against
	// claimants on this host; O_EXCL stays the guard across hosts.
	if err := e.makeOwnDir(n); err != nil {
		return refused(err.Error())
	}
	unlock, err := lockDir(n.InfraDir)
	if err != nil {
		return failed(err)
	}
	defer unlock()
	won, since, ours, err := e.claimPending(n, marker)
	if err != nil {
		return failed(err)
	}
	if !won {
		return refused(fmt.Sprintf("node %s: a resume is already pending since %s", n.ID, since.UTC().Format(time.RFC3339)))
	}
	// The marker is ours, but the node was judged dead from what the lookup
	// read: had another resume taken since (its agent beat, which expires
	// that resume's marker), this one would dispatch a second agent.
	if why := e.beatSince(req, n); why != "" {
		removeOwnMarker(marker, ours)
		return refused(why)
	}
	res.Checks = append(res.Checks, "beat unchanged since read as dead")
	if err := e.step("resume:claimed"); err != nil {
		return res, err
	}
	// Re-read under the marker: another resume may have bumped it before
	// ours won, and the count must not go backwards.
	if cur, err := readRetryCount(n.InfraDir); err == nil {
		next = bumped(cur, phase)
	}
	if err := writeRetryCount(n.InfraDir, next); err != nil {
		// Nothing was dispatched: let the next resume try at once.
		removeOwnMarker(marker, ours)
		return failed(err)
	}
	if err := e.step("resume:bumped"); err != nil {
		return res, err
	}
	pid, err := startDetached(argv, dir, logPath)
	if err != nil {
		removeOwnMarker(marker, ours)
		return failed(err)
	}
	res.Outcome = OutcomeDone
	res.Message = fmt.Sprintf("resumed %s: started pid %d (%s), retries %s", n.ID, pid, quoteArgv(argv), budgetLine(next, phase))
	if req.Force {
		res.Message += "; retry budget overridden by --force"
	}
	return res, journal(res)
}

func readRetryCount(infra string) (model.RetryCount, error) {
	path := filepath.Join(infra, protocol.RetryCountFile)
	b, err := protocol.ReadFile(path, protocol.MaxDocumentSize)
	if errors.Is(err, os.ErrNotExist) {
		return model.RetryCount{}, nil
	}
	if err != nil {
		return model.RetryCount{}, err // it names the path
	}
	rc, err := protocol.ParseRetryCount(b)
	if err != nil {
		return model.RetryCount{}, fmt.Errorf("%s does not parse (%v): refused rather than reset the budget", path, err)
	}
	return rc, nil
}

func writeRetryCount(infra string, rc model.RetryCount) error {
	path := filepath.Join(infra, protocol.RetryCountFile)
	b, err := json.Marshal(rc)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return protocol.WriteFileAtomic(path, append(b, '\n')) // its error names the path
}

func bumped(rc model.RetryCount, phase string) model.RetryCount {
	next := model.RetryCount{Total: rc.Total + 1, ByPhase: map[string]int{}}
	for k, v := range rc.ByPhase {
		next.ByPhase[k] = v
	}
	if phase != "" {
		next.ByPhase[phase]++
	}
	return next
}

func budgetLine(rc model.RetryCount, phase string) string {
	s := fmt.Sprintf("total %d/%d", rc.Total, model.RetriesPerNode)
	if phase != "" {
		s += fmt.Sprintf(", %s %d/%d", phase, rc.ByPhase[phase], model.RetriesPerState)
	}
	return s
}

// budgetSpent says which budget is spent, or "".
func budgetSpent(rc model.RetryCount, phase string) string {
	if rc.Total >= model.RetriesPerNode {
		return fmt.Sprintf("%d of %d per node", rc.Total, model.RetriesPerNode)
	}
	if phase != "" && rc.ByPhase[phase] >= model.RetriesPerState {
		return fmt.Sprintf("%d of %d in %s", rc.ByPhase[phase], model.RetriesPerState, phase)
	}
	return ""
}

// pendingSince reports whether a live resume marker exists: it exists, the
// node has not beaten since it was written, and it is younger than stale.
// Anything but a regular file there is an error: not ours to judge, nor to
// move aside.
func (e *Engine) pendingSince(n *model.Node, marker string) (time.Time, bool, error) {
	if err := protocol.CheckRegular(marker); err != nil {
		return time.Time{}, false, err
	}
	st, err := os.Stat(marker)
	if err != nil {
		return time.Time{}, false, nil
	}
	since, live := e.markerLive(n, marker, st)
	return since, live, nil
}

func (e *Engine) markerLive(n *model.Node, marker string, st os.FileInfo) (time.Time, bool) {
	written := st.ModTime()
	since := written
	if b, err := protocol.ReadFile(marker, protocol.MaxDocumentSize); err == nil {
		if m, err := protocol.ParseResumePending(b); err == nil && !m.Time.IsZero() {
			since = m.Time
		}
	}
	if e.now().Sub(written) >= e.thresholds().Stale {
		return since, false
	}
	if beat, ok := lastBeat(n); ok && beat.After(written) {
		return since, false // the node beat since: the resume took
	}
	return since, true
}

// lastBeat is the node's newest beat: its dir's heartbeat as it is now, or
// for a store's record, the beat its store gave the lookup.
func lastBeat(n *model.Node) (time.Time, bool) {
	if !isNative(n) {
		return n.BeatMtime, !n.BeatMtime.IsZero()
	}
	hb, err := os.Stat(filepath.Join(n.InfraDir, protocol.HeartbeatFile))
	if err != nil {
		return time.Time{}, false
	}
	return hb.ModTime(), true
}

// claimPending creates the marker with O_EXCL. An expired marker is moved
// aside and the claim retried; only one claimant can move a given marker,
// and one that moved a marker it did not judge (a fresh one, created
// meanwhile) puts it back and loses. A win returns the marker as created,
// so that only that file is ever removed again; a loss, since when the
// live marker is pending.
func (e *Engine) claimPending(n *model.Node, marker string) (bool, time.Time, os.FileInfo, error) {
	body, err := json.Marshal(model.ResumePending{PID: e.self, Time: e.now().UTC(), User: currentUser()})
	if err != nil {
		return false, time.Time{}, nil, fmt.Errorf("encode %s: %w", marker, err)
	}
	for attempt := 0; attempt < 3; attempt++ {
		f, err := os.OpenFile(marker, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, werr := f.Write(append(body, '\n'))
			st, serr := f.Stat()
			cerr := f.Close()
			if werr != nil || serr != nil || cerr != nil {
				_ = os.Remove(marker)
				return false, time.Time{}, nil, fmt.Errorf("write %s: %w", marker, joinErrors(werr, serr, cerr))
			}
			return true, time.Time{}, st, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return false, time.Time{}, nil, fmt.Errorf("create %s: %w", marker, err)
		}
		if err := protocol.CheckRegular(marker); err != nil {
			return false, time.Time{}, nil, err
		}
		st, err := os.Stat(marker)
		if err != nil {
			continue // removed meanwhile: try again
		}
		if since, live := e.markerLive(n, marker, st); live {
			return false, since, nil, nil
		}
		aside := fmt.Sprintf("%s.expired-%d-%d", marker, e.self, time.Now().UnixNano())
		if err := os.Rename(marker, aside); err != nil {
			continue // another claimant moved it first
		}
		moved, err := os.Stat(aside)
		if err == nil && !os.SameFile(moved, st) {
			// Not the marker we judged expired: restore it and lose.
			_ = os.Link(aside, marker)
			_ = os.Remove(aside)
			since, _ := e.markerLive(n, marker, moved)
			return false, since, nil, nil
		}
		_ = os.Remove(aside)
	}
	return false, e.now(), nil, nil
}

// removeOwnMarker removes the marker we created (ours), and only that one.
func removeOwnMarker(marker string, ours os.FileInfo) {
	if st, err := os.Stat(marker); err == nil && os.SameFile(st, ours) {
		_ = os.Remove(marker)
	}
}

// beatSince says how the node's beat differs from what the lookup read
// and judged dead, or "" when it is as it was: a native node's beat file,
// stat'ed again; a record of another source, read again through its store
// (its HeartbeatPath is the record's key, `<db>#<id>`, not a file).
func (e *Engine) beatSince(req Request, n *model.Node) string {
	if isNative(n) {
		return fileBeatSince(n)
	}
	_, fresh, err := e.locate(n.ID, req.scope)
	if err != nil {
		return fmt.Sprintf("node %s: its %s record could not be read again (%v): read it again", n.ID, sourceName(n), err)
	}
	if !fresh.BeatMtime.Equal(n.BeatMtime) || fresh.State != model.StateDead {
		return fmt.Sprintf("node %s beat since it was read as dead (its %s record now %s, beat %s; read at %s): another resume may have taken; read it again",
			n.ID, sourceName(n), fresh.State, fresh.BeatMtime.UTC().Format(time.RFC3339Nano), n.BeatMtime.UTC().Format(time.RFC3339Nano))
	}
	return ""
}

// fileBeatSince is beatSince for a node whose beat is a file: its stat now
// against what the lookup read. A store's record has no such file ("").
func fileBeatSince(n *model.Node) string {
	if !isNative(n) {
		return ""
	}
	path := n.HeartbeatPath
	if !n.HasHeartbeat {
		if !n.Legacy {
			return ""
		}
		path = filepath.Join(n.InfraDir, protocol.RunningFile)
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Sprintf("node %s: %s is gone since the node was read as dead: read it again", n.ID, path)
	}
	if !st.ModTime().Equal(n.BeatMtime) || n.HeartbeatRaw() != nil && st.Size() != int64(len(n.HeartbeatRaw())) {
		return fmt.Sprintf("node %s beat since it was read as dead (%s now %s, %d bytes; read at %s): another resume may have taken; read it again",
			n.ID, path, st.ModTime().UTC().Format(time.RFC3339Nano), st.Size(), n.BeatMtime.UTC().Format(time.RFC3339Nano))
	}
	return ""
}

// startDetached starts argv in its own session, stdin from /dev/null and
// output appended to logPath, and does not wait for it; a goroutine reaps it
// should it end while we still run.
func startDetached(argv []string, dir, logPath string) (int, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", os.DevNull, err)
	}
	defer devnull.Close()
	// O_NOFOLLOW: a log planted as a symlink must not redirect output.
	logf, err := protocol.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", argv[0], err)
	}
	pid := cmd.Process.Pid
	go func() { _ = cmd.Wait() }()
	return pid, nil
}
