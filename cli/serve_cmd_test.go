package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/serve"
)

// dispatchtopBin is the binary built once in TestMain for the tests that
// run `dispatchtop serve` as real processes.
var dispatchtopBin string

func TestMain(m *testing.M) {
	// The wrap tests re-execute this test binary as `dispatchtop`: those
	// helper processes need no build.
	if os.Getenv(wrapHelperEnv) == "1" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "dispatchtop-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dispatchtopBin = filepath.Join(dir, "dispatchtop")
	if out, err := exec.Command("go", append(append([]string{"build"}, testproc.BuildFlags()...), "-o", dispatchtopBin, "github.com/dispatchtop/dispatchtop")...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build dispatchtop: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// serveTree writes a .sessions tree whose states sit far from every
// threshold, so two reads a second apart classify it alike: a live lead (a
// real sleep process), a finished child, a dead child whose pid is gone and
// a blocked one.
func serveTree(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".sessions")
	sleep := exec.Command("sleep", "300")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	info := liveness.SystemProbe{}.Lookup(sleep.Process.Pid)
	if !info.Exists || info.CreateTime.IsZero() {
		t.Fatalf("cannot read the create time of pid %d", sleep.Process.Pid)
	}
	started := float64(info.CreateTime.UnixNano()) / 1e9
	now := time.Now()
	write := func(rel, name, body string, age time.Duration) {
		t.Helper()
		dir := filepath.Join(root, rel)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	leadHB := filepath.Join(root, "S1", ".heartbeat")
	hb := func(pid int, parent, role, status string) string {
		return fmt.Sprintf(`{"pid": %d, "parent_heartbeat": %q, "role": %q, "started": %f, "status": %q}`, pid, parent, role, started, status)
	}
	// The lead beats "10 s ago": far from beat (30 s) for the seconds the
	// test takes.
	write("S1", ".heartbeat", hb(sleep.Process.Pid, "", "lead", "running"), 10*time.Second)
	write("S1/plan/1", ".heartbeat", hb(999999, leadHB, "planner", "completed"), time.Hour)
	write("S1/plan/1", ".cfa-state.json", `{"state": "DONE", "history": [], "backtrack_count": 0, "task_id": "t-1"}`, time.Hour)
	write("S1/code/2", ".heartbeat", hb(gone.Process.Pid, leadHB, "coder", "running"), time.Hour)
	write("S1/ask/3", ".heartbeat", hb(sleep.Process.Pid, leadHB, "asker", "running"), 10*time.Second)
	write("S1/ask/3", "blocked.json", `{"question": "ship it?"}`, 10*time.Second)
	return root
}

// serveProc is a running `dispatchtop serve`.
type serveProc struct {
	cmd     *exec.Cmd
	url     string        // http://127.0.0.1:PORT
	done    chan struct{} // closed when the process has exited
	waitErr error         // cmd.Wait's, once done is closed
	mu      sync.Mutex
	errs    bytes.Buffer
}

func (p *serveProc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errs.String()
}

// startServe starts the binary's serve on a free loopback port and waits
// for the line that says where it listens.
func startServe(t *testing.T, env []string, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(dispatchtopBin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir()), env...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, done: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.errs.WriteString(line + "\n")
			p.mu.Unlock()
			if _, rest, ok := strings.Cut(line, "listening on "); ok {
				select {
				case found <- strings.Fields(rest)[0]:
				default:
				}
			}
		}
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
		}
	})
	select {
	case p.url = <-found:
	case <-p.done:
		t.Fatalf("serve exited (%v) before listening:\n%s", p.waitErr, p.stderr())
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not say where it listens:\n%s", p.stderr())
	}
	return p
}

// stop sends SIGTERM and waits for a clean exit.
func (p *serveProc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
		if p.waitErr != nil {
			t.Fatalf("serve after SIGTERM: %v\n%s", p.waitErr, p.stderr())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("serve did not exit after SIGTERM:\n%s", p.stderr())
	}
}

func get(t *testing.T, url, token string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// quotedAge is an age a reason quotes ("10s", "1m10s"), which may read a
// second apart between two reads.
var quotedAge = regexp.MustCompile(`\b[0-9]+[dhms]([0-9]+[dhms])?\b`)

// withoutTimes decodes a v1 document and drops what differs between two
// reads of the same tree: generated_at and the ages, in fields and reasons.
func withoutTimes(t *testing.T, doc []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("decode: %v\n%s", err, doc)
	}
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range []string{"generated_at", "beat_age_s", "activity_age_s"} {
				delete(x, k)
			}
			if r, ok := x["reason"].(string); ok {
				x["reason"] = quotedAge.ReplaceAllString(r, "AGE")
			}
			for _, c := range x {
				strip(c)
			}
		case []any:
			for _, c := range x {
				strip(c)
			}
		}
	}
	strip(v)
	return v
}

