package middle

// middle records no pid: each agent is the pane command of a tmux session
// (`tmux.ts` `newSession`), on the default tmux server of the daemon's
// user, and middle judges it alive by `tmux list-panes`. The pane's pid is
// the agent's, so a row that owns a live session gets that pid and its
// create time, and the classifier judges it as it judges a heartbeat's.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dispatchtop/dispatchtop/protocol"
)

// DefaultTmuxTimeout bounds one call to tmux: a server that does not answer
// costs a read this much, and its rows are judged by their beat.
const DefaultTmuxTimeout = 2 * time.Second

// Tmux asks one tmux server for its sessions' panes.
type Tmux struct {
	// Socket is the server's socket name (`tmux -L`); "" is the user's
	// default server, the one middle's daemon starts its sessions on.
	Socket string
	// Timeout bounds the call (0: DefaultTmuxTimeout).
	Timeout time.Duration
}

// PanePIDs lists every session of the server with the pid of its first
// live pane, in one call (`tmux list-panes -a`); a session whose panes
// have all exited (remain-on-exit) maps to 0. An error says why the server
// could not be asked: no tmux, no server, no answer in time.
func (t Tmux) PanePIDs() (map[string]int, error) {
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultTmuxTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var args []string
	if t.Socket != "" {
		args = append(args, "-L", t.Socket)
	}
	// The pid first: a session name may hold spaces, a pid never does.
	args = append(args, "list-panes", "-a", "-F", "#{pane_pid} #{pane_dead} #{session_name}")
	cmd := exec.CommandContext(ctx, "tmux", args...)
	// Inside a tmux client, $TMUX names that client's server; without it
	// tmux asks the user's default server, as middle's daemon does.
	cmd.Env = withoutEnv(os.Environ(), "TMUX")
	cmd.WaitDelay = timeout
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("tmux list-panes: no answer within %s", timeout)
	case errors.Is(err, exec.ErrNotFound):
		return nil, errors.New("tmux list-panes: no tmux on PATH")
	case err != nil:
		// "no server running on …", "error connecting to …".
		if msg := firstLine(stderr.String()); msg != "" {
			return nil, fmt.Errorf("tmux list-panes: %s", msg)
		}
		return nil, fmt.Errorf("tmux list-panes: %w", err)
	}
	return parsePanes(stdout.String()), nil
}

// parsePanes reads list-panes lines "<pid> <dead> <session>", in the order
// tmux lists them (window, then pane index); a line it cannot read is
// skipped.
func parsePanes(out string) map[string]int {
	panes := map[string]int{}
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\r\n")
		pidText, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		dead, name, ok := strings.Cut(rest, " ")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || name == "" {
			continue
		}
		if panes[name] != 0 {
			continue // the first live pane is the agent's
		}
		if dead == "1" {
			pid = 0
		}
		panes[name] = pid
	}
	return panes
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(line)
}

func withoutEnv(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	return out
}

// DefaultPaneTTL is how long one answer of tmux serves: the watcher's
// tick, the cadence its pid checks run at. A watcher reads the store again
// after every write to it, and a busy store is written many times a
// second; middle itself looks at its sessions every 5 s at the most often.
const DefaultPaneTTL = time.Second

// paneCache holds tmux's last answer (or why it had none) and when it
// was asked.
type paneCache struct {
	mu    sync.Mutex
	asked time.Time
	pids  map[string]int
	err   error
}

// pane is what a row learns from tmux: the pid and create time of its
// session's agent, or a note saying why it has none.
type pane struct {
	pid     int
	started float64
	note    string
	// unseen: tmux could not be asked, so whether the agent runs is not
	// known (not: it runs no process).
	unseen bool
}

// sessionOwners are the rows that may claim their session: only the
// newest row with a session name (names are reused by every round of an
// Epic), and only while it is launching or running (every drive kills its
// session at the end).
func sessionOwners(rows []*workflow) []*workflow {
	newest := map[string]*workflow{}
	for _, w := range rows { // ordered by created_at, rowid
		if w.session.Valid && w.session.String != "" {
			newest[w.session.String] = w
		}
	}
	var owners []*workflow
	for _, w := range rows {
		if newest[w.session.String] == w && (w.state == "launching" || w.state == "running") {
			owners = append(owners, w)
		}
	}
	return owners
}

// panes asks tmux once for every owning row's pane; nil when no row owns
// a session. An answer younger than PaneTTL serves the read instead when
// it gives every owner a live pane (see cachedPanes).
func (s *Source) panes(rows []*workflow) map[*workflow]pane {
	owners := sessionOwners(rows)
	if len(owners) == 0 {
		return nil
	}
	lookup, started := s.PaneLookup, s.ProcessStarted
	if lookup == nil {
		lookup = Tmux{}.PanePIDs
	}
	if started == nil {
		started = protocol.ProcessStarted
	}
	ttl, clock := s.PaneTTL, s.clock
	if ttl <= 0 {
		ttl = DefaultPaneTTL
	}
	if clock == nil {
		clock = time.Now
	}
	// Reads side by side wait for one answer: the lock is held while
	// tmux is asked.
	c := &s.panesAsked
	c.mu.Lock()
	defer c.mu.Unlock()
	now := clock()
	if age := now.Sub(c.asked); !c.asked.IsZero() && age >= 0 && age < ttl && c.err == nil {
		if out, allLive := ownersPanes(owners, c.pids, nil, started); allLive {
			return out
		}
	}
	c.pids, c.err = lookup()
	c.asked = now
	out, _ := ownersPanes(owners, c.pids, c.err, started)
	return out
}

// ownersPanes is what tmux's answer (pids, or err) says of each owner's
// pane; allLive reports whether it gives every one of them a pid whose
// process is there now. Only such an answer serves again: a session it
// lacks, or one whose pane's process is gone, may be the next round's,
// started since, and the store is read again only when it is written.
func ownersPanes(owners []*workflow, pids map[string]int, err error, started func(int) (float64, error)) (out map[*workflow]pane, allLive bool) {
	out = make(map[*workflow]pane, len(owners))
	allLive = err == nil
	for _, w := range owners {
		name := w.session.String
		pid, listed := pids[name]
		switch {
		case err != nil:
			out[w] = pane{note: err.Error(), unseen: true}
		case !listed:
			out[w] = pane{note: "session " + name + " gone"}
			allLive = false
		case pid <= 0:
			out[w] = pane{note: "session " + name + " has no live pane"}
			allLive = false
		default:
			st, err := started(pid)
			if err != nil {
				// Gone between the two questions, or unreadable: no pid
				// is better than one that cannot be told from a reuse.
				out[w] = pane{note: "pane pid " + strconv.Itoa(pid) + ": " + err.Error()}
				allLive = false
				continue
			}
			out[w] = pane{pid: pid, started: st}
		}
	}
	return out, allLive
}
