package scanner

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// SPEC §9, read side: bad input never crashes; each case becomes a node
// flag or a problem with a clear message.
func TestBadInput(t *testing.T) {
	now := time.Now()
	big := strings.Repeat("x", 10<<20)
	tests := []struct {
		name  string
		build func(t *testing.T, root string)
		opts  func(root string) Options
		check func(t *testing.T, root string, snap *model.Snapshot)
	}{
		{name: "empty heartbeat", build: func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "S", protocol.HeartbeatFile), "", now, 0)
		}, check: unreadableWith("S", protocol.HeartbeatFile, "empty file")},
		{name: "{} heartbeat parses, nothing to flag", build: func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "S", protocol.HeartbeatFile), "{}", now, 0)
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			if n := mustNode(t, snap, "S"); n.Heartbeat == nil || n.PID() != 0 || len(n.Problems()) != 0 {
				t.Errorf("node = %+v", n)
			}
		}},
		{name: "truncated heartbeat", build: func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "S", protocol.HeartbeatFile), `{"pid": 12, "sta`, now, 0)
		}, check: unreadableWith("S", protocol.HeartbeatFile, "not a JSON object")},
		{name: "binary heartbeat", build: func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "S", protocol.HeartbeatFile), "\x00\x01\xff\xfe", now, 0)
		}, check: unreadableWith("S", protocol.HeartbeatFile, "not a JSON object")},
		{name: "10 MiB heartbeat is capped, its mtime still counts", build: func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "S", protocol.HeartbeatFile), big, now, 0)
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			unreadableWith("S", protocol.HeartbeatFile, "file larger than 1 MiB")(t, root, snap)
			if n := mustNode(t, snap, "S"); n.BeatMtime.IsZero() || n.HeartbeatRaw() != nil {
				t.Errorf("node mtime %v raw %d bytes", n.BeatMtime, len(n.HeartbeatRaw()))
			}
		}},
		{name: "10 MiB CfA, blocked and retry files are capped", build: func(t *testing.T, root string) {
			node(t, root, "S", "")
			for _, f := range []string{protocol.CfaFile, protocol.BlockedFile, protocol.RetryCountFile} {
				writeFile(t, filepath.Join(root, "S", f), big, now, 0)
			}
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			n := mustNode(t, snap, "S")
			for _, f := range []string{protocol.CfaFile, protocol.BlockedFile, protocol.RetryCountFile} {
				if !hasProblem(n.Problems(), f, "file larger than 1 MiB") {
					t.Errorf("%s: problems %v", f, n.Problems())
				}
			}
			if n.Blocked == nil || !n.HasScanFlag(model.FlagUnreadable) {
				t.Errorf("an oversized blocked sentinel still counts: %+v", n.Blocked)
			}
		}},
		{name: "wrong type pid", build: func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "S", protocol.HeartbeatFile), `{"pid": "abc"}`, now, 0)
		}, check: unreadableWith("S", protocol.HeartbeatFile, `field "pid": want an integer, got "abc"`)},
		{name: "negative pid", build: func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "S", protocol.HeartbeatFile), `{"pid": -42, "status": "running"}`, now, 0)
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			unreadableWith("S", protocol.HeartbeatFile, "negative pid -42")(t, root, snap)
			if n := mustNode(t, snap, "S"); n.PID() != 0 {
				t.Errorf("pid = %d reached the node", n.PID())
			}
		}},
		{name: "pid 0 and pid 1 are read as written", build: func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "zero", protocol.HeartbeatFile), heartbeat(0, "", "running"), now, 0)
			writeFile(t, filepath.Join(root, "one", protocol.HeartbeatFile), heartbeat(1, "", "running"), now, 0)
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			if z, o := mustNode(t, snap, "zero"), mustNode(t, snap, "one"); z.PID() != 0 || o.PID() != 1 || len(z.Problems())+len(o.Problems()) != 0 {
				t.Errorf("zero %d one %d problems %v %v", z.PID(), o.PID(), z.Problems(), o.Problems())
			}
		}},
		{name: "negative legacy pid", build: func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "old", protocol.RunningFile), "-3\n", now, 0)
		}, check: unreadableWith("old", protocol.RunningFile, "negative pid -3")},
		{name: "CRLF registry lines", build: func(t *testing.T, root string) {
			node(t, root, "A", "")
			workerHeartbeat(t, root, "B")
			reg := strings.ReplaceAll(registry(filepath.Join(root, "B", protocol.HeartbeatFile)), "\n", "\r\n")
			writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), reg, now, 0)
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			if b := mustNode(t, snap, "B"); b.ParentID != "A" || len(mustNode(t, snap, "A").Problems()) != 0 {
				t.Errorf("B parent %q", b.ParentID)
			}
		}},
		{name: "torn last registry line is not a problem", build: func(t *testing.T, root string) {
			node(t, root, "A", "")
			writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), `{"heartbeat": "x/.hea`, now, 0)
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			a := mustNode(t, snap, "A")
			if len(a.RegistryLines()) != 1 || !a.RegistryLines()[0].Torn || len(a.Problems()) != 0 || snap.NodeCount() != 1 {
				t.Errorf("A = %+v", a)
			}
		}},
		{name: "garbage registry lines are one problem", build: func(t *testing.T, root string) {
			node(t, root, "A", "")
			writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), "garbage\n\x00\xff\n"+registry("b/.heartbeat"), now, 0)
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			a := mustNode(t, snap, "A")
			if len(a.Problems()) != 1 || !strings.Contains(a.Problems()[0].Error, "2 unparseable lines, first line 1") {
				t.Errorf("problems = %v", a.Problems())
			}
			if mustNode(t, snap, "A/b").ParentID != "A" {
				t.Error("the good line was lost")
			}
		}},
		{name: "100,000-line registry", build: func(t *testing.T, root string) {
			node(t, root, "A", "")
			var sb strings.Builder
			for i := range 100_000 {
				fmt.Fprintf(&sb, `{"heartbeat": "c/%d/.heartbeat", "team": "t", "task_id": null, "status": "completed"}`+"\n", i)
			}
			writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), sb.String(), now, 0)
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			a := mustNode(t, snap, "A")
			if len(a.RegistryLines()) != 100_000 || len(a.Children) != 100_000 || a.RegistryLines()[99_999].Number != 100_000 {
				t.Errorf("registry %d lines, %d children", len(a.RegistryLines()), len(a.Children))
			}
		}},
		{name: "10 MiB registry of garbage and long lines: each line capped, one problem", build: func(t *testing.T, root string) {
			node(t, root, "A", "")
			var sb strings.Builder
			sb.WriteString(registry("b/.heartbeat"))
			for sb.Len() < 8<<20 {
				sb.WriteString(strings.Repeat("y", 1<<20) + "\n") // far over the 4 KiB a line is promised
			}
			for sb.Len() < 10<<20 {
				sb.WriteString("garbage\x00\xff\n")
			}
			writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), sb.String(), now, 0)
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			a := mustNode(t, snap, "A")
			for _, l := range a.RegistryLines() {
				if len(l.Raw) > protocol.MaxRegistryLine {
					t.Fatalf("line %d held whole: %d bytes", l.Number, len(l.Raw))
				}
			}
			if !hasProblem(a.Problems(), protocol.RegistryFile, "unparseable lines, first line 2: line longer than") || len(a.Problems()) != 1 {
				t.Errorf("problems = %v", a.Problems())
			}
			if mustNode(t, snap, "A/b").ParentID != "A" {
				t.Error("the good line was lost")
			}
		}},
		{name: "a registry past the read budget is read up to it and says so", build: func(t *testing.T, root string) {
			node(t, root, "A", "")
			path := filepath.Join(root, "A", protocol.RegistryFile)
			writeFile(t, path, registry("b/.heartbeat"), now, 0)
			// Sparse: a gigabyte of NULs with no newline, costing no disk.
			if err := os.Truncate(path, 1<<30); err != nil {
				t.Fatal(err)
			}
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			a := mustNode(t, snap, "A")
			if !hasProblem(a.Problems(), protocol.RegistryFile, "read stopped after 1 line") || !a.HasScanFlag(model.FlagUnreadable) {
				t.Errorf("problems = %v", a.Problems())
			}
			if len(a.RegistryLines()) != 1 || mustNode(t, snap, "A/b").ParentID != "A" {
				t.Errorf("registry %d lines", len(a.RegistryLines()))
			}
		}},
		{name: "heartbeat symlinked out of the root is not read", build: func(t *testing.T, root string) {
			out := filepath.Join(t.TempDir(), "secret")
			writeFile(t, out, heartbeat(os.Getpid(), "", "running"), now, 0)
			if err := os.MkdirAll(filepath.Join(root, "S"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(out, filepath.Join(root, "S", protocol.HeartbeatFile)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(out, filepath.Join(root, "S", protocol.CfaFile)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(out, filepath.Join(root, "S", protocol.BlockedFile)); err != nil {
				t.Fatal(err)
			}
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			unreadableWith("S", protocol.HeartbeatFile, "symlink leads outside the root")(t, root, snap)
			unreadableWith("S", protocol.CfaFile, "symlink leads outside the root")(t, root, snap)
			if n := mustNode(t, snap, "S"); n.Heartbeat != nil || n.HeartbeatRaw() != nil || !n.HasHeartbeat || n.Cfa != nil {
				t.Errorf("node read the outside file: %+v", n)
			}
			if n := mustNode(t, snap, "S"); n.Blocked == nil || n.Blocked.Question != "" {
				t.Errorf("an outside blocked sentinel still counts, unread: %+v", n.Blocked)
			}
		}},
		{name: ".middle/blocked.json symlinked out of the root counts, unread", build: func(t *testing.T, root string) {
			out := filepath.Join(t.TempDir(), "secret")
			writeFile(t, out, `{"question": "the secret"}`, now, 0)
			node(t, root, "S", "")
			if err := os.MkdirAll(filepath.Join(root, "S", protocol.MiddleDir), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(out, filepath.Join(root, "S", protocol.MiddleDir, protocol.BlockedFile)); err != nil {
				t.Fatal(err)
			}
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			unreadableWith("S", filepath.Join(protocol.MiddleDir, protocol.BlockedFile), "symlink leads outside the root")(t, root, snap)
			if n := mustNode(t, snap, "S"); n.Blocked == nil || n.Blocked.Question != "" {
				t.Errorf("an outside blocked sentinel still counts, unread: %+v", n.Blocked)
			}
		}},
		{name: ".middle/blocked.json symlinked inside the root is read", build: func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "shared", "q.json"), `{"question": "which db?"}`, now, 0)
			node(t, root, "S", "")
			if err := os.MkdirAll(filepath.Join(root, "S", protocol.MiddleDir), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../../shared/q.json", filepath.Join(root, "S", protocol.MiddleDir, protocol.BlockedFile)); err != nil {
				t.Fatal(err)
			}
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			if n := mustNode(t, snap, "S"); n.Blocked == nil || n.Blocked.Question != "which db?" || len(n.Problems()) != 0 {
				t.Errorf("blocked %+v problems %v", n.Blocked, n.Problems())
			}
		}},
		{name: "heartbeat symlinked to a device is refused", build: func(t *testing.T, root string) {
			if err := os.MkdirAll(filepath.Join(root, "S"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/dev/zero", filepath.Join(root, "S", protocol.HeartbeatFile)); err != nil {
				t.Fatal(err)
			}
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			// With "/" as the root /dev/zero is inside it: the type check,
			// not the containment check, must refuse it.
			n, err := ReadNodeDir("/", filepath.Join(root, "S"))
			if err != nil || !hasProblem(n.Problems(), protocol.HeartbeatFile, "not a regular file") {
				t.Errorf("node %+v, %v", n, err)
			}
		}},
		{name: "heartbeat symlinked inside the root is read", build: func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "shared", "hb.json"), heartbeat(7, "", "running"), now, 0)
			if err := os.MkdirAll(filepath.Join(root, "S"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../shared/hb.json", filepath.Join(root, "S", protocol.HeartbeatFile)); err != nil {
				t.Fatal(err)
			}
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			if n := mustNode(t, snap, "S"); n.PID() != 7 || len(n.Problems()) != 0 {
				t.Errorf("node = %+v", n)
			}
		}},
		{name: "heartbeat that is a FIFO does not block the scan", build: func(t *testing.T, root string) {
			if err := os.MkdirAll(filepath.Join(root, "S"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(filepath.Join(root, "S", protocol.HeartbeatFile), 0o644); err != nil {
				t.Fatal(err)
			}
		}, check: unreadableWith("S", protocol.HeartbeatFile, "not a regular file")},
		{name: "symlink loop as a heartbeat", build: func(t *testing.T, root string) {
			if err := os.MkdirAll(filepath.Join(root, "S"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(protocol.HeartbeatFile, filepath.Join(root, "S", protocol.HeartbeatFile)); err != nil {
				t.Fatal(err)
			}
		}, check: unreadableWith("S", protocol.HeartbeatFile, "too many levels of symbolic links")},
		{name: "registry entry through a symlink loop is outside every root", build: func(t *testing.T, root string) {
			node(t, root, "A", "")
			if err := os.Symlink("loop", filepath.Join(root, "loop")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(root, "A", protocol.RegistryFile), registry(filepath.Join(root, "loop/x/.heartbeat")), now, 0)
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			a := mustNode(t, snap, "A")
			if len(a.Children) != 1 || !a.Children[0].HasScanFlag(model.FlagOutsideRoot) {
				t.Errorf("children = %v", a.Children)
			}
		}},
		{name: "unreadable directory is a problem", build: func(t *testing.T, root string) {
			node(t, root, "S", "")
			node(t, root, "locked/N", "")
		}, opts: func(root string) Options {
			// Root reads any directory, so the permission error is injected.
			locked := filepath.Join(root, "locked")
			return Options{readDir: func(dir string) ([]fs.DirEntry, error) {
				if dir == locked {
					return nil, &fs.PathError{Op: "open", Path: dir, Err: syscall.EACCES}
				}
				return os.ReadDir(dir)
			}}
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			if !hasProblem(snap.Problems, "locked", "read directory: open "+filepath.Join(root, "locked")+": permission denied") {
				t.Errorf("problems = %v", snap.Problems)
			}
			if snap.NodeCount() != 1 {
				t.Errorf("nodes = %v", ids(snap))
			}
		}},
		{name: "session deleted during the scan is skipped quietly", build: func(t *testing.T, root string) {
			node(t, root, "S", "")
			node(t, root, "gone", "")
			node(t, root, "gone/team/W", "")
		}, opts: func(root string) Options {
			gone := filepath.Join(root, "gone")
			return Options{readDir: func(dir string) ([]fs.DirEntry, error) {
				entries, err := os.ReadDir(dir)
				if dir == gone {
					// Listed, then removed before its files are read.
					if rerr := os.RemoveAll(gone); rerr != nil {
						return nil, rerr
					}
				}
				return entries, err
			}}
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			if got := ids(snap); len(got) != 1 || got[0] != "S" || len(snap.Problems) != 0 {
				t.Errorf("nodes %v problems %v", got, snap.Problems)
			}
		}},
	}
	if os.Geteuid() != 0 {
		tests = append(tests, struct {
			name  string
			build func(t *testing.T, root string)
			opts  func(root string) Options
			check func(t *testing.T, root string, snap *model.Snapshot)
		}{name: "chmod 000 directory is a problem", build: func(t *testing.T, root string) {
			node(t, root, "S", "")
			node(t, root, "locked/N", "")
			if err := os.Chmod(filepath.Join(root, "locked"), 0); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.Chmod(filepath.Join(root, "locked"), 0o755) })
		}, check: func(t *testing.T, root string, snap *model.Snapshot) {
			if !hasProblem(snap.Problems, "locked", "permission denied") {
				t.Errorf("problems = %v", snap.Problems)
			}
		}})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tt.build(t, root)
			opts := Options{}
			if tt.opts != nil {
				opts = tt.opts(root)
			}
			opts.Roots = []string{root}
			tt.check(t, root, forest(t, opts))
		})
	}
}