// /api/v1/snapshot of `dispatchtop serve` is the document `--once --json`
// prints for the same tree, but for generated_at and the ages.
func TestServeAPIMatchesOnceJSON(t *testing.T) {
	root := serveTree(t)
	once := exec.Command(dispatchtopBin, "--once", "--json", "--fail-on", "none", root)
	once.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	want, err := once.Output()
	if err != nil {
		t.Fatalf("--once --json: %v", err)
	}
	p := startServe(t, nil, root)
	code, got := get(t, p.url+"/api/v1/snapshot", "")
	if code != http.StatusOK {
		t.Fatalf("GET /api/v1/snapshot: %d %s", code, got)
	}
	a, b := withoutTimes(t, got), withoutTimes(t, want)
	ja, _ := json.MarshalIndent(a, "", " ")
	jb, _ := json.MarshalIndent(b, "", " ")
	if !bytes.Equal(ja, jb) {
		t.Errorf("API document differs from --once --json:\n%s\nwant:\n%s", ja, jb)
	}
	if !bytes.Contains(want, []byte(`"state": "dead"`)) || !bytes.Contains(want, []byte(`"blocked": "ship it?"`)) {
		t.Errorf("the fixture did not classify as meant:\n%s", want)
	}
}

// /metrics of a served tree carries the series and values of issue 7, and
// serve listens on loopback when --listen names no host.
func TestServeMetricsEndToEnd(t *testing.T) {
	root := serveTree(t)
	p := startServe(t, nil, "--poll", "1s", root)
	code, body := get(t, p.url+"/metrics", "")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	for _, want := range []string{
		`dispatchtop_nodes{session="S1",state="running"} 2`,
		`dispatchtop_nodes{session="S1",state="dead"} 1`,
		`dispatchtop_nodes{session="S1",state="finished"} 1`,
		`dispatchtop_flagged_nodes{flag="blocked",session="S1"} 1`,
		`dispatchtop_actionable_nodes{action="answer",session="S1"} 1`,
		`dispatchtop_heartbeat_age_max_seconds{role="lead",session="S1"}`,
		`dispatchtop_watch_mode{mode="polling",reason="polling requested"} 1`,
		`dispatchtop_watch_poll_interval_seconds 1`,
		`dispatchtop_scan_duration_seconds`,
		`dispatchtop_sessions 1`,
	} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if !strings.HasPrefix(p.url, "http://127.0.0.1:") {
		t.Errorf("serve listens on %s, want loopback", p.url)
	}
	p.stop(t)
}

// With DISPATCHTOP_TOKEN set: 401 without the token, 200 with it.
func TestServeTokenEndToEnd(t *testing.T) {
	root := serveTree(t)
	p := startServe(t, []string{"DISPATCHTOP_TOKEN=t0ken"}, root)
	for _, path := range []string{"/api/v1/snapshot", "/metrics"} {
		if code, _ := get(t, p.url+path, ""); code != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d, want 401", path, code)
		}
		if code, _ := get(t, p.url+path, "wrong"); code != http.StatusUnauthorized {
			t.Errorf("GET %s with a wrong token: %d, want 401", path, code)
		}
		if code, _ := get(t, p.url+path, "t0ken"); code != http.StatusOK {
			t.Errorf("GET %s with the token: %d, want 200", path, code)
		}
	}
}

// Bad usage of serve and --remote is exit 2 with a one-line error.
func TestServeAndRemoteUsage(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"listen without a port", []string{"serve", "--listen", "localhost", root}, "--listen"},
		{"unreadable token file", []string{"serve", "--token-file", filepath.Join(root, "nope"), root}, "read the token"},
		{"no connection allowed", []string{"serve", "--max-conns", "0", root}, "--max-conns 0"},
		{"allow-host with a scheme and path", []string{"serve", "--allow-host", "http://box.example/", root}, `--allow-host "http://box.example/"`},
		{"remote with roots", []string{"--remote", "http://127.0.0.1:1", root}, "--remote shows the hosts' own roots"},
		{"a certificate without its key", []string{"serve", "--tls-cert", filepath.Join(root, "c.pem"), root}, "--tls-cert and --tls-key go together"},
		{"an unreadable certificate", []string{"serve", "--tls-cert", filepath.Join(root, "c.pem"), "--tls-key", filepath.Join(root, "k.pem"), root}, "--tls-cert"},
		{"remote with --json without --once", []string{"--remote", "http://127.0.0.1:1", "--json"}, "--json needs --once"},
		{"remote with --allow-empty", []string{"--remote", "http://127.0.0.1:1", "--once", "--allow-empty"}, "--allow-empty does not go with --remote"},
		{"metrics without --once", []string{"--metrics", "m.prom", root}, "--metrics needs --once"},
		{"remote with a bad URL", []string{"--remote", "ftp://h:1"}, "want http(s)"},
		{"token file without remote", []string{"--token-file", "x", "--once", root}, "--token-file needs --remote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			code := Execute(tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, ExitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("stderr %q, want one line with %q", stderr.String(), tt.want)
			}
		})
	}
}

