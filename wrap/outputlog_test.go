package wrap

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// SPEC §7: off a terminal, wrap tees the child's stdout and stderr into
// <infra>/.wrap.log, where the dashboard shows its tail; the streams wrap
// was given still get the output.
func TestRunTeesTheChildsOutputIntoTheWrapLog(t *testing.T) {
	infra := filepath.Join(t.TempDir(), "kid")
	var stdout, stderr bytes.Buffer
	err := Run(Options{Infra: infra, Thresholds: model.DefaultThresholds(), Stdout: &stdout, Stderr: &stderr},
		[]string{"ls", "-d", "/", "/no-such-path-for-wrap"})
	var exit *ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("ls of a missing path: %v, want an exit error", err)
	}
	log, err := os.ReadFile(filepath.Join(infra, protocol.WrapLogFile))
	if err != nil {
		t.Fatalf("no wrap log: %v", err)
	}
	if !strings.Contains(string(log), "/\n") || !strings.Contains(string(log), "no-such-path-for-wrap") {
		t.Errorf("wrap log %q lacks the child's stdout or stderr", log)
	}
	if !strings.Contains(stdout.String(), "/\n") || !strings.Contains(stderr.String(), "no-such-path-for-wrap") {
		t.Errorf("the given streams lost the output: stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

// SPEC §7: the wrap log stays under its cap however much the child writes,
// and keeps the newest output.
func TestWrapLogKeepsTheNewestUnderItsCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), protocol.WrapLogFile)
	l, err := openCappedLog(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		line := []byte(strings.Repeat(string(rune('a'+i%26)), 9) + "\n")
		if n, err := l.Write(line); n != len(line) || err != nil {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
	}
	l.Close()
	got, _ := os.ReadFile(path)
	if len(got) > 100 {
		t.Errorf("log is %d bytes, over its cap of 100", len(got))
	}
	if !strings.HasSuffix(string(got), strings.Repeat("x", 9)+"\n") {
		t.Errorf("log %q does not end with the newest line", got)
	}
}
