package tmuxpanes

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// privateServer starts a tmux server on its own socket (-L name) in a
// socket dir of its own ($TMUX_TMPDIR), killed when the test ends. It
// returns the socket dir and a function running tmux against that server.
func privateServer(t *testing.T, name string) (dir string, tmux func(args ...string) string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux on PATH")
	}
	// A socket path must fit in sun_path: a short base, not t.TempDir().
	base, err := os.MkdirTemp("", "tx")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	t.Setenv("TMUX_TMPDIR", base)
	tmux = func(args ...string) string {
		t.Helper()
		cmd := exec.Command("tmux", append([]string{"-L", name}, args...)...)
		cmd.Env = append(withoutEnv(os.Environ(), "TMUX"), "TMUX_TMPDIR="+base)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	tmux("-f", "/dev/null", "new-session", "-d", "-s", "team", "sleep 300")
	t.Cleanup(func() {
		cmd := exec.Command("tmux", "-L", name, "kill-server")
		cmd.Env = append(withoutEnv(os.Environ(), "TMUX"), "TMUX_TMPDIR="+base)
		_ = cmd.Run()
	})
	return SocketDir(os.Getenv), tmux
}

// TestListNamesEveryPaneOfAServer: a real server's panes, by id, with
// their pids and the option the system set; its socket is found in the
// user's socket dir; once the server is gone, asking it says so.
func TestListNamesEveryPaneOfAServer(t *testing.T) {
	dir, tmux := privateServer(t, "agents")
	pane := tmux("split-window", "-t", "team", "-PF", "#{pane_id}", "sleep 300")
	tmux("set-option", "-p", "-t", pane, "@opencode_session_id", "ses_1 with spaces")

	socks, err := Sockets(dir)
	want := filepath.Join(dir, "agents")
	if err != nil || !slices.Equal(socks, []string{want}) {
		t.Fatalf("Sockets(%s) = %v, %v; want [%s]", dir, socks, err, want)
	}
	panes, err := List(want, "@opencode_session_id", 0)
	if err != nil || len(panes) != 2 {
		t.Fatalf("List = %+v, %v; want two panes", panes, err)
	}
	byID := map[string]Pane{}
	for _, p := range panes {
		byID[p.ID] = p
		if p.PID <= 0 || p.Dead {
			t.Errorf("pane %+v: want a live pid", p)
		}
	}
	if got := byID[pane]; got.Option != "ses_1 with spaces" {
		t.Errorf("pane %s option %q, want the one set", pane, got.Option)
	}
	if pidOf := tmux("display-message", "-p", "-t", pane, "#{pane_pid}"); pidOf == "" || byID[pane].PID <= 0 {
		t.Errorf("pane %s pid %d, tmux says %s", pane, byID[pane].PID, pidOf)
	}

	tmux("kill-server")
	if _, err := List(want, "", 0); !errors.Is(err, ErrNoServer) {
		t.Errorf("List of a killed server: %v, want ErrNoServer", err)
	}
	if _, err := List(filepath.Join(dir, "never"), "", 0); !errors.Is(err, ErrNoServer) {
		t.Errorf("List of a socket never made: %v, want ErrNoServer", err)
	}
	if socks, err := Sockets(filepath.Join(dir, "absent")); err != nil || socks != nil {
		t.Errorf("Sockets of a missing dir = %v, %v; want none", socks, err)
	}
}

func TestParseSkipsWhatItCannotRead(t *testing.T) {
	got := parse("%1 100 0 ses a b\n%2 101 1 \ngarbage\n%3 x 0 s\n3 102 0 s\n")
	want := []Pane{{ID: "%1", PID: 100, Option: "ses a b"}, {ID: "%2", PID: 101, Dead: true}}
	if !slices.Equal(got, want) {
		t.Errorf("parse = %+v, want %+v", got, want)
	}
}

// TestNoServerIsWhatSaysNoServerListens: only tmux's words for a socket
// nobody listens on say a server's panes are gone; any other failure says
// nothing of them.
func TestNoServerIsWhatSaysNoServerListens(t *testing.T) {
	tests := []struct {
		msg  string
		want bool
	}{
		{"no server running on /tmp/tmux-0/default", true},
		{"error connecting to /tmp/tmux-0/x (No such file or directory)", true},
		{"error connecting to /tmp/tmux-0/x (Connection refused)", true},
		{"server exited unexpectedly", true},
		{"error connecting to /tmp/tmux-0/x (Permission denied)", false},
		{"open terminal failed: not a terminal", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := noServer(tt.msg); got != tt.want {
			t.Errorf("noServer(%q) = %v, want %v", tt.msg, got, tt.want)
		}
	}
}

// TestListPanesAsksTheServerNamed: a server named by its socket's name
// (-L) or by its socket's path (-S) is the one asked, and a socket nobody
// listens on is ErrNoServer in tmux's own words, one line naming the call.
func TestListPanesAsksTheServerNamed(t *testing.T) {
	name := "dt-lp-" + strings.ReplaceAll(t.Name(), "/", "-")
	dir, tmux := privateServer(t, name)
	pid := tmux("list-panes", "-a", "-F", "#{pane_pid}")
	tests := []struct {
		name    string
		srv     Server
		want    string
		noSrv   bool
		errHead string
	}{
		{name: "by socket name", srv: Server{Name: name}, want: pid + " team\n"},
		{name: "by socket path", srv: Server{Path: filepath.Join(dir, name)}, want: pid + " team\n"},
		{name: "a name nobody listens on", srv: Server{Name: name + "-none"}, noSrv: true, errHead: "tmux list-panes: "},
		{name: "a path nobody listens on", srv: Server{Path: filepath.Join(dir, name+"-none")}, noSrv: true,
			errHead: "tmux -S " + filepath.Join(dir, name+"-none") + " list-panes: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := ListPanes(tc.srv, "#{pane_pid} #{session_name}", 0)
			if tc.noSrv {
				if !errors.Is(err, ErrNoServer) || !strings.HasPrefix(err.Error(), tc.errHead) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("out %q, error %v: want ErrNoServer, one line starting %q", out, err, tc.errHead)
				}
				return
			}
			if err != nil || out != tc.want {
				t.Fatalf("out %q, error %v: want %q", out, err, tc.want)
			}
		})
	}
}
