package actions

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// helperArg makes the test binary act as a helper process: the first
// argument names the helper, the rest are its arguments.
const helperArg = "dispatchtop-actions-helper"

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == helperArg {
		os.Exit(runHelper(os.Args[2], os.Args[3:]))
	}
	os.Exit(m.Run())
}

// runHelper is the body of a helper process.
func runHelper(mode string, args []string) int {
	switch mode {
	case "sleep": // sleep until killed
		time.Sleep(time.Hour)
	case "sleep-ignore-term": // sleep, ignoring SIGTERM: only SIGKILL ends it
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Hour)
	case "spawn": // spawn N sleeping children, write their pids to a file, sleep
		n, _ := strconv.Atoi(args[1])
		var pids []string
		for i := 0; i < n; i++ {
			c := exec.Command(os.Args[0], helperArg, "sleep")
			if err := c.Start(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 3
			}
			go func() { _ = c.Wait() }()
			pids = append(pids, strconv.Itoa(c.Process.Pid))
		}
		if err := os.WriteFile(args[0], []byte(strings.Join(pids, " ")), 0o644); err != nil {
			return 3
		}
		time.Sleep(time.Hour)
	case "argv": // append this process's arguments as one JSON line to a file
		b, _ := json.Marshal(args[1:])
		f, err := os.OpenFile(args[0], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return 3
		}
		defer f.Close()
		if _, err := f.Write(append(b, '\n')); err != nil {
			return 3
		}
	case "cwd": // as argv, its working directory first
		wd, _ := os.Getwd()
		b, _ := json.Marshal(append([]string{wd}, args[1:]...))
		f, err := os.OpenFile(args[0], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return 3
		}
		defer f.Close()
		if _, err := f.Write(append(b, '\n')); err != nil {
			return 3
		}
	case "fail":
		fmt.Fprintln(os.Stderr, "merge failed on purpose")
		return 1
	case "append": // append N registry lines, TeaParty-style: open, write, close
		path, prefix := args[0], args[1]
		n, _ := strconv.Atoi(args[2])
		for i := 0; i < n; i++ {
			status := "active"
			if i%3 == 0 {
				status = "drop"
			}
			line := fmt.Sprintf(`{"heartbeat":"/nowhere/%s-%06d/.heartbeat","team":"t","task_id":"%d","status":%q}`+"\n", prefix, i, i, status)
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 3
			}
			if _, err := f.Write([]byte(line)); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 3
			}
			f.Close()
			if i%10 == 9 {
				time.Sleep(time.Millisecond) // an agent fleet, not a tight loop
			}
		}
	case "append-late", "hold": // open the registry for appending, say so; then
		// append-late: once it was renamed over, wait, append one line
		// hold: keep it open and write nothing
		path := args[0]
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		fmt.Println("open")
		if mode == "hold" {
			time.Sleep(time.Hour)
		}
		delay, _ := time.ParseDuration(args[1])
		mine, err := f.Stat()
		if err != nil {
			return 3
		}
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
			if st, err := os.Stat(path); err == nil && !os.SameFile(st, mine) {
				break
			}
			if time.Now().After(deadline) {
				fmt.Fprintln(os.Stderr, "never renamed over")
				return 4
			}
		}
		time.Sleep(delay)
		if _, err := f.Write([]byte(args[2] + "\n")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		f.Close()
	case "append-until-eof": // append registry lines as "append" does until stdin closes; say how many
		path, prefix := args[0], args[1]
		var stop atomic.Bool
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			stop.Store(true)
		}()
		n := 0
		for ; !stop.Load(); n++ {
			line := fmt.Sprintf(`{"heartbeat":"/nowhere/%s-%06d/.heartbeat","team":"t","task_id":"%d","status":"active"}`+"\n", prefix, n, n)
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 3
			}
			if _, err := f.Write([]byte(line)); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 3
			}
			f.Close()
			if n%10 == 9 {
				time.Sleep(time.Millisecond) // an agent fleet, not a tight loop
			}
		}
		fmt.Println(n)
	case "hold-then-append": // open the registry for appending, say so; on a line from stdin append one line and exit
		f, err := os.OpenFile(args[0], os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		fmt.Println("open")
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		if _, err := f.Write([]byte(args[1] + "\n")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		f.Close()
	case "compact-interrupted": // compact a registry as the cli does, until SIGINT/SIGTERM/SIGHUP
		return compactUntilSignalled(args[0])
	case "resume": // run one resume through a fresh engine: root node argv...
		root, node := args[0], args[1]
		e := New(EngineOptions{Scan: scanner.Options{Roots: []string{root}}, Config: Config{Resume: CommandConfig{Argv: args[2:]}}})
		res, err := e.Run(context.Background(), Request{Action: model.ActionResume, Node: node})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		fmt.Println(res.Outcome + ": " + res.Message)
	default:
		fmt.Fprintln(os.Stderr, "unknown helper", mode)
		return 2
	}
	return 0
}