// unreadableWith checks that node id has the unreadable flag and a problem
// about file saying msg, found in the snapshot's problems too.
func unreadableWith(id, file, msg string) func(t *testing.T, root string, snap *model.Snapshot) {
	return func(t *testing.T, root string, snap *model.Snapshot) {
		t.Helper()
		n := mustNode(t, snap, id)
		if !n.HasScanFlag(model.FlagUnreadable) {
			t.Errorf("%s: scan flags %v, want unreadable", id, n.ScanFlags())
		}
		path := filepath.Join(root, id, file)
		if !hasProblem(n.Problems(), path, msg) || !hasProblem(snap.Problems, path, msg) {
			t.Errorf("%s: problems %v, want %q about %s", id, n.Problems(), msg, path)
		}
	}
}

// aliveProbe says every pid is alive, created at 1.7e9 (the started of the
// fixtures), so a case is about what was read, not about this host.
type aliveProbe struct{}

func (aliveProbe) Lookup(int) liveness.ProcessInfo {
	return liveness.ProcessInfo{Exists: true, CreateTime: time.Unix(1_700_000_000, 0)}
}

// SPEC §3 unreadable: "the state comes from what could be read". A
// heartbeat with one field of the wrong type keeps every other field; the
// bad one is zeroed and named in a problem.
func TestOneBadHeartbeatFieldKeepsTheRest(t *testing.T) {
	tests := []struct {
		name      string
		heartbeat string // %s is the parent's heartbeat path
		problem   string
		check     func(t *testing.T, n *model.Node)
	}{
		{name: "negative pid: a completed heartbeat is still finished",
			heartbeat: `{"pid": -1, "status": "completed", "role": "coder", "parent_heartbeat": %q}`,
			problem:   `field "pid": negative pid -1`,
			check: func(t *testing.T, n *model.Node) {
				if n.State != model.StateFinished || n.PID() != 0 || n.Role() != "coder" {
					t.Errorf("state %s pid %d role %q reason %q", n.State, n.PID(), n.Role(), n.Reason)
				}
			}},
		{name: "started not a number: status, role and parent still read",
			heartbeat: `{"pid": 4242, "started": "yesterday", "status": "running", "role": "coder", "parent_heartbeat": %q}`,
			problem:   `field "started": want a number, got "yesterday"`,
			check: func(t *testing.T, n *model.Node) {
				if n.State != model.StateRunning || n.PID() != 4242 || n.Status() != "running" || strings.Contains(n.Reason, "unreadable") {
					t.Errorf("state %s pid %d status %q reason %q", n.State, n.PID(), n.Status(), n.Reason)
				}
			}},
		{name: "task id an object: paused still read",
			heartbeat: `{"pid": 4242, "started": 1700000000, "task_id": {"x": 1}, "status": "paused", "role": "coder", "parent_heartbeat": %q}`,
			problem:   `field "task_id"`,
			check: func(t *testing.T, n *model.Node) {
				if n.State != model.StateRunning || !n.HasFlag(model.FlagPaused) || n.TaskID() != "" {
					t.Errorf("state %s flags %v task %q reason %q", n.State, n.Flags, n.TaskID(), n.Reason)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			now := time.Now()
			lead := filepath.Join(root, "A", protocol.HeartbeatFile)
			writeFile(t, lead, `{"pid": 4242, "started": 1700000000, "status": "running"}`, now, 0)
			path := filepath.Join(root, "B", protocol.HeartbeatFile)
			writeFile(t, path, fmt.Sprintf(tt.heartbeat, lead), now, time.Hour)
			snap, err := Scan(Options{Roots: []string{root}, Probe: aliveProbe{}, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			n := mustNode(t, snap, "B")
			if n.Heartbeat == nil || n.ParentID != "A" || n.Role() != "coder" {
				t.Fatalf("the good fields were lost: heartbeat %+v parent %q", n.Heartbeat, n.ParentID)
			}
			if !n.HasFlag(model.FlagUnreadable) || !hasProblem(n.Problems(), path, tt.problem) || !hasProblem(snap.Problems, path, tt.problem) {
				t.Errorf("flags %v problems %v, want unreadable and %q", n.Flags, n.Problems(), tt.problem)
			}
			if string(n.HeartbeatRaw()) == "" {
				t.Error("the raw heartbeat is not kept for the detail pane")
			}
			tt.check(t, n)
		})
	}
}

// A sentinel that exists but cannot be opened still has an mtime (from
// stat): liveness keeps working from it, and the node is flagged
// unreadable with the error, instead of "running; mtime unknown" forever.
func TestUnopenableSentinelKeepsItsMtime(t *testing.T) {
	tests := []struct {
		name       string
		file       string
		build      func(t *testing.T, path string)
		problem    string
		wantReason string
	}{
		// open(2) of a socket fails with ENXIO, for root too; the problem
		// says what stands there.
		{name: "heartbeat that is a socket", file: protocol.HeartbeatFile, build: socketAt,
			problem: "not a regular file (socket)", wantReason: "heartbeat unreadable; last beat 1h00m ago"},
		{name: ".running that is a socket", file: protocol.RunningFile, build: socketAt,
			problem: "not a regular file (socket)", wantReason: ".running written 1h00m ago"},
	}
	if os.Geteuid() != 0 {
		tests = append(tests, struct {
			name       string
			file       string
			build      func(t *testing.T, path string)
			problem    string
			wantReason string
		}{name: "heartbeat chmod 000", file: protocol.HeartbeatFile, build: func(t *testing.T, path string) {
			writeFile(t, path, heartbeat(os.Getpid(), "", "running"), time.Now(), 0)
			if err := os.Chmod(path, 0); err != nil {
				t.Fatal(err)
			}
		}, problem: "permission denied", wantReason: "heartbeat unreadable; last beat 1h00m ago"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, "S", tt.file)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			tt.build(t, path)
			now := time.Now()
			if err := os.Chtimes(path, now.Add(-time.Hour), now.Add(-time.Hour)); err != nil {
				t.Fatal(err)
			}
			snap, err := Scan(Options{Roots: []string{root}, Probe: aliveProbe{}, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			n := mustNode(t, snap, "S")
			if age := now.Sub(n.BeatMtime); age < time.Hour-time.Second || age > time.Hour+time.Second {
				t.Errorf("beat mtime %v, want an hour ago", n.BeatMtime)
			}
			if !n.HasFlag(model.FlagUnreadable) || !hasProblem(n.Problems(), path, tt.problem) {
				t.Errorf("flags %v problems %v, want unreadable and %q", n.Flags, n.Problems(), tt.problem)
			}
			if n.State != model.StateDead || !strings.Contains(n.Reason, tt.wantReason) {
				t.Errorf("state %s reason %q, want dead saying %q", n.State, n.Reason, tt.wantReason)
			}
		})
	}
}

// socketAt binds a unix socket at path (through its directory: socket
// paths are short).
func socketAt(t *testing.T, path string) {
	t.Helper()
	t.Chdir(filepath.Dir(path))
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: filepath.Base(path)}); err != nil {
		t.Fatal(err)
	}
}
