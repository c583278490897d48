//go:build unix

package ui

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/model"
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

// BenchmarkProgramIdle10k: SPEC §8 idle CPU with the terminal renderer in,
// which BenchmarkTUIIdle10k leaves out: the real program (tea.Program, its
// renderer waking at the frame rate given) runs the model on a watcher of
// a generated 10,000-node tree, drawing a 160×50 screen in 256 colours into
// a writer that counts what a terminal would receive. Each iteration idles
// 5 s, on one processor as the dashboard runs once its cold scan is done.
// %cpu is the process's CPU over wall, wakes/s its threads' context
// switches a second (Linux), term-B/s the bytes written a second. fps=60
// is Bubble Tea's default, the other the dashboard's MaxFPS.
func BenchmarkProgramIdle10k(b *testing.B) {
	root := b.TempDir()
	// The heartbeats name this process, which stays alive: nodes stay
	// running. Ten seconds old, past the exit grace (5 s) from the start.
	if err := treegen.Generate(root, 1000, 10, 3, time.Now().Add(-10*time.Second)); err != nil {
		b.Fatal(err)
	}
	for _, fps := range []int{60, MaxFPS} {
		b.Run(fmt.Sprintf("fps=%d", fps), func(b *testing.B) {
			w, err := scanner.NewWatcher(scanner.Options{Roots: []string{root}}, scanner.WatchOptions{})
			if err != nil {
				b.Fatal(err)
			}
			// One processor once the cold scan is done, as the dashboard
			// runs (cli's dashboardProcs).
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			watchDone := make(chan error, 1)
			go func() { watchDone <- w.Run(ctx) }()
			out := &countingWriter{}
			p := tea.NewProgram(New(Options{Context: ctx, Initial: w.Snapshot(), Feed: w}),
				tea.WithContext(ctx), tea.WithInput(nil), tea.WithOutput(out), tea.WithoutSignalHandler(),
				tea.WithEnvironment([]string{"TERM=xterm-256color", "CLICOLOR_FORCE=1"}),
				tea.WithWindowSize(160, 50), tea.WithFPS(fps))
			progDone := make(chan error, 1)
			go func() { _, err := p.Run(); progDone <- err }()
			// Past the cold start and the first frames, and the cold start's
			// garbage collected, so the window holds the idle program alone.
			time.Sleep(3 * time.Second)
			runtime.GC()
			time.Sleep(time.Second)
			b.ResetTimer()
			stopProfile := startWindowProfile(b)
			cpu0, wakes0, bytes0, wall0 := benchCPUTime(b), benchWakes(), out.n.Load(), time.Now()
			for i := 0; i < b.N; i++ {
				time.Sleep(5 * time.Second)
			}
			cpu, wakes, written, wall := benchCPUTime(b)-cpu0, benchWakes()-wakes0, out.n.Load()-bytes0, time.Since(wall0)
			stopProfile()
			b.StopTimer()
			p.Quit()
			if err := <-progDone; err != nil {
				b.Error(err)
			}
			cancel()
			if err := <-watchDone; err != nil {
				b.Error(err)
			}
			b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "%cpu")
			if wakes >= 0 {
				b.ReportMetric(float64(wakes)/wall.Seconds(), "wakes/s")
			}
			b.ReportMetric(float64(written)/wall.Seconds(), "term-B/s")
		})
	}
}

// countingWriter counts the bytes written to it and keeps none.
type countingWriter struct{ n atomic.Int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return len(p), nil
}

// benchWakes is the context switches of every thread of the process so
// far (/proc/self/task/*/status), -1 where there is no such file.
func benchWakes() int64 {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return -1
	}
	var total int64
	for _, t := range tasks {
		data, err := os.ReadFile("/proc/self/task/" + t.Name() + "/status")
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) == 2 && strings.HasSuffix(f[0], "ctxt_switches:") {
				n, err := strconv.ParseInt(f[1], 10, 64)
				if err == nil {
					total += n
				}
			}
		}
	}
	return total
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

