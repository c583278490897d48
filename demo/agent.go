package demo

// The simulated agent: what `dispatchtop demo-agent` runs under wrap.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/wrap"
)

// Behaviours a simulated agent can have.
const (
	BehaveWork     = "work"     // work until stopped
	BehaveComplete = "complete" // work, then CfA DONE and exit 0
	BehaveWithdraw = "withdraw" // work, then CfA WITHDRAWN and exit 3
	BehaveCrash    = "crash"    // work, then die by SIGKILL (no clean exit)
	BehaveBlock    = "block"    // work, then ask a human (blocked.json) and wait
	BehavePause    = "pause"    // work, then report `paused` in the heartbeat
	BehaveLegacy   = "legacy"   // an old writer: a `.running` sentinel, no heartbeat
)

// Behaviours lists every behaviour, for the command's help.
func Behaviours() []string {
	return []string{BehaveWork, BehaveComplete, BehaveWithdraw, BehaveCrash, BehaveBlock, BehavePause, BehaveLegacy}
}

// Exit codes of a simulated agent.
const (
	ExitWithdrawn = 3
	// ExitLeashed is the code of an agent that stopped because its demo
	// ended: the code of a SIGTERM, since that is what it stands for.
	ExitLeashed = 143
)

// AgentOptions configure one simulated agent.
type AgentOptions struct {
	Behave string
	// After is when the behaviour's event happens (completion, crash, ...).
	After time.Duration
	// Infra is the agent's infra dir; "" means $DISPATCHTOP_INFRA (set by wrap).
	Infra string
	// Heartbeat is the agent's heartbeat; "" means $DISPATCHTOP_HEARTBEAT.
	Heartbeat string
	// Leash is a file whose removal ends the agent; LeashPID a process whose
	// death does. Either keeps a demo from leaving agents behind, even those
	// a resume started, which the demo did not start itself.
	Leash    string
	LeashPID int
	// Tick is the agent's work step (default 1s).
	Tick time.Duration
}

// RunAgent runs a simulated agent until its behaviour ends it, the leash is
// released or ctx is done, and returns the process exit code.
func RunAgent(ctx context.Context, o AgentOptions) (int, error) {
	if o.Infra == "" {
		o.Infra = os.Getenv(wrap.EnvInfra)
	}
	if o.Heartbeat == "" {
		o.Heartbeat = os.Getenv(wrap.EnvHeartbeat)
	}
	if o.Infra == "" {
		return 2, errors.New("demo-agent: no infra dir (--infra, or run it under wrap)")
	}
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
	if err := os.MkdirAll(o.Infra, 0o755); err != nil {
		return 1, fmt.Errorf("demo-agent: %w", err)
	}
	// A detail from the start: the file says "history": null until there is one.
	a := &agent{o: o, cfa: model.CfaState{TaskID: filepath.Base(o.Infra), CfaDetail: new(model.CfaDetail)}}
	a.resumeCfa()
	if o.Behave == BehaveLegacy {
		sentinel := filepath.Join(o.Infra, protocol.RunningFile)
		if err := os.WriteFile(sentinel, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			return 1, fmt.Errorf("demo-agent: %w", err)
		}
	}
	if !slices.Contains(Behaviours(), o.Behave) {
		return 2, fmt.Errorf("demo-agent: unknown behaviour %q", o.Behave)
	}
	return a.run(ctx)
}

type agent struct {
	o    AgentOptions
	cfa  model.CfaState
	step int
}

// phase is the CfA phase of a working agent at a step: one phase per tick,
// staying in the last.
func phase(step int) string {
	phases := [...]string{"INTENT", "PLAN", "EXECUTE"}
	return phases[min(step, len(phases)-1)]
}

func (a *agent) run(ctx context.Context) (int, error) {
	tick := time.NewTicker(a.o.Tick)
	defer tick.Stop()
	leash := time.NewTicker(250 * time.Millisecond)
	defer leash.Stop()
	var event <-chan time.Time
	if a.o.Behave != BehaveWork && a.o.Behave != BehaveLegacy {
		event = time.After(a.o.After)
	}
	if a.o.Behave != BehaveLegacy {
		if err := a.work(); err != nil {
			return 1, err
		}
	}
	for {
		select {
		case <-ctx.Done():
			return ExitLeashed, nil
		case <-leash.C:
			if a.leashReleased() {
				return ExitLeashed, nil
			}
		case <-tick.C:
			if a.o.Behave == BehaveLegacy {
				continue
			}
			if err := a.work(); err != nil {
				return 1, err
			}
		case <-event:
			event = nil
			code, done, err := a.happen()
			if err != nil || done {
				return code, err
			}
		}
	}
}

