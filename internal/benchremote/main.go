// Command benchremote measures the fleet view as SPEC §8 budgets it: one
// real `dispatchtop serve` per host on a generated tree, the viewer
// (`dispatchtop --remote`, every host) in a real terminal (a detached tmux
// session), on loopback. It reports the viewer's and the serves' CPU
// (share of one core, from /proc/PID/stat) while the fleet is quiet and
// while -churn percent of each host's nodes change state every second,
// the viewer's memory per remote node, and how long one change on a host
// takes to reach the viewer's screen. Linux only (/proc).
//
//	go run ./internal/benchremote -bin bin/dispatchtop -hosts 20 -sessions 1000 -per-session 10
//
// The trees' heartbeats name this process, so every pid is alive for the
// whole run. Everything it started is stopped, the trees removed.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/benchrun"
	"github.com/dispatchtop/dispatchtop/internal/treegen"
)

func main() {
	bin := flag.String("bin", "bin/dispatchtop", "the dispatchtop binary to measure")
	hosts := flag.Int("hosts", 20, "serve hosts, each on a tree of its own")
	sessions := flag.Int("sessions", 1000, "sessions in each host's tree")
	perSession := flag.Int("per-session", 10, "nodes per session")
	depth := flag.Int("depth", 3, "levels per session")
	quiet := flag.Int("quiet", 20, "seconds measured while nothing changes")
	churnSecs := flag.Int("churn-seconds", 20, "seconds measured while nodes change")
	churn := flag.Float64("churn", 1, "percent of each host's nodes that change state every second")
	flag.Parse()
	if err := run(*bin, *hosts, *sessions, *perSession, *depth, *quiet, *churnSecs, *churn); err != nil {
		fmt.Fprintln(os.Stderr, "benchremote:", err)
		os.Exit(1)
	}
}

type host struct {
	run   benchrun.Run
	beats []string
	cmd   *exec.Cmd
	url   string
}

