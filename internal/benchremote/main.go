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
// After the viewer quit, each serve's CPU is measured under churn with 0,
// 1, 5 and 10 clients following its watch stream (-clients): the slope,
// fitted by least squares over them all, is what a watching client costs
// a serve. The change-to-screen
// latency is sampled -samples times (p50, p99). With -profile DIR the
// viewer writes a CPU profile of its run to DIR/viewer.cpu.pprof
// (DISPATCHTOP_CPUPROFILE) and its live heap at exit to DIR/viewer.heap.pprof
// (DISPATCHTOP_HEAPPROFILE), read with `go tool pprof BIN DIR/viewer.cpu.pprof`.
//
// The trees are made in /dev/shm (-trees), so that the churn's writer
// reaches its rate; a phase says how much of its time the writer flipped,
// and a rate still short of the one asked is printed with the viewer's
// share scaled to it. The trees' heartbeats name this process, so every
// pid is alive for the whole run. Everything it started is stopped, the
// trees removed.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	clients := flag.String("clients", "0,1,5,10", "watching clients of each serve measured under churn before the viewer starts, the slope fitted over all of them (empty: none)")
	clientSecs := flag.Int("client-seconds", 10, "seconds measured for each count of -clients")
	samples := flag.Int("samples", 20, "changes timed from a host to the viewer's screen")
	profile := flag.String("profile", "", "a directory the viewer writes its CPU profile to (viewer.cpu.pprof)")
	viewerEnv := flag.String("viewer-env", "", "NAME=VALUE pairs, comma-separated, in the viewer's environment (GOGC=100, GOMEMLIMIT=400MiB: the collector's pacing)")
	trees := flag.String("trees", "/dev/shm", "where the hosts' trees are made (a memory filesystem: the churn's renames on a disk cost the writer more than the rate allows; empty: the system's temporary directory)")
	flag.Parse()
	if err := treesIn(*trees); err != nil {
		fmt.Fprintln(os.Stderr, "benchremote:", err)
		os.Exit(2)
	}
	o := opts{hosts: *hosts, sessions: *sessions, perSession: *perSession, depth: *depth, quiet: *quiet,
		churnSecs: *churnSecs, churn: *churn, clientSecs: *clientSecs, samples: *samples, profile: *profile,
		viewerEnv: *viewerEnv}
	for _, c := range strings.Split(*clients, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		n, err := strconv.Atoi(c)
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "benchremote: -clients %q: want counts like 0,1,5\n", *clients)
			os.Exit(2)
		}
		o.clients = append(o.clients, n)
	}
	if err := run(*bin, o); err != nil {
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

type opts struct {
	hosts, sessions, perSession, depth int
	quiet, churnSecs, clientSecs       int
	churn                              float64
	clients                            []int
	samples                            int
	profile                            string
	viewerEnv                          string
}

func run(bin string, o opts) error {
	nHosts, sessions, perSession, depth, quiet, churnSecs, churn := o.hosts, o.sessions, o.perSession, o.depth, o.quiet, o.churnSecs, o.churn
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
		if err := h.age(); err != nil {
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
	watchLimit(hosts[0].run.Root, nHosts)
	rng := rand.New(rand.NewPCG(1, 2))
	perHost := max(1, int(float64(len(hosts[0].beats))*churn/100))
	// flips counts the changes made: on a loaded machine a second's share
	// may take longer than the second, and the rate reached is printed.
	var flips atomic.Int64
	var writing atomic.Int64 // the writer's time in flips, ns
	// tick is a second's changes, spread over it in steps of 100 ms (a
	// step late is not waited for).
	tick := func() {
		const steps = 10
		t0 := time.Now()
		for k := range steps {
			w0 := time.Now()
			for _, h := range hosts {
				for range perHost*(k+1)/steps - perHost*k/steps {
					if flip(h.beats[rng.IntN(len(h.beats))]) == nil {
						flips.Add(1)
					}
				}
			}
			writing.Add(int64(time.Since(w0)))
			time.Sleep(time.Until(t0.Add(time.Duration(k+1) * time.Second / steps)))
		}
	}
	for _, h := range hosts {
		if err := h.ready(5 * time.Minute); err != nil {
			return err
		}
	}

	socket := fmt.Sprintf("benchremote-%d", os.Getpid())
	tmux := func(args ...string) ([]byte, error) {
		return exec.Command("tmux", append([]string{"-L", socket, "-f", os.DevNull}, args...)...).Output()
	}
	configHome := filepath.Join(hosts[0].run.Dir, "config")
	args := []string{"new-session", "-d", "-x", "160", "-y", "50", "-e", "TERM=xterm-256color",
		"-e", "XDG_CONFIG_HOME=" + configHome}
	for _, kv := range strings.Split(o.viewerEnv, ",") {
		if kv != "" {
			args = append(args, "-e", kv)
		}
	}
	if o.profile != "" {
		dir, err := filepath.Abs(o.profile)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		args = append(args, "-e", "DISPATCHTOP_CPUPROFILE="+filepath.Join(dir, "viewer.cpu.pprof"),
			"-e", "DISPATCHTOP_HEAPPROFILE="+filepath.Join(dir, "viewer.heap.pprof"))
	}
	args = append(args, "--", hosts[0].run.Bin, "--remote", strings.Join(specs, ","))
	if _, err := tmux(args...); err != nil {
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
	// The header names each host that answers, or counts them when their
	// names do not fit its line (a host's row may be off screen, under the
	// first host's 10,000 rows).
	allOK := fmt.Sprintf("%d hosts ok", nHosts)
	if nHosts == 1 {
		allOK = "1 host ok"
	}
	answering := func(screen []byte) bool {
		if bytes.Contains(screen, []byte(allOK)) {
			return true
		}
		for i := range nHosts {
			if !bytes.Contains(screen, fmt.Appendf(nil, "h%02d ok", i)) {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		screen, _ := tmux("capture-pane", "-p")
		if answering(screen) && finished.Match(screen) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the viewer did not show the hosts within 5 minutes:\n%s", screen)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)

	var quietShare float64 // the viewer's share of a core while quiet
	pids := []int{viewer}
	for _, h := range hosts {
		pids = append(pids, h.cmd.Process.Pid)
	}
	report := func(phase string, secs int, tick func()) error {
		flipped, wrote := flips.Load(), writing.Load()
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
		rate := float64(flips.Load()-flipped) / wall / float64(len(hosts))
		fmt.Printf("%-6s viewer %5.1f %% of a core; each serve %4.1f %% (mean, 1 watching client); viewer VmRSS %.0f MiB = %.0f B a remote node; %.0f changes a second a host; load average %s\n",
			phase, share(0), serveSum/float64(len(pids)-1), float64(rss)/1024, float64(rss)*1024/float64(total),
			rate, loadAverage())
		if tick != nil {
			fmt.Printf("       the writer flipped for %.0f %% of the time", float64(writing.Load()-wrote)/1e9/wall*100)
			if asked := float64(perHost); rate < 0.95*asked {
				// Short of the rate: the viewer's share at the rate asked,
				// by proportion (its quiet share plus the churn's, scaled).
				fmt.Printf("; short of the %.0f changes a second asked: the viewer's share by proportion %.1f %%", asked, quietShare+(share(0)-quietShare)*asked/max(rate, 1))
			}
			fmt.Println()
		} else {
			quietShare = share(0)
		}
		return nil
	}
	if err := report("quiet", quiet, nil); err != nil {
		return err
	}

	// Changes on the hosts, one at a time, each timed to the viewer's screen.
	var took []time.Duration
	for k := range max(o.samples, 1) {
		h := hosts[k%len(hosts)]
		screen, _ := tmux("capture-pane", "-p")
		was := finished.FindString(string(screen))
		if err := flip(h.beats[len(h.beats)-1-k/len(hosts)]); err != nil {
			return err
		}
		t0 := time.Now()
		for {
			screen, _ := tmux("capture-pane", "-p")
			if now := finished.FindString(string(screen)); now != "" && now != was {
				took = append(took, time.Since(t0))
				break
			}
			if time.Since(t0) > 10*time.Second {
				fmt.Printf("a change on host %d did not reach the viewer's screen within 10 s\n", k%len(hosts))
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(time.Duration(100+rng.IntN(400)) * time.Millisecond) // not in step with the fleet's gathering
	}
	if len(took) > 0 {
		slices.Sort(took)
		at := func(q float64) time.Duration { return took[min(len(took)-1, int(q*float64(len(took))))] }
		fmt.Printf("a change on a host reached the viewer's screen in p50 %s, p99 %s, max %s (%d changes; tmux capture every 5 ms)\n",
			at(0.5).Round(time.Millisecond), at(0.99).Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond), len(took))
	}

	fmt.Printf("churn: %d nodes a host (%.1f %%) change state every second\n", perHost, churn)
	if err := report("churn", churnSecs, tick); err != nil {
		return err
	}
	// The viewer quits on q (and writes its profile as it exits): the
	// serves' clients are measured without it, last, so that the nodes
	// their churn flips cross no threshold in a phase of the viewer's.
	tmux("send-keys", "q")
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", viewer)); err != nil {
			break
		}
	}
	if o.profile != "" {
		fmt.Printf("the viewer's CPU profile: %s\n", filepath.Join(o.profile, "viewer.cpu.pprof"))
	}
	if len(o.clients) > 0 {
		return perClient(hosts, o.clients, o.clientSecs, tick, &flips)
	}
	return nil
}

// perClient measures each serve's CPU under churn with n clients of its
// watch stream for each n of counts: the slope is a client's cost.
func perClient(hosts []*host, counts []int, secs int, tick func(), flips *atomic.Int64) error {
	pids := make([]int, len(hosts))
	for i, h := range hosts {
		pids[i] = h.cmd.Process.Pid
	}
	var first float64
	var firstN int
	var xs, ys []float64 // clients of a serve, its CPU: the fit's points
	for k, n := range counts {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var failed atomic.Value
		var read, lines, snapshots atomic.Int64
		for _, h := range hosts {
			for range n {
				wg.Go(func() {
					if err := follow(ctx, h.url+"/api/v1/watch", &read, &lines, &snapshots); err != nil && ctx.Err() == nil {
						failed.Store(err)
					}
				})
			}
		}
		// Each client read its snapshot (10 MB at 10,000 nodes) before the
		// window opens: a window that opened after a fixed 2 s measured the
		// serves still sending the snapshots of many clients.
		for wait := time.Now().Add(2 * time.Minute); snapshots.Load() < int64(n*len(hosts)); {
			if time.Now().After(wait) {
				cancel()
				wg.Wait()
				return fmt.Errorf("%d watching clients: %d read their snapshot in 2 minutes", n*len(hosts), snapshots.Load())
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(time.Second)
		if k == 0 && n > 0 {
			// What a client reads while nothing changes.
			r0, l0 := read.Load(), lines.Load()
			time.Sleep(5 * time.Second)
			fmt.Printf("quiet, a watching client reads %.1f KiB and %.1f events a second\n",
				float64(read.Load()-r0)/1024/5/float64(n*len(pids)), float64(lines.Load()-l0)/5/float64(n*len(pids)))
		}
		read0, lines0 := read.Load(), lines.Load()
		before, err := cpuTicks(pids)
		if err != nil {
			cancel()
			return err
		}
		flipped := flips.Load()
		t0 := time.Now()
		for s := 1; s <= secs; s++ {
			tick()
			time.Sleep(time.Until(t0.Add(time.Duration(s) * time.Second)))
		}
		after, err := cpuTicks(pids)
		cancel()
		wg.Wait()
		if err != nil {
			return err
		}
		if err, _ := failed.Load().(error); err != nil {
			return fmt.Errorf("a watching client: %w", err)
		}
		sum := 0.0
		line0 := fmt.Sprintf("%.0f changes a second a host", float64(flips.Load()-flipped)/time.Since(t0).Seconds()/float64(len(hosts)))
		for i := range pids {
			sum += float64(after[i]-before[i]) / clockTicks / time.Since(t0).Seconds() * 100
		}
		mean := sum / float64(len(pids))
		xs, ys = append(xs, float64(n)), append(ys, mean)
		line := fmt.Sprintf("serve under churn (%s), %d watching clients: %4.1f %% of a core (mean of %d serves)", line0, n, mean, len(pids))
		if k > 0 && n != firstN {
			line += fmt.Sprintf("; %.2f %% a client", (mean-first)/float64(n-firstN))
		} else {
			first, firstN = mean, n
		}
		if n > 0 {
			secs := time.Since(t0).Seconds()
			line += fmt.Sprintf("; a client reads %.0f KiB and %.1f events a second",
				float64(read.Load()-read0)/1024/secs/float64(n*len(pids)), float64(lines.Load()-lines0)/secs/float64(n*len(pids)))
		}
		fmt.Printf("%s; load average %s\n", line, loadAverage())
	}
	if slope, spread, ok := fitLine(xs, ys); ok {
		fmt.Printf("serve under churn: %.2f %% of a core a watching client (least squares over %d counts of clients, a count's CPU off the line by %.2f %% at most)\n",
			slope, len(xs), spread)
	}
	return nil
}

// fitLine is the least-squares slope of ys over xs and the largest
// distance of a point from that line, or false with fewer than two
// distinct xs.
func fitLine(xs, ys []float64) (slope, spread float64, ok bool) {
	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i], my+ys[i]
	}
	mx, my = mx/float64(len(xs)), my/float64(len(xs))
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return 0, 0, false
	}
	slope = sxy / sxx
	for i := range xs {
		spread = max(spread, math.Abs(ys[i]-(my+slope*(xs[i]-mx))))
	}
	return slope, spread, true
}

// follow reads a watch stream until ctx ends, every line read and let
// go, counting its bytes and lines, and in snapshots its first line.
func follow(ctx context.Context, u string, read, lines, snapshots *atomic.Int64) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	r := bufio.NewReaderSize(resp.Body, 1<<20)
	first := false
	for {
		line, err := r.ReadSlice('\n')
		read.Add(int64(len(line)))
		switch {
		case err == nil:
			if lines.Add(1); !first {
				first = true
				snapshots.Add(1)
			}
		case errors.Is(err, bufio.ErrBufferFull):
		default:
			return err
		}
	}
}

// aged is how old every heartbeat is made before the serves start: past
// every threshold (quiet at 30 s, stalled at 120 s, a kill candidate at
// 300 s), so that no node crosses one while a phase is measured, which
// would renew every node of every host at once and measure that instead.
// A node flipped beats anew, and crosses them later, as churn does.
const aged = time.Hour

// age sets the mtime of every heartbeat of h to aged ago.
func (h *host) age() error {
	then := time.Now().Add(-aged)
	for _, p := range h.beats {
		if err := os.Chtimes(p, then, then); err != nil {
			return err
		}
	}
	return nil
}

// ready waits until the host's serve answers its snapshot (its first scan
// done).
func (h *host) ready(within time.Duration) error {
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(h.url + "/api/v1/snapshot")
		if err != nil {
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
	}
	return fmt.Errorf("serve on %s did not answer its snapshot within %s", h.run.Root, within)
}

// watchLimit says when the serves need more inotify watches (a directory
// each) than the user may hold: a serve past the limit polls its tree,
// every 2 s a whole scan, and the serves' CPU is that, not the watch
// streams'. The limit is the user's, shared with every process of theirs.
func watchLimit(root string, hosts int) {
	dirs := 0
	filepath.WalkDir(root, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs++
		}
		return nil
	})
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches")
	if err != nil {
		return
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || dirs*hosts <= limit {
		return
	}
	fmt.Printf("the serves watch some %d directories, past fs.inotify.max_user_watches (%d, shared with every process of this user): those past it poll their trees\n",
		dirs*hosts, limit)
}

// loadAverage is the first three fields of /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
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

// treesIn has the hosts' trees made under dir (they are made in the
// temporary directory), when dir is given and is a directory. On a disk
// (ext4, its renames over a file flushing it) a flip cost the writer
// 0.4-0.6 ms, and 20 hosts × 100 flips a second were more than a second
// of it: the bench reached 41 of the 100 changes asked. In memory a flip
// is some 30 µs.
func treesIn(dir string) error {
	if dir == "" {
		return nil
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		fmt.Printf("trees in the temporary directory (%s is no directory)\n", dir)
		return nil
	}
	return os.Setenv("TMPDIR", dir)
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
