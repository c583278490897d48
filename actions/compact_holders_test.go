package actions

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// twoChildRegistry writes a finished session s with a finished child a and
// a running child b, both registered; it returns the registry's path and
// b's line (the one compaction keeps).
func twoChildRegistry(t *testing.T, root string) (path, kept string) {
	t.Helper()
	writeNode(t, root, nodeSpec{dir: "s", status: "completed", age: time.Minute})
	writeNode(t, root, nodeSpec{dir: "s/a", status: "completed", parent: "s", age: time.Minute})
	writeNode(t, root, nodeSpec{dir: "s/b", status: "running", parent: "s", age: time.Minute})
	register(t, root, "s", "s/a", "a", "1", "active")
	register(t, root, "s", "s/b", "b", "2", "active")
	path = filepath.Join(root, "s", ".children")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	return path, lines[1]
}

// lateLine is a registration written through a descriptor opened before
// compaction replaced the registry.
const lateLine = `{"heartbeat":"/nowhere/late/.heartbeat","team":"t","task_id":"9","status":"active"}`

// registryLeftovers lists what compaction keeps beside the registry while
// it is not finished: the replaced file, its record, temp files.
func registryLeftovers(dir string) []string {
	left, _ := filepath.Glob(filepath.Join(dir, ".children.*"))
	return left
}

// SPEC §5.3: a process that holds the registry open for writing past the
// drain window would write into the replaced file for as long as it
// likes: compaction is refused before the rename, naming its pid and
// command, the registry is left as it was, and the refusal is journaled.
func TestCompactionRefusedWhileAWriterHoldsTheRegistryOpen(t *testing.T) {
	root := t.TempDir()
	path, _ := twoChildRegistry(t, root)
	before, _ := os.ReadFile(path)
	holder := startOpener(t, "hold", path)
	e := testEngine(root, model.Thresholds{}, Config{})
	e.drainHold = 300 * time.Millisecond
	res, err := e.Run(context.Background(), Request{Action: model.ActionCompact, Node: "s"})
	if err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(holder.Process.Pid)
	if !res.Refused || !strings.Contains(res.Message, "pid "+pid) || !strings.Contains(res.Message, helperArg+" hold") {
		t.Fatalf("compaction with pid %s holding the registry: refused %t: %q", pid, res.Refused, res.Message)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatalf("a refused compaction changed the registry:\n%s\nwas:\n%s", after, before)
	}
	js := journalFor(t, root, "s")
	if len(js) != 1 || js[0].Outcome != OutcomeRefused || !strings.Contains(js[0].Message, "pid "+pid) {
		t.Fatalf("journal: %+v", js)
	}
	if left := registryLeftovers(filepath.Dir(path)); len(left) != 0 {
		t.Fatalf("a refused compaction left %v", left)
	}
}

// SPEC §5.3: a process that opens the registry just before the rename
// (after the check) and holds it past the drain window does not lose what
// it writes later: the replaced file stays as .children.compacting, and the
// next action, of any kind, carries its lines over and removes it.
func TestCompactionHeldPastTheDrainWindowLosesNothing(t *testing.T) {
	root := t.TempDir()
	path, kept := twoChildRegistry(t, root)
	e := testEngine(root, model.Thresholds{}, Config{})
	e.drainHold = 300 * time.Millisecond
	holder := helperCmd("hold-then-append", path, lateLine)
	holdIn, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	holdOut, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	e.hook = func(step string) error {
		if step != "compact:journaled" || holder.Process != nil {
			return nil
		}
		// Checked, about to rename: a writer opens the registry now.
		if err := holder.Start(); err != nil {
			return err
		}
		if line, err := bufio.NewReader(holdOut).ReadString('\n'); err != nil || line != "open\n" {
			return errors.New("holder did not open the registry")
		}
		return nil
	}
	res, err := e.Run(context.Background(), Request{Action: model.ActionCompact, Node: "s"})
	if err != nil || res.Outcome != OutcomeDone {
		t.Fatalf("compaction: %v %s %q", err, res.Outcome, res.Message)
	}
	if !strings.Contains(res.Message, "pid "+strconv.Itoa(holder.Process.Pid)) {
		t.Fatalf("the compaction does not name the writer that held it past the drain: %q", res.Message)
	}
	// Long after the drain gave up, the writer writes and closes.
	if _, err := holdIn.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	if err := holder.Wait(); err != nil {
		t.Fatalf("holder: %v", err)
	}
	e.hook = nil
	// The next action: a kill the finished node refuses, which still
	// finishes the compaction first.
	if _, err := e.Run(context.Background(), Request{Action: model.ActionKill, Node: "s"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != kept+"\n"+lateLine+"\n" {
		t.Fatalf("registry after the next action:\n%s\nwant:\n%s", got, kept+"\n"+lateLine+"\n")
	}
	if left := registryLeftovers(filepath.Dir(path)); len(left) != 0 {
		t.Fatalf("left after the next action: %v", left)
	}
}

// SPEC §5.3, §9: a compaction killed after its rename leaves the replaced
// registry as .children.compacting; the next action, of any kind, carries
// over what it holds exactly once (also when the kill came after the last
// carry, before the removal) and removes it.
func TestAnOrphanedCompactionIsFinishedByTheNextActionOfAnyKind(t *testing.T) {
	errKilled := errors.New("killed")
	for _, step := range []string{"compact:renamed", "compact:drained"} {
		t.Run(step, func(t *testing.T) {
			root := t.TempDir()
			path, kept := twoChildRegistry(t, root)
			e := testEngine(root, model.Thresholds{}, Config{})
			var early *os.File // an appender that opens the registry just before the rename
			t.Cleanup(func() {
				if early != nil {
					early.Close()
				}
			})
			e.hook = func(s string) error {
				if s == "compact:journaled" {
					var err error
					if early, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0); err != nil {
						return err
					}
				}
				if s == "compact:renamed" {
					if _, err := early.Write([]byte(lateLine + "\n")); err != nil {
						return err
					}
					if err := early.Close(); err != nil {
						return err
					}
				}
				if s == step {
					return errKilled
				}
				return nil
			}
			if _, err := e.Run(context.Background(), Request{Action: model.ActionCompact, Node: "s"}); !errors.Is(err, errKilled) {
				t.Fatalf("compaction did not stop at %s: %v", step, err)
			}
			if _, err := os.Lstat(path + ".compacting"); err != nil {
				t.Fatalf("a compaction killed at %s left no replaced registry to finish from: %v", step, err)
			}
			e.hook = nil
			if _, err := e.Run(context.Background(), Request{Action: model.ActionKill, Node: "s"}); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); string(got) != kept+"\n"+lateLine+"\n" {
				t.Fatalf("registry after the next action:\n%s\nwant:\n%s", got, kept+"\n"+lateLine+"\n")
			}
			if left := registryLeftovers(filepath.Dir(path)); len(left) != 0 {
				t.Fatalf("left after the next action: %v", left)
			}
			// Recovery is idempotent: another action changes nothing.
			if _, err := e.Run(context.Background(), Request{Action: model.ActionKill, Node: "s"}); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); string(got) != kept+"\n"+lateLine+"\n" {
				t.Fatalf("registry after a second action:\n%s", got)
			}
		})
	}
}
