package protocol

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// helperArg makes the test binary act as a helper process.
const helperArg = "dispatchtop-protocol-helper"

func TestMain(m *testing.M) {
	if len(os.Args) > 3 && os.Args[1] == helperArg {
		os.Exit(runHelper(os.Args[2], os.Args[3:]))
	}
	os.Exit(m.Run())
}

// runHelper is the body of a helper process.
func runHelper(mode string, args []string) int {
	flag := os.O_RDONLY
	if mode == "write" {
		flag = os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(args[0], flag, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer f.Close()
	fmt.Println("open")
	time.Sleep(time.Hour)
	return 0
}

// holder starts a helper that opens path (for writing, or for reading)
// and keeps it open until the test ends.
func holder(t *testing.T, mode, path string) *exec.Cmd {
	t.Helper()
	c := exec.Command(os.Args[0], helperArg, mode, path)
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "open\n" {
		t.Fatalf("helper %s: %q %v", mode, line, err)
	}
	return c
}

// line is registry line i.
func line(i int) string {
	return fmt.Sprintf(`{"heartbeat":"/nowhere/%03d/.heartbeat","team":"t","task_id":"%d","status":"active"}`, i, i) + "\n"
}

func lines(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		b.WriteString(line(i))
	}
	return b.String()
}

// compaction is a registry replaced by Replace: the rewritten file keeps
// lines 1-2 of the original 0-2 (line 0 dropped).
type compaction struct {
	dir, path string
	old       *os.File // opened before the rename, for appending: an appender that did
	h         *Handover
}

func replaced(t *testing.T, step func(string) error) *compaction {
	t.Helper()
	c := &compaction{dir: t.TempDir()}
	c.path = filepath.Join(c.dir, RegistryFile)
	if err := os.WriteFile(c.path, []byte(lines(0, 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	read, err := os.Open(c.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { read.Close() })
	if c.old, err = os.OpenFile(c.path, os.O_WRONLY|os.O_APPEND, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.old.Close() })
	tmpName := c.path + ".tmp"
	tmp, err := os.OpenFile(tmpName, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tmp.Close() })
	if _, err := tmp.WriteString(lines(1, 3)); err != nil {
		t.Fatal(err)
	}
	if c.h, err = Replace(c.dir, read, tmp, tmpName, int64(len(lines(0, 3))), step); err != nil {
		t.Fatal(err)
	}
	return c
}

// appendOld appends lines [from, to) to the replaced file, as an appender
// that opened the registry before the rename does.
func (c *compaction) appendOld(t *testing.T, from, to int) {
	t.Helper()
	if _, err := c.old.WriteString(lines(from, to)); err != nil {
		t.Fatal(err)
	}
}

// appendNew appends a line to the registry, as an appender that opened it
// after the rename does.
func (c *compaction) appendNew(t *testing.T, s string) {
	t.Helper()
	f, err := os.OpenFile(c.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// countLines reports each registry line with how often the file holds it.
func countLines(t *testing.T, path string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l != "" {
			seen[l]++
		}
	}
	return seen
}

// wantEachOnce fails unless the registry holds exactly lines [from, to)
// and extra, each once.
func wantEachOnce(t *testing.T, path string, from, to int, extra ...string) {
	t.Helper()
	seen := countLines(t, path)
	want := map[string]int{}
	for i := from; i < to; i++ {
		want[line(i)] = 1
	}
	for _, e := range extra {
		want[e] = 1
	}
	for l, k := range seen {
		if want[l] != k {
			b, _ := os.ReadFile(path)
			t.Fatalf("%s holds %q %d times, want %d:\n%s", path, l, k, want[l], b)
		}
	}
	for l := range want {
		if seen[l] == 0 {
			b, _ := os.ReadFile(path)
			t.Fatalf("%s lost %q:\n%s", path, l, b)
		}
	}
}

// leftovers lists what the compaction left beside the registry.
func leftovers(dir string) []string {
	left, _ := filepath.Glob(filepath.Join(dir, RegistryFile+".*"))
	return left
}

// SPEC §5.3: how far an announced carry got is read from the registry's
// content, and only for that one write: whole after From, it happened;
// nowhere, it did not; cut by a kill (at a page boundary of the file), it
// goes on from the cut when the cut ends the registry, else from the start
// of the cut line. A copy of a line another writer appended does not count.
func TestResolveFindsAnAnnouncedCarry(t *testing.T) {
	chunk := []byte(lines(10, 13)) // three lines, announced at old[100:100+len]
	rec := record{Ino: 1, Carried: 100, End: 50, Carrying: 100 + int64(len(chunk)), From: 60}
	pad := func(n int) []byte { return []byte(strings.Repeat("x", n-1) + "\n") } // a foreign line of n bytes
	at := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	firstTwo := len(line(10)) + len(line(11))
	cutAt := firstTwo + 7 // inside the third line
	tests := []struct {
		name  string
		rec   record
		hay   []byte // the registry from From on
		size  int64  // the registry's size as read
		want  int64
		stale bool
	}{
		{name: "nothing announced: the record says it", rec: record{Ino: 1, Carried: 100, End: 50},
			size: 50, want: 100},
		{name: "read before the last carry ended: read on", rec: record{Ino: 1, Carried: 100, End: 90},
			size: 80, stale: true},
		{name: "announced and written", rec: rec, hay: at(pad(30), chunk, pad(10)),
			size: 60 + int64(30+len(chunk)+10), want: rec.Carrying},
		{name: "announced, not written", rec: rec, hay: at(pad(30)), size: 90, want: 100},
		{name: "announced, not written; another writer appended a copy of its first line", rec: rec,
			hay: at(pad(30), []byte(line(10))), size: 60 + int64(30+len(line(10))), want: 100},
		{name: "cut by a kill at a page boundary, at the end: the rest completes it", rec: rec,
			hay: at(pad(pageSize-60-cutAt), chunk[:cutAt]), size: pageSize, want: 100 + int64(cutAt)},
		{name: "cut by a kill at a page boundary, others wrote after it: the cut line again", rec: rec,
			hay: at(pad(pageSize-60-cutAt), chunk[:cutAt], pad(20)), size: pageSize + 20, want: 100 + int64(firstTwo)},
		{name: "the same bytes ending off a page boundary are no cut", rec: rec,
			hay: at(pad(pageSize-60-cutAt+1), chunk[:cutAt]), size: pageSize + 1, want: 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, stale := tc.rec.resolve(chunk, tc.hay, tc.size)
			if stale != tc.stale || !tc.stale && got != tc.want {
				t.Fatalf("resolve = %d, stale %t; want %d, stale %t", got, stale, tc.want, tc.stale)
			}
		})
	}
}

// SPEC §5.3: a compaction killed at any step of a carry, or between the
// removal of the replaced registry and of its record, is finished by the
// next recovery with every line once; recovering again changes nothing.
func TestRecoverAfterAKillAtEveryStepCarriesEachLineOnce(t *testing.T) {
	errKilled := errors.New("killed")
	for _, step := range []string{"compact:recorded", "compact:linked", "carry:announced", "carry:written", "compact:unlinked"} {
		t.Run(step, func(t *testing.T) {
			kill := func(s string) error {
				if s == step {
					return errKilled
				}
				return nil
			}
			var c *compaction
			if step == "compact:recorded" || step == "compact:linked" {
				// Killed before the rename: the registry is as it was.
				dir := t.TempDir()
				path := filepath.Join(dir, RegistryFile)
				if err := os.WriteFile(path, []byte(lines(0, 3)), 0o644); err != nil {
					t.Fatal(err)
				}
				read, _ := os.Open(path)
				defer read.Close()
				tmp, _ := os.OpenFile(path+".tmp", os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
				defer tmp.Close()
				tmp.WriteString(lines(1, 3))
				if _, err := Replace(dir, read, tmp, path+".tmp", int64(len(lines(0, 3))), kill); !errors.Is(err, errKilled) {
					t.Fatalf("Replace: %v", err)
				}
				if _, err := RecoverLocked(dir); err != nil {
					t.Fatal(err)
				}
				wantEachOnce(t, path, 0, 3)
				os.Remove(path + ".tmp")
				if left := leftovers(dir); len(left) != 0 {
					t.Fatalf("left: %v", left)
				}
				return
			}
			c = replaced(t, kill)
			c.appendOld(t, 3, 6)
			c.appendNew(t, line(100))
			var err error
			if step == "compact:unlinked" {
				if _, err = c.h.Carry(true); err == nil {
					err = c.h.Finish()
				}
			} else {
				_, err = c.h.Carry(false)
			}
			if !errors.Is(err, errKilled) {
				t.Fatalf("not killed at %s: %v", step, err)
			}
			c.appendNew(t, line(101))
			c.old.Close() // the appender is done
			for i := 0; i < 2; i++ {
				if _, err := RecoverLocked(c.dir); err != nil {
					t.Fatal(err)
				}
				wantEachOnce(t, c.path, 1, 6, line(100), line(101))
				if left := leftovers(c.dir); len(left) != 0 {
					t.Fatalf("left after recovery %d: %v", i+1, left)
				}
			}
		})
	}
}

// SPEC §5.3: recovery carries what it can while a process holds the
// replaced registry open for writing and leaves it, naming the process;
// once it closes, the next recovery finishes. A live compaction's lock
// makes a recovery step back.
func TestRecoverLeavesAHeldReplacedRegistry(t *testing.T) {
	c := replaced(t, nil)
	c.appendOld(t, 3, 5)
	c.old.Close()
	w := holder(t, "write", filepath.Join(c.dir, CompactingFile))
	unlock, err := LockDir(c.dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Recover(c.dir); err != nil || !got.Busy {
		t.Fatalf("Recover under a live compaction's lock: %+v %v", got, err)
	}
	unlock()
	got, err := Recover(c.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Holders) != 1 || got.Holders[0].PID != w.Process.Pid || !strings.Contains(got.Holders[0].Command, helperArg+" write") {
		t.Fatalf("holders %+v, want pid %d", got.Holders, w.Process.Pid)
	}
	wantEachOnce(t, c.path, 1, 5)
	if _, err := os.Lstat(filepath.Join(c.dir, CompactingFile)); err != nil {
		t.Fatalf("a held replaced registry was removed: %v", err)
	}
	_ = w.Process.Kill()
	_ = w.Wait()
	// What the holder wrote last, before it closed.
	last, err := os.OpenFile(filepath.Join(c.dir, CompactingFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	last.WriteString(line(5))
	last.Close()
	if _, err := Recover(c.dir); err != nil {
		t.Fatal(err)
	}
	wantEachOnce(t, c.path, 1, 6)
	if left := leftovers(c.dir); len(left) != 0 {
		t.Fatalf("left: %v", left)
	}
}

// SPEC §5.3: Holders names a process that holds the registry open for
// writing, with its command, and not one that only reads it.
func TestHoldersAreWritersOnly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, RegistryFile)
	if err := os.WriteFile(path, []byte(line(0)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := holder(t, "read", path)
	w := holder(t, "write", path)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	got := Holders(fi)
	if len(got) != 1 || got[0].PID != w.Process.Pid {
		t.Fatalf("holders %+v; want the writer %d only (reader %d)", got, w.Process.Pid, r.Process.Pid)
	}
	if words := HolderWords(got); !strings.Contains(words, fmt.Sprintf("pid %d (", w.Process.Pid)) || !strings.Contains(words, helperArg+" write ") {
		t.Fatalf("HolderWords = %q", words)
	}
}

// SPEC §5.3: while the replaced registry exists a reader sees the registry
// and then the lines not carried yet, each once, at every step of a carry:
// announced, written, recorded. The view writes nothing.
func TestReadViewShowsEachLineOnceAtEveryStepOfACarry(t *testing.T) {
	for _, step := range []string{"", "carry:announced", "carry:written"} {
		t.Run("stopped at "+step, func(t *testing.T) {
			stop := errors.New("stopped")
			c := replaced(t, func(s string) error {
				if s == step {
					return stop
				}
				return nil
			})
			c.appendNew(t, line(100))
			c.appendOld(t, 3, 6)
			if _, err := c.h.Carry(false); step != "" && !errors.Is(err, stop) || step == "" && err != nil {
				t.Fatalf("carry: %v", err)
			}
			c.appendNew(t, line(101))
			c.appendOld(t, 6, 7)
			c.old.WriteString(`{"heartbeat":"/nowhere/to`) // a torn tail: an append in flight
			record, _ := os.ReadFile(filepath.Join(c.dir, CarriedFile))
			v, err := ReadView(c.dir, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			view := string(v.Registry) + string(v.Pending)
			seen := map[string]int{}
			for _, l := range strings.SplitAfter(view, "\n") {
				seen[l]++
			}
			for _, l := range []string{line(1), line(2), line(3), line(4), line(5), line(6), line(100), line(101)} {
				if seen[l] != 1 {
					t.Fatalf("the view holds %q %d times:\n%s", l, seen[l], view)
				}
			}
			if !strings.HasSuffix(view, `{"heartbeat":"/nowhere/to`) || seen[line(0)] != 0 {
				t.Fatalf("view:\n%s", view)
			}
			if after, _ := os.ReadFile(filepath.Join(c.dir, CarriedFile)); string(after) != string(record) {
				t.Fatalf("ReadView changed the record: %s, was %s", after, record)
			}
		})
	}
}
