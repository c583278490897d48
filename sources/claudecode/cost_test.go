package claudecode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/protocol"
)

// TestReadCostPerRecord holds what one record costs a read, counted as
// the allocations it makes (the work a read does, which the machine's load
// does not move): a job's state.json is opened, its size and mtime taken
// from the open descriptor (no second stat of its path), and decoded in
// one pass whose field names are learnt once for the record's type, not
// at every record, its strings slices of one copy of the record and its
// fields pointed at from one array, not each allocated on its own; a
// job's node, heartbeat, rare facts and fields are one block (jobNode:
// 13.2 allocations a job, 13.4 under a live session, when they were four).
// A home of a thousand records read at each --once pays each of these a
// thousand times (SPEC §8, the agents' stores).
func TestReadCostPerRecord(t *testing.T) {
	const jobs = 200
	tests := []struct {
		name string
		// most is the allocations a record may cost.
		most float64
		// owned: the jobs' session is there, a live process.
		owned bool
	}{
		{name: "a job's state.json", most: 10.4},
		// Its node's id is made once, under its session's.
		{name: "a job's state.json of a live session", most: 10.6, owned: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			now := time.Now()
			if tt.owned {
				s.session(os.Getpid(), "s-1", "busy", nil)
			}
			for j := range jobs {
				s.write(fmt.Sprintf("jobs/job%04d/state.json", j), map[string]any{"state": "working", "sessionId": "s-1",
					"name": fmt.Sprintf("job %d", j), "intent": "run the suite", "cwd": "/home/u/project",
					"createdAt": now.UTC().Format(time.RFC3339Nano), "updatedAt": now.UTC().Format(time.RFC3339Nano), "cliVersion": "2.1.278"})
			}
			var nodes int
			allocs := testing.AllocsPerRun(3, func() {
				facts := Source{BootTime: func() time.Time { return time.Time{} }}.Read(s.dir, now)
				nodes = len(facts.Nodes)
			})
			if want := jobs + btoi(tt.owned); nodes != want {
				t.Fatalf("read %d nodes, want %d", nodes, want)
			}
			if perRecord := allocs / jobs; perRecord > tt.most {
				t.Errorf("a record costs %.1f allocations, want at most %.1f", perRecord, tt.most)
			}
		})
	}
}

// TestRecordIsReadInOneRead holds the reads a record costs, counted as the
// read system calls the process makes (/proc/self/io's syscr): a record
// whose size the open descriptor gave is read in one read, the end seen in
// that read's coming short of the byte over asked for, not in a second
// read that gives nothing. A thousand records at each --once were a
// thousand reads more (SPEC §8, the agents' stores).
func TestRecordIsReadInOneRead(t *testing.T) {
	if _, err := readSyscalls(); err != nil {
		t.Skipf("no read count of the process: %v", err)
	}
	const jobs = 100
	tests := []struct {
		name string
		// most is the read system calls a record may cost.
		most float64
	}{
		{name: "a job's state.json", most: 10.4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			now := time.Now()
			for j := range jobs {
				s.write(fmt.Sprintf("jobs/job%04d/state.json", j), map[string]any{"state": "working", "sessionId": "s-1",
					"name": fmt.Sprintf("job %d", j), "updatedAt": now.UTC().Format(time.RFC3339Nano)})
			}
			src := Source{BootTime: func() time.Time { return time.Time{} }}
			// What reading the count itself costs, taken off.
			c0, _ := readSyscalls()
			c1, _ := readSyscalls()
			var nodes int
			c2, _ := readSyscalls()
			nodes = len(src.Read(s.dir, now).Nodes)
			c3, _ := readSyscalls()
			if nodes != jobs {
				t.Fatalf("read %d nodes, want %d", nodes, jobs)
			}
			reads := float64((c3 - c2) - (c1 - c0))
			if per := reads / jobs; per > tt.most {
				t.Errorf("a record costs %.2f reads, want at most %.0f", per, tt.most)
			}
		})
	}
}

// readSyscalls is the read system calls the process has made (syscr).
func readSyscalls() (int64, error) {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "syscr: "); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/self/io: no syscr")
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// readWhole stops at the read that gives the descriptor's size only when
// that is the file's end: a file whose descriptor says less than it holds
// (procfs gives a size of 0) is read on to its end, and one over the
// limit is refused.
func TestReadWholeReadsToTheEnd(t *testing.T) {
	dir := t.TempDir()
	record := strings.Repeat(`{"a":1}`, 100)
	if err := os.WriteFile(filepath.Join(dir, "r.json"), []byte(record), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "empty.json"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		limit      int64
		want       func(b []byte) bool
		tooLarge   bool
	}{
		{name: "a record, its size", path: filepath.Join(dir, "r.json"), limit: 1 << 20, want: func(b []byte) bool { return string(b) == record }},
		{name: "an empty file", path: filepath.Join(dir, "empty.json"), limit: 1 << 20, want: func(b []byte) bool { return len(b) == 0 }},
		{name: "a file over the limit", path: filepath.Join(dir, "r.json"), limit: 100, tooLarge: true},
		{name: "a file whose descriptor says 0 bytes", path: "/proc/self/status", limit: 1 << 20,
			want: func(b []byte) bool {
				return strings.HasPrefix(string(b), "Name:") && strings.HasSuffix(string(b), "\n") && len(b) > 512
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := os.Stat(tt.path); err != nil {
				t.Skip(err)
			}
			b, _, err := readWhole(tt.path, tt.limit)
			if tt.tooLarge {
				if !errors.Is(err, protocol.ErrTooLarge) {
					t.Errorf("read %s: %v, want too large", tt.path, err)
				}
				return
			}
			if err != nil || !tt.want(b) {
				t.Errorf("read %s: %d bytes %q, %v", tt.path, len(b), b[:min(len(b), 80)], err)
			}
		})
	}
}
