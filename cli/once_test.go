package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/report"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// SPEC §4: the text of --once ends with a line end before the --fail-on
// message on stderr, whatever ends it (a node, the problems list), painted
// or plain, so the message never shares the last line on a terminal.
func TestOnceTextEndsWithANewlineBeforeTheFailOnMessage(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
	}{
		{name: "a dead node ends the text", setup: func(t *testing.T, root string) {}},
		{name: "the problems list ends the text", setup: func(t *testing.T, root string) {
			p := filepath.Join(root, "broken", ".heartbeat")
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(`{"pid": "abc"`), 0o644)
			old := time.Now().Add(-10 * time.Minute)
			os.Chtimes(p, old, old)
		}},
		{name: "a reason with line breaks ends the text", setup: func(t *testing.T, root string) {
			p := filepath.Join(root, "ask", "blocked.json")
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(filepath.Join(root, "ask", ".heartbeat"), []byte(`{"pid": 0, "status": "running"}`), 0o644)
			os.WriteFile(p, []byte(`{"question": "ship it?\n\n"}`), 0o644)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			root := hostileFixture(t)
			tc.setup(t, root)
			var stdout, stderr bytes.Buffer
			code := Execute([]string{"--once", "--fail-on", "dead,unreadable,blocked", root}, strings.NewReader(""), &stdout, &stderr)
			if code != ExitFound || !strings.Contains(stderr.String(), "--fail-on") {
				t.Fatalf("exit %d, stderr %q: want 1 and the --fail-on message", code, stderr.String())
			}
			if !strings.HasSuffix(stdout.String(), "\n") {
				t.Fatalf("the text does not end with a newline: %q", stdout.String())
			}

			// The same snapshot, painted as on a terminal.
			_, g := newRootCmd(nil, nil, nil)
			g.Roots = []string{root}
			opts, err := g.ScanOptions()
			if err != nil {
				t.Fatal(err)
			}
			snap, err := scanner.Scan(opts)
			if err != nil {
				t.Fatal(err)
			}
			var painted bytes.Buffer
			if err := report.WriteText(&painted, snap, statePainter()); err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(painted.String(), "\n") {
				t.Fatalf("the painted text does not end with a newline: %q", painted.String())
			}
		})
	}
}
