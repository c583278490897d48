package middle

// middle records no pid: each agent is the pane command of a tmux session
// (`tmux.ts` `newSession`), on the default tmux server of the daemon's
// user, and middle judges it alive by `tmux list-panes`. The pane's pid is
// the agent's, so a row that owns a live session gets that pid and its
// create time, and the classifier judges it as it judges a heartbeat's.
//
// The pane's create time is read from the pane itself, so it cannot tell
// middle's session from any other: a row is trusted with a session only
// when its name is the one middle gives that row's run (sessionNameFor)
// and the session was created after the row, as middle creates it.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources/internal/tmuxpanes"
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

// Session is what tmux lists of one session.
type Session struct {
	// PanePID is the pid of its first live pane; 0 when its panes have
	// all exited (remain-on-exit).
	PanePID int
	// Created is when the session was created (to the second).
	Created time.Time
}

// Sessions lists every session of the server with the pid of its first
// live pane and its creation time, in one call (`tmux list-panes -a`). An
// error says why the server could not be asked: no tmux, no server, no
// answer in time.
func (t Tmux) Sessions() (map[string]Session, error) {
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultTmuxTimeout
	}
	// The numbers first: a session name may hold spaces, they never do.
	// Without $TMUX (tmuxpanes drops it) tmux asks the user's default
	// server, as middle's daemon does, even from inside a tmux client.
	out, err := tmuxpanes.ListPanes(tmuxpanes.Server{Name: t.Socket}, "#{pane_pid} #{pane_dead} #{session_created} #{session_name}", timeout)
	if err != nil {
		return nil, err
	}
	return parseSessions(out), nil
}

// parseSessions reads list-panes lines "<pid> <dead> <created> <session>",
// in the order tmux lists them (window, then pane index); a line it cannot
// read is skipped.
func parseSessions(out string) map[string]Session {
	sessions := map[string]Session{}
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\r\n")
		f := strings.SplitN(line, " ", 4)
		if len(f) < 4 || f[3] == "" {
			continue
		}
		pid, perr := strconv.Atoi(f[0])
		created, cerr := strconv.ParseInt(f[2], 10, 64)
		if perr != nil || cerr != nil || pid <= 0 || created <= 0 {
			continue
		}
		name := f[3]
		if s, ok := sessions[name]; ok && s.PanePID != 0 {
			continue // the first live pane is the agent's
		}
		if f[1] == "1" {
			pid = 0
		}
		sessions[name] = Session{PanePID: pid, Created: time.Unix(created, 0)}
	}
	return sessions
}

// sessionName is the tmux session middle names for w's run, as tmux
// stores it; ok is false when middle names none for it (an implementation
// with no Epic, a kind it does not launch). The recommender's and the docs
// bot's end in a hash of the repo that is not recomputed here (Bun.hash):
// hashed is then the name's prefix, to be followed by 1-8 hex digits.
// (`implementation.ts`, `recommender.ts`, `documentation.ts` `sessionNameFor`.)
func sessionName(w *workflow) (name string, hashed, ok bool) {
	slug := nonSlug.ReplaceAllString(w.repo, "-")
	switch w.kind {
	case "implementation":
		ref := epic(w)
		if ref == "" {
			return "", false, false
		}
		return tmuxName("middle-" + slug + "-" + ref), false, true
	case "recommender":
		return tmuxName("middle-rec-" + slug + "-"), true, true
	case "documentation":
		return tmuxName("middle-docs-" + slug + "-"), true, true
	}
	return "", false, false
}

// nonSlug is what middle's repo slug replaces with '-'.
var nonSlug = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// repoHash is the hash a recommender's or docs bot's session name ends in:
// Bun.hash(repo).toString(16).slice(0, 8).
var repoHash = regexp.MustCompile(`^[0-9a-f]{1,8}$`)

// tmuxName is a session name as tmux keeps it: ':' and '.' become '_'
// (tmux's session_check_name).
func tmuxName(s string) string {
	return strings.NewReplacer(":", "_", ".", "_").Replace(s)
}