// BenchmarkTouchToFrame10k: SPEC §8 "one heartbeat touch in that tree":
// a real watcher on a generated 10,000-node tree feeds the model as the
// dashboard does (Options.Feed, its commands run as the program runs them,
// the 1 s tick on); each iteration touches the heartbeat of a row on screen
// and waits for the frame whose BEAT cell shows it. touch-to-frame-ms is
// the mean time from the write to that frame: the event, the watcher's
// debounce, the update and the View; max-ms the slowest. The terminal's
// renderer draws that View at its next frame tick, at most a frame period
// (1 s / MaxFPS) later, at a phase of its own: screen-ms and screen-max-ms
// add that bound, the time to the terminal at worst. "lone": a touch after
// a quiet spell, which the watcher publishes at once; "after-a-flush": a
// touch right after an update, which the debounce holds: the worst case.
func BenchmarkTouchToFrame10k(b *testing.B) {
	root := b.TempDir()
	// An hour old: every BEAT cell reads 1h00m, a touched one 0s. The
	// heartbeats name this process, which stays alive.
	old := time.Now().Add(-time.Hour)
	if err := treegen.Generate(root, 1000, 10, 3, old); err != nil {
		b.Fatal(err)
	}
	w, err := scanner.NewWatcher(scanner.Options{Roots: []string{root}}, scanner.WatchOptions{})
	if err != nil {
		b.Fatal(err)
	}
	runBenchWatcher(b, w)
	m := New(Options{Initial: w.Snapshot(), Feed: w})
	const width, height = 120, 40
	m.Update(tea.WindowSizeMsg{Width: width, Height: height})
	_ = m.View()
	// The third row on screen (the cursor is on the first): where its BEAT
	// cell is in the frame, and the heartbeat behind it.
	const row = 2
	n := m.rows[m.offset+row].node
	c := m.columns(width)
	from := c.offset("BEAT")
	cell := frameCell{line: m.frame.headerH + row, from: from, to: from + c.width("BEAT")}
	loop := startProgramLoop(b, m)
	defer loop.stop()

	for _, sc := range []struct {
		name  string
		quiet time.Duration // between the previous update and the touch
	}{{"lone", 2 * scanner.DefaultDebounce}, {"after-a-flush", 0}} {
		b.Run(sc.name, func(b *testing.B) {
			defer startWindowProfile(b)()
			var total, worst time.Duration
			for b.Loop() {
				b.StopTimer()
				if err := os.Chtimes(n.HeartbeatPath, old, old); err != nil {
					b.Fatal(err)
				}
				loop.await(b, cell, func(s string) bool { return strings.HasPrefix(s, "1h") })
				time.Sleep(sc.quiet)
				b.StartTimer()
				t0 := time.Now()
				if err := os.Chtimes(n.HeartbeatPath, t0, t0); err != nil {
					b.Fatal(err)
				}
				seen := loop.await(b, cell, func(s string) bool { return s == "0s" })
				d := seen.Sub(t0)
				total += d
				worst = max(worst, d)
			}
			mean := float64(total.Microseconds()) / 1000 / float64(b.N)
			framePeriod := 1000 / float64(MaxFPS)
			b.ReportMetric(mean, "touch-to-frame-ms")
			b.ReportMetric(float64(worst.Microseconds())/1000, "max-ms")
			b.ReportMetric(mean+framePeriod, "screen-ms")
			b.ReportMetric(float64(worst.Microseconds())/1000+framePeriod, "screen-max-ms")
		})
	}
}

// frameCell is a run of cells on one line of the frame.
type frameCell struct{ line, from, to int }

// text is the cell's text in frame, without styles or padding.
func (c frameCell) text(frame string) string {
	lines := strings.SplitN(frame, "\n", c.line+2)
	if c.line >= len(lines) {
		return ""
	}
	return strings.TrimSpace(ansi.Strip(ansi.Cut(lines[c.line], c.from, c.to)))
}

// programLoop runs a model as the program does, without a terminal: one
// message at a time, the commands in goroutines, a frame after each
// message; it reports when a frame shows what a waiter wants.
type programLoop struct {
	waits chan frameWait
	quit  chan struct{}
	ended chan struct{}
}

type frameWait struct {
	cell frameCell
	ok   func(string) bool
	seen chan time.Time
}

