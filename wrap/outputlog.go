package wrap

import (
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/charmbracelet/x/term"
)

// wrapLogCap bounds <infra>/.wrap.log: the dashboard reads its last 64 KiB,
// and a chatty agent must not fill the disk.
const wrapLogCap = 1 << 20

// outputWait is how long wrap waits, once the child exited, for whatever it
// started and left holding its output to let go of it.
const outputWait = 2 * time.Second

// cappedLog is a file that keeps the newest output under its cap: when a
// write would pass it, the older half goes. Writes never fail: the log is a
// copy, and the child's output must reach its real streams regardless.
type cappedLog struct {
	mu   sync.Mutex
	f    *os.File
	size int64
	cap  int64
}

func openCappedLog(path string, limit int64) (*cappedLog, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return &cappedLog{f: f, cap: limit}, nil
}

func (l *cappedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	if int64(n) >= l.cap {
		p, l.size = p[int64(n)-l.cap/2:], 0
	} else if l.size+int64(n) > l.cap {
		keep := make([]byte, l.cap/2)
		got, _ := l.f.ReadAt(keep, l.size-int64(len(keep)))
		_, _ = l.f.WriteAt(keep[:got], 0)
		l.size = int64(got)
	}
	w, _ := l.f.WriteAt(p, l.size)
	l.size += int64(w)
	_ = l.f.Truncate(l.size)
	return n, nil
}

func (l *cappedLog) Close() error { return l.f.Close() }

// teeOutput sends the child's stdout and stderr to the log as well as to
// the streams wrap was given, except a stream that is a terminal: there the
// child keeps the terminal itself (it may check isatty).
func teeOutput(child *exec.Cmd, log io.Writer) {
	tee := func(w io.Writer) io.Writer {
		if f, ok := w.(*os.File); ok && term.IsTerminal(f.Fd()) {
			return w
		}
		if w == nil {
			return log
		}
		return io.MultiWriter(w, log)
	}
	child.Stdout, child.Stderr = tee(child.Stdout), tee(child.Stderr)
	child.WaitDelay = outputWait
}