// middlesSession says why the session w names is not one middle would
// have made for w's run ("" when it may be): its name is not the one
// middle gives that run, or it was created before the row (middle creates
// it on each drive, after the row is written: a session older than the
// row is someone else's).
func middlesSession(w *workflow, listed Session) string {
	name := w.session.String
	want, hashed, ok := sessionName(w)
	switch {
	case !ok && w.kind == "implementation":
		return fmt.Sprintf("session %s: middle names no session for an implementation without an Epic", name)
	case !ok:
		return fmt.Sprintf("session %s: middle names no session for a run of kind %q", name, w.kind)
	case hashed && !(strings.HasPrefix(tmuxName(name), want) && repoHash.MatchString(strings.TrimPrefix(tmuxName(name), want))):
		return fmt.Sprintf("session %s is not the name middle gives a %s of %s (%s<hash>): not its agent", name, w.kind, w.repo, want)
	case !hashed && tmuxName(name) != want:
		return fmt.Sprintf("session %s is not the name middle gives %s's Epic %s (%s): not its agent", name, w.repo, epic(w), want)
	case listed.Created.Before(time.UnixMilli(w.created).Truncate(time.Second)):
		return fmt.Sprintf("session %s was created %s, before the row (%s): not its agent", name,
			listed.Created.UTC().Format(time.RFC3339), time.UnixMilli(w.created).UTC().Format(time.RFC3339))
	}
	return ""
}

// DefaultPaneTTL is how long one answer of tmux serves: the watcher's
// tick, the cadence its pid checks run at. A watcher reads the store again
// after every write to it, and a busy store is written many times a
// second; middle itself looks at its sessions every 5 s at the most often.
const DefaultPaneTTL = time.Second

// paneCache holds tmux's last answer (or why it had none) and when it
// was asked.
type paneCache struct {
	mu       sync.Mutex
	asked    time.Time
	sessions map[string]Session
	err      error
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
		lookup = Tmux{}.Sessions
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
		if out, allLive := ownersPanes(owners, c.sessions, nil, started); allLive {
			return out
		}
	}
	c.sessions, c.err = lookup()
	c.asked = now
	out, _ := ownersPanes(owners, c.sessions, c.err, started)
	return out
}

// ownersPanes is what tmux's answer (pids, or err) says of each owner's
// pane; allLive reports whether it gives every one of them a pid whose
// process is there now. Only such an answer serves again: a session it
// lacks, or one whose pane's process is gone, may be the next round's,
// started since, and the store is read again only when it is written.
//
// A session that is not one middle would have made for the row (its name,
// its creation time: middlesSession), or a pane whose process is older
// than the row, gives no pid: the process is someone else's.
func ownersPanes(owners []*workflow, sessions map[string]Session, err error, started func(int) (float64, error)) (out map[*workflow]pane, allLive bool) {
	out = make(map[*workflow]pane, len(owners))
	allLive = err == nil
	for _, w := range owners {
		name := w.session.String
		listing, listed := sessions[tmuxName(name)]
		pid := listing.PanePID
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
			if why := middlesSession(w, listing); why != "" {
				out[w] = pane{note: why}
				continue
			}
			st, err := started(pid)
			if err != nil {
				// Gone between the two questions, or unreadable: no pid
				// is better than one that cannot be told from a reuse.
				out[w] = pane{note: "pane pid " + strconv.Itoa(pid) + ": " + err.Error()}
				allLive = false
				continue
			}
			// The create time is read to the boot's second: a pane made
			// just after the row may read up to a second before it.
			if rowSecond := float64(w.created/1000) - 1; st < rowSecond {
				out[w] = pane{note: fmt.Sprintf("pane pid %d was created before the row: not its agent", pid)}
				continue
			}
			out[w] = pane{pid: pid, started: st}
		}
	}
	return out, allLive
}
