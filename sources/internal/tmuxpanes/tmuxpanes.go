// Package tmuxpanes asks tmux servers for their panes, by pane id: the
// lookup a source needs when a system records the tmux pane its agent runs
// in (opencode-teams' paneId, "%42"). A pane id is unique within one server
// only, and a restarted server numbers its panes from %0 again, so a pane
// is named by its server's socket and its id, and a caller checks an option
// the system set on the pane to know it is the one the record names.
//
// It asks each server once, directly (no shell), bounded by a timeout.
// ListPanes is the one call to tmux of every source: List asks it for the
// panes by id, middle's session lookup for the panes by session name.
package tmuxpanes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultTimeout bounds one server's answer.
const DefaultTimeout = 2 * time.Second

// ErrNoServer: no server listens on the socket (the socket is absent or
// refuses, see noServer), so none of its panes exist.
var ErrNoServer = errors.New("no server running")

// ErrNoTmux: no tmux on PATH, so no server could be asked.
var ErrNoTmux = errors.New("no tmux on PATH")

// Pane is one pane of a server.
type Pane struct {
	ID string // "%42"
	// PID is the pane's process (its shell, or the command it was made
	// with).
	PID int
	// Dead: the pane's process exited and the pane stays (remain-on-exit).
	Dead bool
	// Option is the value of the user option asked for ("" when unset).
	Option string
}

// SocketDir is the directory tmux keeps the user's server sockets in, as
// tmux itself finds it: $TMUX_TMPDIR (else /tmp), then tmux-<uid>.
func SocketDir(getenv func(string) string) string {
	base := getenv("TMUX_TMPDIR")
	if base == "" {
		base = "/tmp"
	}
	return filepath.Join(base, "tmux-"+strconv.Itoa(os.Getuid()))
}

// Sockets lists the sockets in dir, sorted: every server the user started
// with -L NAME or none (default). A missing dir has none: no server of
// this user runs.
func Sockets(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list tmux sockets: %w", err)
	}
	var socks []string
	for _, e := range entries {
		if e.Type()&os.ModeSocket != 0 {
			socks = append(socks, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(socks)
	return socks, nil
}

// List asks the server at socket (a path, `tmux -S`) for every pane with
// the value of the user option named option ("@name"; "" for none).
// ErrNoServer when no server listens there; ErrNoTmux without tmux; any
// other error says why the server could not be asked.
func List(socket, option string, timeout time.Duration) ([]Pane, error) {
	format := "#{pane_id} #{pane_pid} #{pane_dead} "
	if option != "" {
		format += "#{" + option + "}"
	}
	out, err := ListPanes(Server{Path: socket}, format, timeout)
	switch {
	case errors.Is(err, ErrNoTmux):
		return nil, ErrNoTmux
	case errors.Is(err, ErrNoServer):
		return nil, fmt.Errorf("tmux -S %s: %w", socket, ErrNoServer)
	case err != nil:
		return nil, err
	}
	return parse(out), nil
}

// Server names a tmux server: by its socket's path (`tmux -S`), else by
// its socket's name (`tmux -L`); neither is the user's default server.
type Server struct {
	Path, Name string
}

// ListPanes runs `tmux list-panes -a -F format` on the server, directly
// (no shell), without $TMUX (inside a tmux client it names that client's
// server: without it tmux asks the one named, or the user's default), and
// returns what it printed. An error is one line: "tmux [-S path]
// list-panes: " and why; it is ErrNoTmux without tmux, ErrNoServer (with
// tmux's own words) when no server listens on the socket.
func ListPanes(srv Server, format string, timeout time.Duration) (string, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var args []string
	what := "tmux list-panes"
	switch {
	case srv.Path != "":
		args, what = []string{"-S", srv.Path}, "tmux -S "+srv.Path+" list-panes"
	case srv.Name != "":
		args = []string{"-L", srv.Name}
	}
	cmd := exec.CommandContext(ctx, "tmux", append(args, "list-panes", "-a", "-F", format)...)
	cmd.Env = withoutEnv(os.Environ(), "TMUX")
	cmd.WaitDelay = timeout
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("%s: no answer within %s", what, timeout)
	case errors.Is(err, exec.ErrNotFound):
		return "", fmt.Errorf("%s: %w", what, ErrNoTmux)
	case err != nil:
		msg := firstLine(stderr.String())
		if noServer(msg) {
			return "", noServerError(what + ": " + msg)
		}
		if msg != "" {
			return "", fmt.Errorf("%s: %s", what, msg)
		}
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return stdout.String(), nil
}

// noServerError is tmux's own words that no server listens on a socket:
// ErrNoServer.
type noServerError string

func (e noServerError) Error() string        { return string(e) }
func (e noServerError) Is(target error) bool { return target == ErrNoServer }

// noServer reports whether tmux's message says no server listens on the
// socket: refused ("no server running on …"), absent ("error connecting to
// … (No such file or directory)"), or exiting as it was asked ("server
// exited unexpectedly"). Any other failure (a permission, a full table)
// says nothing of the server.
func noServer(msg string) bool {
	return strings.HasPrefix(msg, "no server running") ||
		strings.HasPrefix(msg, "error connecting to") && (strings.HasSuffix(msg, "(No such file or directory)") || strings.HasSuffix(msg, "(Connection refused)")) ||
		msg == "server exited unexpectedly"
}

// parse reads "<id> <pid> <dead> <option>" lines; a line it cannot read is
// skipped.
func parse(out string) []Pane {
	var panes []Pane
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\r\n")
		fields := strings.SplitN(line, " ", 4)
		if len(fields) < 3 || !strings.HasPrefix(fields[0], "%") {
			continue
		}
		pid, err := strconv.Atoi(fields[1])
		if err != nil || pid <= 0 {
			continue
		}
		p := Pane{ID: fields[0], PID: pid, Dead: fields[2] == "1"}
		if len(fields) == 4 {
			p.Option = fields[3]
		}
		panes = append(panes, p)
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
