package demo

// The demo's TeaParty job whose workers live in its bus: real agents with
// no heartbeat, known by their dispatch rows.

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources/teaparty/teapartytest"
)

// busFile is a job's bus, and workerStream the file whose mtime TeaParty's
// reader takes for a worker's activity.
const (
	busFile      = "messages.db"
	workerStream = "stream.jsonl"
)

// startBusJob writes the job's bus beside its lead's heartbeat (the lead
// is running by now, so the job's row is its lead's, never a node of its
// own), starts each worker as a plain agent in its session dir and records
// it in a dispatch row with its pid and create time. A worker that exits
// cleanly has its row closed, as its dispatcher closes it.
func (f *Fleet) startBusJob(job busJobSpec) error {
	jobDir := filepath.Join(f.dir, filepath.FromSlash(job.lead))
	busPath := filepath.Join(jobDir, busFile)
	db, err := teapartytest.Open(busPath, teapartytest.DDL)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer db.Close()
	now := epochSeconds(time.Now())
	if err := teapartytest.Insert(db, teapartytest.Conversation{ID: job.row, Type: "job", CreatedAt: now,
		Agent: "job-lead", Slug: job.project}); err != nil {
		return fmt.Errorf("demo: %s: %w", busPath, err)
	}
	for _, w := range job.workers {
		dir := w.dir(f.dir, job.lead)
		worktree := filepath.Join(dir, "worktree")
		if err := os.MkdirAll(worktree, 0o755); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		// The agent appends to its own stream each step; TeaParty's reader
		// looks for the worker's stream under TeaParty's name.
		if err := os.Symlink(".exec"+protocol.StreamSuffix, filepath.Join(dir, workerStream)); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		p, err := f.spawn(job.lead+"/tasks/"+w.sid, f.agentArgs(w.behave, w.after, dir))
		if err != nil {
			return err
		}
		pid := p.cmd.Process.Pid
		started, err := protocol.ProcessStarted(pid)
		if err != nil {
			return fmt.Errorf("demo: worker %s: %w", w.sid, err)
		}
		row := "dispatch:" + w.sid
		if err := teapartytest.Insert(db, teapartytest.Conversation{ID: row, Type: "dispatch", CreatedAt: now,
			Agent: w.role, Parent: job.row, Slug: job.project, Worktree: worktree, PID: pid, PIDStarted: started}); err != nil {
			return fmt.Errorf("demo: %s: %w", busPath, err)
		}
		if w.behave == BehaveComplete {
			f.bus.Add(1)
			go f.closeWhenDone(p, busPath, row)
		}
	}
	return nil
}

// closeWhenDone closes a worker's row once its agent exits cleanly; an
// agent the fleet's stop ends keeps its row.
func (f *Fleet) closeWhenDone(p *proc, busPath, row string) {
	defer f.bus.Done()
	select {
	case <-p.done:
	case <-f.quit:
		return
	}
	if !p.cmd.ProcessState.Success() {
		return
	}
	db, err := teapartytest.Open(busPath, nil)
	if err == nil {
		err = teapartytest.SetState(db, row, "closed")
		db.Close()
	}
	if err != nil {
		f.note(fmt.Sprintf("close %s in %s: %v", row, busPath, err))
	}
}

// note appends a line to the fleet's own log: what went wrong outside any
// process's output.
func (f *Fleet) note(line string) {
	log, err := os.OpenFile(filepath.Join(f.dir, logsDir, "fleet.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(log, "%s %s\n", time.Now().UTC().Format(time.RFC3339), line)
	log.Close()
}

// epochSeconds is t as TeaParty stores times: REAL seconds since the epoch.
func epochSeconds(t time.Time) float64 { return model.EpochSeconds(t) }