func startProgramLoop(b *testing.B, m *Model) *programLoop {
	l := &programLoop{waits: make(chan frameWait), quit: make(chan struct{}), ended: make(chan struct{})}
	msgs := make(chan tea.Msg, 64)
	var run func(cmd tea.Cmd)
	run = func(cmd tea.Cmd) {
		if cmd == nil {
			return
		}
		go func() {
			msg := cmd()
			if batch, ok := msg.(tea.BatchMsg); ok {
				for _, c := range batch {
					run(c)
				}
				return
			}
			if msg == nil {
				return
			}
			select {
			case msgs <- msg:
			case <-l.quit:
			}
		}()
	}
	go func() {
		defer close(l.ended)
		run(m.Init())
		frame := m.View().Content
		var wait *frameWait
		check := func() {
			if wait != nil && wait.ok(wait.cell.text(frame)) {
				wait.seen <- time.Now()
				wait = nil
			}
		}
		for {
			select {
			case <-l.quit:
				return
			case w := <-l.waits:
				wait = &w
				check()
			case msg := <-msgs:
				_, cmd := m.Update(msg)
				run(cmd)
				frame = m.View().Content
				check()
			}
		}
	}()
	return l
}

// await waits (5 s at most) for a frame whose cell ok accepts, and returns
// when the loop drew it.
func (l *programLoop) await(b *testing.B, cell frameCell, ok func(string) bool) time.Time {
	b.Helper()
	seen := make(chan time.Time, 1)
	l.waits <- frameWait{cell: cell, ok: ok, seen: seen}
	select {
	case t := <-seen:
		return t
	case <-time.After(5 * time.Second):
		b.Fatalf("no frame showed the cell (line %d, cells %d-%d) as wanted within 5 s", cell.line, cell.from, cell.to)
		return time.Time{}
	}
}

func (l *programLoop) stop() {
	close(l.quit)
	<-l.ended
}

// BenchmarkTouchStream10k: what the debounce costs, SPEC §8 "a stream of
// events makes at most one update per debounce": a real watcher on a
// generated 10,000-node tree feeds the model through the program's loop
// while the heartbeats of the tree are touched one after another, a touch a
// millisecond (a fleet of 10,000 agents beating every 10 s), for 5 s an
// iteration. updates/s is what the watcher published a second, %cpu the
// process's CPU over wall (the touching included); the default debounce
// against the former 50 ms.
func BenchmarkTouchStream10k(b *testing.B) {
	root := b.TempDir()
	if err := treegen.Generate(root, 1000, 10, 3, time.Now()); err != nil {
		b.Fatal(err)
	}
	beats, err := treegen.HeartbeatPaths(root)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name     string
		debounce time.Duration
	}{{"debounce=default", scanner.DefaultDebounce}, {"debounce=50ms", 50 * time.Millisecond}} {
		b.Run(bc.name, func(b *testing.B) {
			w, err := scanner.NewWatcher(scanner.Options{Roots: []string{root}}, scanner.WatchOptions{Debounce: bc.debounce})
			if err != nil {
				b.Fatal(err)
			}
			runBenchWatcher(b, w)
			var updates atomic.Int64
			counted := countingFeed{feed: w.Updates(), n: &updates}
			m := New(Options{Initial: w.Snapshot(), Feed: counted})
			m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
			loop := startProgramLoop(b, m)
			defer loop.stop()
			time.Sleep(time.Second)
			b.ResetTimer()
			stopProfile := startWindowProfile(b)
			cpu0, n0, wall0 := benchCPUTime(b), updates.Load(), time.Now()
			k := 0
			for i := 0; i < b.N; i++ {
				tick := time.NewTicker(time.Millisecond)
				for end := time.Now().Add(5 * time.Second); time.Now().Before(end); k++ {
					<-tick.C
					now := time.Now()
					if err := os.Chtimes(beats[k%len(beats)], now, now); err != nil {
						b.Fatal(err)
					}
				}
				tick.Stop()
			}
			cpu, n, wall := benchCPUTime(b)-cpu0, updates.Load()-n0, time.Since(wall0)
			b.StopTimer()
			stopProfile()
			b.ReportMetric(float64(n)/wall.Seconds(), "updates/s")
			b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "%cpu")
			b.ReportMetric(float64(k)/wall.Seconds(), "touches/s")
		})
	}
}

// countingFeed is a feed that counts the updates it passes on.
type countingFeed struct {
	feed <-chan model.Update
	n    *atomic.Int64
}

func (f countingFeed) Updates() <-chan model.Update {
	out := make(chan model.Update)
	go func() {
		defer close(out)
		for u := range f.feed {
			f.n.Add(1)
			out <- u
		}
	}()
	return out
}

// runBenchWatcher runs w until the benchmark ends, and fails it if the
// watcher stops with an error.
func runBenchWatcher(b *testing.B, w *scanner.Watcher) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
}
