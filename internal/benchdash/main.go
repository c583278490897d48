// Command benchdash measures the dashboard's memory as a user meets it
// (SPEC §8): the real binary in a real terminal (a detached tmux session of
// a fixed size), on a generated tree whose heartbeats are all touched just
// before it starts, so that the whole fleet crosses its thresholds in the
// same second: turns stalled, then becomes kill candidates. It samples the
// process's VmRSS and VmHWM every second and prints them every 5 s, then
// the peak and what the header said at the end. Linux only (/proc).
//
//	go run ./internal/benchdash -bin bin/dispatchtop -sessions 10000 -per-session 10 -seconds 140
//
// The tree's heartbeats name this process, so every pid is alive for the
// whole run. The tree is removed afterwards.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/benchrun"
	"github.com/dispatchtop/dispatchtop/internal/treegen"
)

func main() {
	bin := flag.String("bin", "bin/dispatchtop", "the dispatchtop binary to measure")
	sessions := flag.Int("sessions", 10000, "sessions in the generated tree")
	perSession := flag.Int("per-session", 10, "nodes per session")
	depth := flag.Int("depth", 3, "levels per session")
	seconds := flag.Int("seconds", 140, "how long to watch the dashboard after the touch")
	width := flag.Int("width", 160, "terminal columns")
	height := flag.Int("height", 50, "terminal rows")
	flag.Parse()
	if err := run(*bin, *sessions, *perSession, *depth, *seconds, *width, *height); err != nil {
		fmt.Fprintln(os.Stderr, "benchdash:", err)
		os.Exit(1)
	}
}

func run(bin string, sessions, perSession, depth, seconds, width, height int) error {
	if seconds < 5 {
		return fmt.Errorf("-seconds %d: need at least 5", seconds)
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		return errors.New("tmux not found: the dashboard is measured in a real terminal, and tmux provides it")
	}
	r, err := benchrun.Prepare(bin, "benchdash-", sessions, perSession, depth)
	if err != nil {
		return err
	}
	defer r.Remove()
	binAbs, tmp, root, took := r.Bin, r.Dir, r.Root, r.Took
	configHome := filepath.Join(tmp, "config") // no config: the defaults
	beats, err := treegen.HeartbeatPaths(root)
	if err != nil {
		return err
	}
	fmt.Printf("tree: %d nodes (%d sessions × %d, %d deep), generated in %s; the dashboard in a %d×%d terminal\n",
		len(beats), sessions, perSession, depth, took.Round(time.Second), width, height)

	// Generating 100,000 nodes takes a minute, so the first sessions'
	// beats would be old before the dashboard starts: touch them all
	// now, and the fleet crosses each threshold together.
	t0 := time.Now()
	for _, hb := range beats {
		if err := os.Chtimes(hb, t0, t0); err != nil {
			return err
		}
	}
	fmt.Printf("every heartbeat touched in %s; seconds below are from the touch\n", time.Since(t0).Round(time.Millisecond))

	socket := fmt.Sprintf("benchdash-%d", os.Getpid())
	tmux := func(args ...string) ([]byte, error) {
		return exec.Command("tmux", append([]string{"-L", socket, "-f", os.DevNull}, args...)...).Output()
	}
	// The command as separate arguments: tmux runs it without a shell.
	if _, err := tmux("new-session", "-d", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height),
		"-e", "TERM=xterm-256color", "-e", "XDG_CONFIG_HOME="+configHome, "--", binAbs, root); err != nil {
		return fmt.Errorf("tmux new-session: %w", err)
	}
	defer tmux("kill-server")
	out, err := tmux("list-panes", "-F", "#{pane_pid}")
	if err != nil {
		return fmt.Errorf("tmux list-panes: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return fmt.Errorf("tmux pane pid %q: %w", out, err)
	}

	var line strings.Builder
	var peak, last int64
	for s := 1; s <= seconds; s++ {
		time.Sleep(time.Until(t0.Add(time.Duration(s) * time.Second)))
		rss, hwm, err := memory(pid)
		if err != nil {
			screen, _ := tmux("capture-pane", "-p")
			return fmt.Errorf("the dashboard (pid %d) at %d s: %w; its screen:\n%s", pid, s, err, bytes.TrimSpace(screen))
		}
		peak, last = max(peak, hwm), rss
		if s%5 == 0 {
			fmt.Fprintf(&line, " %d:%d", s, rss>>10)
			if s%60 == 0 || s == seconds {
				fmt.Printf("VmRSS MiB by second:%s\n", line.String())
				line.Reset()
			}
		}
	}
	screen, _ := tmux("capture-pane", "-p")
	lines := strings.Split(string(screen), "\n")
	fmt.Printf("peak VmHWM %.1f MiB; VmRSS at the end %.1f MiB\n", float64(peak)/1024, float64(last)/1024)
	for _, l := range lines[:min(3, len(lines))] {
		fmt.Println("  " + strings.TrimSpace(l))
	}
	return nil
}

// memory reads VmRSS and VmHWM (kB) of pid.
func memory(pid int) (rss, hwm int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %q: %w", key, value, err)
		}
		if key == "VmRSS" {
			rss = kb
		} else {
			hwm = kb
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if hwm == 0 {
		return 0, 0, errors.New("no VmHWM: the process is gone")
	}
	return rss, hwm, nil
}