func run(bin string, nHosts, sessions, perSession, depth, quiet, churnSecs int, churn float64) error {
	if _, err := exec.LookPath("tmux"); err != nil {
		return errors.New("tmux not found: the viewer is measured in a real terminal, and tmux provides it")
	}
	var hosts []*host
	defer func() {
		for _, h := range hosts {
			if h.cmd != nil && h.cmd.Process != nil {
				h.cmd.Process.Kill()
				h.cmd.Wait()
			}
			h.run.Remove()
		}
	}()
	var specs []string
	for i := range nHosts {
		r, err := benchrun.Prepare(bin, "benchremote-", sessions, perSession, depth)
		if err != nil {
			return err
		}
		h := &host{run: r}
		hosts = append(hosts, h)
		if h.beats, err = treegen.HeartbeatPaths(r.Root); err != nil {
			return err
		}
		if err := h.start(); err != nil {
			return err
		}
		specs = append(specs, fmt.Sprintf("h%02d=%s", i, h.url))
	}
	total := 0
	for _, h := range hosts {
		total += len(h.beats)
	}
	fmt.Printf("%d hosts × %d nodes (%d in all), one serve each, on loopback\n", nHosts, len(hosts[0].beats), total)

	socket := fmt.Sprintf("benchremote-%d", os.Getpid())
	tmux := func(args ...string) ([]byte, error) {
		return exec.Command("tmux", append([]string{"-L", socket, "-f", os.DevNull}, args...)...).Output()
	}
	configHome := filepath.Join(hosts[0].run.Dir, "config")
	if _, err := tmux("new-session", "-d", "-x", "160", "-y", "50", "-e", "TERM=xterm-256color",
		"-e", "XDG_CONFIG_HOME="+configHome, "--", hosts[0].run.Bin, "--remote", strings.Join(specs, ",")); err != nil {
		return fmt.Errorf("tmux new-session: %w", err)
	}
	defer tmux("kill-server")
	out, err := tmux("list-panes", "-F", "#{pane_pid}")
	if err != nil {
		return fmt.Errorf("tmux list-panes: %w", err)
	}
	viewer, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return fmt.Errorf("tmux pane pid %q: %w", out, err)
	}
	// Every host read whole before anything is measured.
	finished := regexp.MustCompile(`✔ (\d+)`)
	deadline := time.Now().Add(5 * time.Minute)
	for {
		screen, _ := tmux("capture-pane", "-p")
		if bytes.Count(screen, []byte(" ok")) >= min(nHosts, 3) && finished.Match(screen) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the viewer did not show the hosts within 5 minutes:\n%s", screen)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)

	pids := []int{viewer}
	for _, h := range hosts {
		pids = append(pids, h.cmd.Process.Pid)
	}
	report := func(phase string, secs int, tick func()) error {
		before, err := cpuTicks(pids)
		if err != nil {
			return err
		}
		t0 := time.Now()
		for s := 1; s <= secs; s++ {
			if tick != nil {
				tick()
			}
			time.Sleep(time.Until(t0.Add(time.Duration(s) * time.Second)))
		}
		after, err := cpuTicks(pids)
		if err != nil {
			return err
		}
		wall := time.Since(t0).Seconds()
		share := func(i int) float64 { return float64(after[i]-before[i]) / clockTicks / wall * 100 }
		serveSum := 0.0
		for i := 1; i < len(pids); i++ {
			serveSum += share(i)
		}
		rss, err := vmRSS(viewer)
		if err != nil {
			return err
		}
		fmt.Printf("%-6s viewer %5.1f %% of a core; each serve %4.1f %% (mean, 1 watching client); viewer VmRSS %.0f MiB = %.0f B a remote node\n",
			phase, share(0), serveSum/float64(len(pids)-1), float64(rss)/1024, float64(rss)*1024/float64(total))
		return nil
	}
	if err := report("quiet", quiet, nil); err != nil {
		return err
	}

	// One change on one host, timed to the viewer's screen.
	screen, _ := tmux("capture-pane", "-p")
	was := finished.FindString(string(screen))
	if err := flip(hosts[0].beats[len(hosts[0].beats)-1]); err != nil {
		return err
	}
	t0 := time.Now()
	for {
		screen, _ := tmux("capture-pane", "-p")
		if now := finished.FindString(string(screen)); now != "" && now != was {
			fmt.Printf("one change on a host reached the viewer's screen in %s (header %q -> %q; tmux capture every 10 ms)\n",
				time.Since(t0).Round(time.Millisecond), was, now)
			break
		}
		if time.Since(t0) > 10*time.Second {
			fmt.Println("one change on a host did not reach the viewer's screen within 10 s")
			break
		}
		time.Sleep(10 * time.Millisecond)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	perHost := max(1, int(float64(len(hosts[0].beats))*churn/100))
	tick := func() {
		for _, h := range hosts {
			for range perHost {
				flip(h.beats[rng.IntN(len(h.beats))])
			}
		}
	}
	fmt.Printf("churn: %d nodes a host (%.1f %%) change state every second\n", perHost, churn)
	return report("churn", churnSecs, tick)
}

// start runs the host's serve on a free loopback port and waits for the
// line that says where.
func (h *host) start() error {
	h.cmd = exec.Command(h.run.Bin, "serve", "--listen", "127.0.0.1:0", h.run.Root)
	h.cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(h.run.Dir, "config"))
	pipe, err := h.cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := h.cmd.Start(); err != nil {
		return err
	}
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		if _, rest, ok := strings.Cut(sc.Text(), "listening on "); ok {
			h.url = strings.Fields(rest)[0]
			go func() {
				for sc.Scan() {
				}
			}()
			return nil
		}
	}
	return fmt.Errorf("serve on %s said nowhere it listens", h.run.Root)
}

// flip turns a node's heartbeat status from running to completed or
// back: a state change on its host.
func flip(hb string) error {
	b, err := os.ReadFile(hb)
	if err != nil {
		return err
	}
	running, completed := []byte(`"status":"running"`), []byte(`"status":"completed"`)
	if bytes.Contains(b, running) {
		b = bytes.Replace(b, running, completed, 1)
	} else {
		b = bytes.Replace(b, completed, running, 1)
	}
	tmp := hb + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, hb)
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times.
const clockTicks = 100

// cpuTicks is each pid's utime + stime.
func cpuTicks(pids []int) ([]int64, error) {
	out := make([]int64, len(pids))
	for i, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil, err
		}
		// The command name may hold spaces: the fields start after ")".
		fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		u, _ := strconv.ParseInt(fields[11], 10, 64)
		s, _ := strconv.ParseInt(fields[12], 10, 64)
		out[i] = u + s
	}
	return out, nil
}

// vmRSS is pid's resident set, in kB.
func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmRSS")
}