// helperCmd is a command that runs the test binary as the named helper.
func helperCmd(mode string, args ...string) *exec.Cmd {
	return exec.Command(os.Args[0], append([]string{helperArg, mode}, args...)...)
}

// helperArgv is the argv of a helper, for configs.
func helperArgv(mode string, args ...string) []string {
	return append([]string{os.Args[0], helperArg, mode}, args...)
}

// startHelper starts a helper and reaps it when the test ends.
func startHelper(t *testing.T, mode string, args ...string) *exec.Cmd {
	t.Helper()
	c := helperCmd(mode, args...)
	if err := c.Start(); err != nil {
		t.Fatalf("start helper %s: %v", mode, err)
	}
	done := make(chan struct{})
	go func() { _ = c.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = c.Process.Kill()
		<-done
	})
	return c
}

// nodeSpec describes one infra dir of a fixture tree.
type nodeSpec struct {
	dir     string // relative to the root
	pid     int
	started float64
	status  string
	parent  string // relative dir of the parent ("" for a session)
	age     time.Duration
	cfa     string
	extra   map[string]any
}

// writeNode writes an infra dir with its heartbeat (and CfA state).
func writeNode(t *testing.T, root string, s nodeSpec) string {
	t.Helper()
	infra := filepath.Join(root, s.dir)
	if err := os.MkdirAll(infra, 0o755); err != nil {
		t.Fatal(err)
	}
	hb := map[string]any{"pid": s.pid, "parent_heartbeat": "", "role": "worker", "started": s.started, "status": s.status}
	if s.parent != "" {
		hb["parent_heartbeat"] = filepath.Join(root, s.parent, ".heartbeat")
	}
	for k, v := range s.extra {
		hb[k] = v
	}
	writeJSON(t, filepath.Join(infra, ".heartbeat"), hb)
	if s.cfa != "" {
		writeJSON(t, filepath.Join(infra, ".cfa-state.json"), map[string]any{"state": s.cfa, "history": []any{}, "backtrack_count": 0, "task_id": "t1"})
	}
	if s.age > 0 {
		age(t, filepath.Join(infra, ".heartbeat"), s.age)
	}
	return infra
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// age sets a file's mtime d in the past.
func age(t *testing.T, path string, d time.Duration) {
	t.Helper()
	when := time.Now().Add(-d)
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
}

// register appends a registry line for child to the parent's .children.
func register(t *testing.T, root, parent, child, team, taskID, status string) {
	t.Helper()
	line, _ := json.Marshal(map[string]any{"heartbeat": filepath.Join(root, child, ".heartbeat"), "team": team, "task_id": taskID, "status": status})
	f, err := os.OpenFile(filepath.Join(root, parent, ".children"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
}

// testEngine is an engine over root with thresholds th (defaults when zero).
func testEngine(root string, th model.Thresholds, cfg Config) *Engine {
	if th == (model.Thresholds{}) {
		th = model.DefaultThresholds()
	}
	return New(EngineOptions{Scan: scanner.Options{Roots: []string{root}, Thresholds: th}, Config: cfg})
}

// treeHash hashes every file's path, mode, size, mtime and content under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum := ""
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		lines = append(lines, fmt.Sprintf("%s %v %d %d %s", p, info.Mode(), info.Size(), info.ModTime().UnixNano(), sum))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return fmt.Sprintf("%x", sha256.Sum256([]byte(strings.Join(lines, "\n"))))
}

// journalFor reads root's journal lines for node.
func journalFor(t *testing.T, root, node string) []JournalEntry {
	t.Helper()
	js, err := ReadJournal(root, node)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// waitFor polls cond until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cond()
}