// A token source that is given but blank (DISPATCHTOP_TOKEN set to blanks,
// --token-file naming no file or a file whose first line is blank) stops
// serve at start with exit 2 and one line naming the source: it never
// serves without the token it was meant to have.
func TestServeRefusesABlankToken(t *testing.T) {
	root := serveTree(t)
	dir := t.TempDir()
	tokenFile := func(body string) string {
		f, err := os.CreateTemp(dir, "token")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(body); err != nil {
			t.Fatal(err)
		}
		return f.Name()
	}
	type source struct {
		name string
		env  []string
		args []string
		want string
	}
	var tests []source
	for _, blank := range []string{"", "  ", "\t"} {
		q := fmt.Sprintf("%q", blank)
		tests = append(tests,
			source{"environment " + q, []string{serve.TokenEnv + "=" + blank}, nil, "$" + serve.TokenEnv},
			source{"flag " + q, nil, []string{"--token-file", blank}, "--token-file"},
		)
		file := tokenFile(blank + "\nsecond-line\n")
		tests = append(tests, source{"file " + q, nil, []string{"--token-file", file}, file})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A serve that starts despite the blank token is killed by the guard.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			args := append([]string{"serve", "--listen", "127.0.0.1:0"}, tt.args...)
			cmd := exec.CommandContext(ctx, dispatchtopBin, append(args, root)...)
			cmd.Env = append(append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir()), tt.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != ExitUsage {
				t.Fatalf("serve: %v, want exit %d; stderr %q", err, ExitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("stderr %q, want one line naming %q", stderr.String(), tt.want)
			}
		})
	}
}

// serve answers for loopback names and the --allow-host names only; any
// other Host (a page rebinding its own name to this machine) gets 421.
func TestServeAllowHostEndToEnd(t *testing.T) {
	p := startServe(t, nil, "--allow-host", "dispatch.example", serveTree(t))
	_, port, err := net.SplitHostPort(strings.TrimPrefix(p.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host string
		want int
	}{
		{"127.0.0.1:" + port, http.StatusOK},
		{"localhost:" + port, http.StatusOK},
		{"dispatch.example:" + port, http.StatusOK},
		{"evil.example:" + port, http.StatusMisdirectedRequest},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(http.MethodGet, p.url+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = tt.host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("Host %s: %d, want %d", tt.host, resp.StatusCode, tt.want)
		}
	}
}

// --max-conns 1: while one client holds the only slot, a second is not
// answered; once the first lets go, it is.
func TestServeMaxConnsEndToEnd(t *testing.T) {
	p := startServe(t, nil, "--max-conns", "1", serveTree(t))
	addr := strings.TrimPrefix(p.url, "http://")
	request := "GET / HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"
	open := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := io.WriteString(c, request); err != nil {
			t.Fatal(err)
		}
		return c, bufio.NewReader(c)
	}
	answer := func(c net.Conn, r *bufio.Reader, within time.Duration) (int, error) {
		c.SetReadDeadline(time.Now().Add(within))
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, err
	}
	holder, hr := open()
	if code, err := answer(holder, hr, 5*time.Second); code != http.StatusOK {
		t.Fatalf("first client: %d, %v", code, err)
	}
	second, sr := open()
	// The holder's slot stays taken for serve's 30 s idle timeout, so no
	// answer may come in this second, however slow the machine.
	if code, err := answer(second, sr, time.Second); err == nil {
		t.Fatalf("second client answered (%d) while the only slot was held", code)
	}
	holder.Close()
	if code, err := answer(second, sr, 5*time.Second); code != http.StatusOK {
		t.Fatalf("second client after the first closed: %d, %v", code, err)
	}
}

// A serve that cannot listen (the port is taken) fails with exit 1 and lets
// go of the watcher it had built: no goroutine is left behind.
func TestServeThatCannotListenLeavesNothingRunning(t *testing.T) {
	root := serveTree(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	// The signal package starts its one reader at the first Notify, for
	// good: start it before counting.
	Execute([]string{"version"}, nil, io.Discard, io.Discard)
	before := runtime.NumGoroutine()
	var stdout, stderr bytes.Buffer
	code := Execute([]string{"serve", "--listen", taken.Addr().String(), root}, nil, &stdout, &stderr)
	if code != ExitFound || !strings.Contains(stderr.String(), "serve:") {
		t.Fatalf("exit %d, stderr %q; want %d and the listen error", code, stderr.String(), ExitFound)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}
