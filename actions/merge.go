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

// merge runs the configured merge command for a node whose work succeeded
// and whose parent no longer runs, then marks it merged (SPEC §5.4).
func (e *Engine) merge(ctx context.Context, req Request, n *model.Node) (Result, error) {
	res := Result{Action: model.ActionMerge, NodeID: n.ID, Root: n.Root, PID: n.PID()}
	refused := func(msg string) (Result, error) { return e.refused(req, res, msg) }
	success := n.Status() == model.StatusCompleted
	if n.Cfa != nil {
		res.Checks = append(res.Checks, fmt.Sprintf("cfa %s (%s)", n.Cfa.State, n.Cfa.Outcome()))
		success = success || n.Cfa.Outcome() == model.OutcomeSuccess
	}
	res.Checks = append(res.Checks, fmt.Sprintf("state %s, status %q", n.State, n.Status()))
	if !success {
		return refused(fmt.Sprintf("node %s has not succeeded (needs CfA DONE/COMPLETED_WORK or heartbeat completed)", n.ID))
	}
	if n.State == model.StateRunning {
		return refused(fmt.Sprintf("node %s is still running: merge waits until it ends", n.ID))
	}
	if p := n.Parent; p != nil {
		res.Checks = append(res.Checks, fmt.Sprintf("parent %s %s", p.ID, p.State))
		if p.State == model.StateRunning {
			return refused(fmt.Sprintf("parent %s is running: it owns the merge of %s", p.ID, n.ID))
		}
	}
	marker := filepath.Join(n.InfraDir, protocol.MergedFile)
	if _, err := os.Lstat(marker); err == nil {
		return refused(fmt.Sprintf("node %s is already merged (%s exists)", n.ID, marker))
	}
	argv, err := expandArgv("merge.argv", e.opts.Config.Merge.Argv, n)
	if err != nil {
		return refused(err.Error())
	}
	if argv[0], err = resolveCommand("merge.argv", argv[0]); err != nil {
		return refused(err.Error())
	}
	logPath := filepath.Join(n.InfraDir, protocol.MergeLogFile)
	res.Plan = []string{
		fmt.Sprintf("run %s and wait, output to %s", quoteArgv(argv), logPath),
		fmt.Sprintf("on success write %s", marker),
	}
	if req.DryRun {
		res.Outcome = OutcomeDryRun
		res.Message = fmt.Sprintf("would merge %s: %s", n.ID, quoteArgv(argv))
		return res, nil
	}
	// Two dashboards merging at once: the second waits here and then finds
	// the marker the first wrote.
	unlock, err := lockDir(n.InfraDir)
	if err != nil {
		res.Outcome, res.Message = OutcomeFailed, fmt.Sprintf("merge %s: %v", n.ID, err)
		return res, joinErrors(err, e.journalResult(req, res, nil))
	}
	defer unlock()
	if _, err := os.Lstat(marker); err == nil {
		return refused(fmt.Sprintf("node %s is already merged (%s exists)", n.ID, marker))
	}
	if err := runLogged(ctx, argv, n.InfraDir, logPath); err != nil {
		res.Outcome, res.Message = OutcomeFailed, fmt.Sprintf("merge %s: %v (see %s)", n.ID, err, logPath)
		return res, joinErrors(errors.New(res.Message), e.journalResult(req, res, nil))
	}
	if err := e.step("merge:ran"); err != nil {
		return res, err
	}
	body, _ := json.Marshal(struct {
		Time time.Time `json:"time"`
		User string    `json:"user"`
		Argv []string  `json:"argv"`
	}{e.now().UTC(), currentUser(), argv})
	if err := protocol.WriteFileAtomic(marker, append(body, '\n')); err != nil {
		res.Outcome, res.Message = OutcomeFailed, fmt.Sprintf("merge %s ran, but writing %s failed: %v", n.ID, marker, err)
		return res, joinErrors(errors.New(res.Message), e.journalResult(req, res, nil))
	}
	res.Outcome = OutcomeDone
	res.Message = fmt.Sprintf("merged %s: %s", n.ID, quoteArgv(argv))
	return res, e.journalResult(req, res, nil)
}

// runLogged runs argv in dir without a shell, output appended to logPath,
// and waits for it.
func runLogged(ctx context.Context, argv []string, dir, logPath string) error {
	// O_NOFOLLOW: a log planted as a symlink must not redirect output.
	logf, err := protocol.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return fmt.Errorf("open %s: %w", os.DevNull, err)
	}
	defer devnull.Close()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	return nil
}
