//go:build unix

package ui

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// BenchmarkTUIIdle10k: SPEC §8 "idle CPU with 10,000 nodes ≤ 1 % of a core"
// and "≤ 100 MiB RSS", for the live engine and this model together: a
// watcher on a generated 10,000-node tree feeds the model, which takes every
// update and its 1 s tick and renders a 120×40 frame after each, as the
// program would (the terminal renderer's own diffing is not included). Each
// iteration idles 5 s; CPU is the process's user + system time over wall.
func BenchmarkTUIIdle10k(b *testing.B) {
	root := b.TempDir()
	// The heartbeats name this process, which stays alive: nodes stay running.
	if err := treegen.Generate(root, 1000, 10, 3, time.Now()); err != nil {
		b.Fatal(err)
	}
	w, err := scanner.NewWatcher(scanner.Options{Roots: []string{root}}, scanner.WatchOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	feed := w.Updates()
	m := New(Options{Initial: w.Snapshot(), Tick: -1})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	stop := make(chan struct{})
	loopDone := make(chan int)
	go func() {
		// The program's loop, without a terminal: one message at a time,
		// a frame after each.
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		frames := 0
		for {
			select {
			case <-stop:
				loopDone <- frames
				return
			case u, ok := <-feed:
				if !ok {
					feed = nil
					continue
				}
				m.Update(updateMsg{update: u})
			case t := <-tick.C:
				m.Update(tickMsg(t))
			}
			_ = m.View()
			frames++
		}
	}()
	// Past the cold start and the exit grace (5 s), which every node of the
	// generated tree crosses in the same second.
	time.Sleep(7 * time.Second)
	b.ResetTimer()
	cpu0, wall0 := benchCPUTime(b), time.Now()
	for i := 0; i < b.N; i++ {
		time.Sleep(5 * time.Second)
	}
	cpu, wall := benchCPUTime(b)-cpu0, time.Since(wall0)
	b.StopTimer()
	close(stop)
	frames := <-loopDone
	cancel()
	if err := <-done; err != nil {
		b.Error(err)
	}
	if frames == 0 {
		b.Fatal("no frame was rendered")
	}
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "%cpu")
	b.ReportMetric(benchRSSMiB(b), "MiB-RSS")
}

// benchCPUTime is the process's user + system CPU time.
func benchCPUTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchRSSMiB reads VmRSS from /proc/self/status (0 where there is none).
func benchRSSMiB(b *testing.B) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				b.Fatalf("parse VmRSS %q: %v", line, err)
			}
			return kb / 1024
		}
	}
	return 0
}
