package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/ui"
)

// pump runs cmd and feeds every message it yields back into m, following
// the commands Update returns, until done(frame) holds or the deadline.
func pump(t *testing.T, m *ui.Model, cmd tea.Cmd, deadline time.Duration, done func(frame string) bool) string {
	t.Helper()
	stop := time.After(deadline)
	queue := []tea.Cmd{cmd}
	frame := ansi.Strip(m.View().Content)
	for !done(frame) {
		if len(queue) == 0 {
			t.Fatalf("no command left to run; last frame:\n%s", frame)
		}
		next := queue[0]
		queue = queue[1:]
		if next == nil {
			continue
		}
		got := make(chan tea.Msg, 1)
		go func() { got <- next() }()
		var msg tea.Msg
		select {
		case msg = <-got:
		case <-stop:
			t.Fatalf("timed out; last frame:\n%s", frame)
		}
		if batch, ok := msg.(tea.BatchMsg); ok {
			queue = append(queue, batch...)
			continue
		}
		if msg == nil {
			continue
		}
		_, c := m.Update(msg)
		queue = append(queue, c)
		frame = ansi.Strip(m.View().Content)
	}
	return frame
}

// The fleet view over two real `dispatchtop serve` processes on loopback
// ports: both hosts show, with their sessions under them and ids prefixed
// by the host; when one is stopped the header marks it unreachable since
// then, and the view stays read-only (issue 7).
func TestRemoteViewOverTwoServes(t *testing.T) {
	// Both hosts want a token; the fleet sends the one --token-file names.
	env := []string{"DISPATCHTOP_TOKEN=fleet-token"}
	a := startServe(t, env, serveTree(t))
	b := startServe(t, env, serveTree(t))
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("fleet-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fleet, err := newFleet([]string{"host-a=" + a.url, "host-b=" + b.url}, tokenFile, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := newRemoteModel(ctx, fleet, ui.Options{Tick: -1})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})

	frame := ansi.Strip(m.View().Content)
	for _, want := range []string{
		"hosts: host-a ok  host-b ok",
		"▣ host-a", "▣ host-b",
		"8 nodes/2 sessions", // the host rows are not counted
		"read-only",
		"lead S1", "asker 3",
	} {
		if !strings.Contains(frame, want) {
			t.Errorf("first frame lacks %q:\n%s", want, frame)
		}
	}
	// The row under host-a is host-a's session, its id prefixed.
	m.Update(tea.KeyPressMsg{Code: 'j', Text: "j"})
	if frame = ansi.Strip(m.View().Content); !strings.Contains(frame, "2/10  host-a/S1") {
		t.Errorf("the second row is not host-a/S1:\n%s", frame)
	}
	// Read-only: the kill key opens no dialog.
	m.Update(tea.KeyPressMsg{Code: 'x', Text: "x"})
	if frame = ansi.Strip(m.View().Content); strings.Contains(frame, "Cancel") {
		t.Errorf("x opened a dialog in the read-only fleet view:\n%s", frame)
	}

	stopped := time.Now()
	b.stop(t)
	frame = pump(t, m, m.Init(), 20*time.Second, func(f string) bool {
		return strings.Contains(f, "host-b unreachable since")
	})
	if !strings.Contains(frame, "host-a ok") {
		t.Errorf("host-a is no longer ok after host-b stopped:\n%s", frame)
	}
	// The since is the first poll after the stop, on the viewer's clock.
	i := strings.Index(frame, "host-b unreachable since ")
	since, err := time.ParseInLocation("15:04:05", frame[i+len("host-b unreachable since "):][:8], time.Local)
	if err != nil {
		t.Fatalf("since: %v\n%s", err, frame)
	}
	lo := stopped.Truncate(time.Second)
	at := time.Date(lo.Year(), lo.Month(), lo.Day(), since.Hour(), since.Minute(), since.Second(), 0, time.Local)
	if at.Before(lo) || at.After(time.Now()) {
		t.Errorf("unreachable since %s, want between %s and now", at.Format("15:04:05"), lo.Format("15:04:05"))
	}
	// host-b's last snapshot stays on screen under its row.
	if !strings.Contains(frame, "unreachable since") || strings.Count(frame, "lead S1") != 2 {
		t.Errorf("host-b's sessions left the screen:\n%s", frame)
	}
}
