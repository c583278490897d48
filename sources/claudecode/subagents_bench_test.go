package claudecode

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkReadSubagents reads a store whose running session has 16
// subagents of 4 MiB transcripts each: "unmoved" as the store's refresh
// finds it most of the time (a stat a transcript), "moved" with every
// transcript appended to since the last read (one tail read each).
func BenchmarkReadSubagents(b *testing.B) {
	s := &claudeStore{t: b, dir: b.TempDir() + "/.claude"}
	p := sleeperB(b)
	s.session(p, subSession, "busy", nil)
	body := strings.Repeat(subToolUse+"\n", (4<<20)/len(subToolUse))
	var paths []string
	for i := range 16 {
		paths = append(paths, s.subagent("/home/u/webapp", "a"+strconv.Itoa(i), body))
	}
	for _, mode := range []string{"unmoved", "moved"} {
		b.Run(mode, func(b *testing.B) {
			Source{}.Read(s.dir, time.Now())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if mode == "moved" {
					b.StopTimer()
					for _, p := range paths {
						f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
						if err != nil {
							b.Fatal(err)
						}
						_, _ = f.WriteString(subUser + "\n")
						f.Close()
					}
					b.StartTimer()
				}
				if n := len(Source{}.Read(s.dir, time.Now()).Nodes); n != 17 {
					b.Fatalf("%d nodes, want the session and its 16 subagents", n)
				}
			}
		})
	}
}

// sleeperB is a process that lives until the benchmark ends.
func sleeperB(b *testing.B) int {
	b.Helper()
	p, err := os.StartProcess("/bin/sleep", []string{"sleep", "300"}, &os.ProcAttr{})
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { _ = p.Kill(); _, _ = p.Wait() })
	return p.Pid
}