func (a *agent) leashReleased() bool { return leashReleased(a.o.Leash, a.o.LeashPID) }

// leashReleased reports whether a demo process's leash is released: the
// leash file removed, or the process holding it gone.
func leashReleased(leash string, pid int) bool {
	if leash != "" {
		if _, err := os.Stat(leash); errors.Is(err, os.ErrNotExist) {
			return true
		}
	}
	if pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	return false
}

// resumeCfa picks up the CfA state a previous incarnation left (a resumed
// dispatch continues its history rather than starting over).
func (a *agent) resumeCfa() {
	data, err := protocol.ReadFile(filepath.Join(a.o.Infra, protocol.CfaFile), protocol.MaxDocumentSize)
	if err != nil {
		return
	}
	prev, err := protocol.ParseCfa(data)
	if err != nil || prev.Outcome() != model.OutcomeWorking {
		return
	}
	a.cfa = prev
	if a.cfa.CfaDetail == nil {
		a.cfa.CfaDetail = new(model.CfaDetail) // the file says "history": null, as before
	}
	for a.step < 3 && phase(a.step) != prev.State {
		a.step++
	}
}

// work is one step: advance the CfA phase and append to the event stream.
func (a *agent) work() error {
	now := phase(a.step)
	a.step++
	if a.cfa.State != now {
		a.setCfa(now)
		if err := a.writeCfa(); err != nil {
			return err
		}
	}
	line, _ := json.Marshal(map[string]any{"ts": time.Now().UTC().Format(time.RFC3339Nano), "phase": now, "step": a.step})
	stream := filepath.Join(a.o.Infra, ".exec"+protocol.StreamSuffix)
	f, err := os.OpenFile(stream, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("demo-agent: %w", err)
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("demo-agent: write %s: %w", stream, err)
	}
	return nil
}

func (a *agent) setCfa(state string) {
	entry, _ := json.Marshal(map[string]any{"state": state, "at": time.Now().UTC().Format(time.RFC3339)})
	if a.cfa.CfaDetail == nil {
		a.cfa.CfaDetail = new(model.CfaDetail)
	}
	a.cfa.History = append(a.cfa.History, entry)
	a.cfa.State = state
}

func (a *agent) writeCfa() error {
	data, err := json.Marshal(a.cfa)
	if err != nil {
		return fmt.Errorf("demo-agent: encode CfA state: %w", err)
	}
	path := filepath.Join(a.o.Infra, protocol.CfaFile)
	if err := protocol.WriteFileAtomic(path, append(data, '\n')); err != nil {
		return fmt.Errorf("demo-agent: %w", err)
	}
	return nil
}

// happen carries out the behaviour's event; done says the agent ends.
func (a *agent) happen() (code int, done bool, err error) {
	switch a.o.Behave {
	case BehaveComplete:
		a.setCfa("DONE")
		return 0, true, a.writeCfa()
	case BehaveWithdraw:
		a.setCfa("WITHDRAWN")
		return ExitWithdrawn, true, a.writeCfa()
	case BehaveCrash:
		// No cleanup, no exit code of its own choosing: a crash.
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		return 128 + int(syscall.SIGKILL), true, nil
	case BehaveBlock:
		blocked, _ := json.Marshal(model.Blocked{
			Question: "The migration drops a column that reports still read. Proceed?",
			Context:  "schema v41 -> v42",
			Kind:     "approval",
		})
		path := filepath.Join(a.o.Infra, protocol.BlockedFile)
		if err := protocol.WriteFileAtomic(path, append(blocked, '\n')); err != nil {
			return 1, true, fmt.Errorf("demo-agent: %w", err)
		}
	case BehavePause:
		if a.o.Heartbeat == "" {
			return 1, true, errors.New("demo-agent: pause needs a heartbeat (run it under wrap)")
		}
		if err := protocol.SetHeartbeatStatus(a.o.Heartbeat, model.StatusPaused); err != nil {
			return 1, true, fmt.Errorf("demo-agent: %w", err)
		}
	}
	return 0, false, nil
}

// RunMerge is the demo's merge command: it records that id was merged by
// appending one line to logPath, and returns the line.
func RunMerge(logPath, id, infra string) (string, error) {
	line := fmt.Sprintf("%s merged %s (%s)", time.Now().UTC().Format(time.RFC3339), id, infra)
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return "", fmt.Errorf("demo-merge: %w", err)
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("demo-merge: write %s: %w", logPath, err)
	}
	return line, nil
}
