// Package packaging holds what ships dispatchtop beyond the binary — the
// container's Dockerfile (at the repository's root), the systemd unit, the
// release configuration — and the tests that hold each to the binary it
// ships.
package packaging

import (
	"bufio"
	"debug/elf"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// repo is the repository's root, seen from this package's directory.
const repo = ".."

// dockerfile is what the tests read of the Dockerfile: the build command
// of its build stage and what the final stage sets.
type dockerfile struct {
	buildEnv   []string // before `go build`, e.g. CGO_ENABLED=0
	buildArgs  []string // `go build`'s arguments, ARGs substituted
	env        []string // the final stage's ENV
	user       string
	entrypoint []string
}

func readDockerfile(t *testing.T, args map[string]string) dockerfile {
	t.Helper()
	f, err := os.Open(filepath.Join(repo, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var d dockerfile
	stages := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		word, rest, _ := strings.Cut(line, " ")
		switch word {
		case "FROM":
			stages++
		case "RUN":
			fields := shellWords(t, os.Expand(rest, func(k string) string { return args[k] }))
			for i, w := range fields {
				if w == "go" && i+1 < len(fields) && fields[i+1] == "build" {
					d.buildEnv, d.buildArgs = fields[:i], fields[i+2:]
				}
			}
		case "ENV":
			if stages > 1 {
				d.env = append(d.env, rest)
			}
		case "USER":
			d.user = rest
		case "ENTRYPOINT":
			for _, m := range regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(rest, -1) {
				d.entrypoint = append(d.entrypoint, m[1])
			}
		}
	}
	if d.buildArgs == nil {
		t.Fatal("the Dockerfile has no `RUN ... go build` line")
	}
	return d
}

// shellWords splits a RUN line the way sh would for the plain words and
// double-quoted strings it holds (nothing else is used there).
func shellWords(t *testing.T, s string) []string {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quotes in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// No container builder runs here, so the Dockerfile is held to what it
// promises by doing what it does: the same `go build`, with the same
// environment and flags, makes a static binary, and that binary, started
// as the image starts it (its ENTRYPOINT, its ENV, a user that is not
// root), serves.
func TestDockerfileBuildsAStaticServeThatRunsAsNonRoot(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the image is a Linux one")
	}
	d := readDockerfile(t, map[string]string{"VERSION": "v0.0.0-test", "COMMIT": "0123456789abcdef", "DATE": "2026-11-26T00:00:00Z"})
	if !strings.Contains(strings.Join(d.buildEnv, " "), "CGO_ENABLED=0") || !contains(d.buildArgs, "-trimpath") {
		t.Fatalf("the build is not static and trimmed: %v go build %v", d.buildEnv, d.buildArgs)
	}
	if d.user == "" || strings.HasPrefix(d.user, "root") || strings.HasPrefix(d.user, "0") {
		t.Errorf("USER %q: the image must not run as root", d.user)
	}
	if len(d.entrypoint) != 2 || d.entrypoint[1] != "serve" {
		t.Fatalf("ENTRYPOINT %v, want the binary and serve", d.entrypoint)
	}

	// Readable by all: the binary runs as another user, on a tree it reads.
	shared, err := os.MkdirTemp("", "dispatchtop-image-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	if err := os.Chmod(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(shared, "dispatchtop")
	args := append([]string{"build"}, d.buildArgs...)
	for i, a := range args {
		if a == "-o" && i+1 < len(args) {
			args[i+1] = bin
		}
	}
	build := exec.Command("go", args...)
	build.Dir = repo
	build.Env = append(os.Environ(), d.buildEnv...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, out)
	}
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary asks for a dynamic loader: the distroless static image has none")
		}
	}
	ef.Close()
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.Contains(string(out), "v0.0.0-test (commit 0123456789ab, built 2026-11-26T00:00:00Z") {
		t.Errorf("version of the image's binary: %q, %v; want the build args stamped", out, err)
	}

	root := filepath.Join(shared, ".sessions")
	if err := os.MkdirAll(filepath.Join(root, "20261126-000000"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "20261126-000000", ".heartbeat"),
		[]byte(`{"pid": 1, "parent_heartbeat": "", "role": "lead", "started": 1, "status": "completed"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// HOME as the container runtime sets it for distroless' nonroot user.
	env := []string{"PATH=/usr/bin:/bin", "HOME=/home/nonroot", "DISPATCHTOP_ROOT=" + root, "DISPATCHTOP_TOKEN=tok"}
	for _, e := range d.env {
		k, v, _ := strings.Cut(e, "=")
		if k == "DISPATCHTOP_LISTEN" {
			// The image's host, any free port.
			host, _, _ := strings.Cut(v, ":")
			v = host + ":0"
		}
		env = append(env, k+"="+v)
	}
	serve := exec.Command(bin, d.entrypoint[1:]...)
	serve.Env = env
	if os.Geteuid() == 0 {
		// distroless' nonroot user
		serve.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65532, Gid: 65532}}
	}
	stderr, err := serve.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { serve.Process.Kill(); serve.Wait() }()
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			t.Log(sc.Text())
			if m := regexp.MustCompile(`listening on http://\S*:(\d+) `).FindStringSubmatch(sc.Text()); m != nil {
				port <- m[1]
			}
		}
		close(port)
	}()
	var p string
	select {
	case p = <-port:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not say where it listens")
	}
	if p == "" {
		t.Fatal("serve exited before listening")
	}
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+p+"/api/v1/snapshot", nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the image's serve answered %d, want 200", resp.StatusCode)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
