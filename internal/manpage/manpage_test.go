package manpage

import (
	"os"
	"path/filepath"
	"testing"
)

// Pages compares pages without their date: the .TH line loses its date
// field and nothing else.
func TestPagesLeaveOutTheDate(t *testing.T) {
	dir := t.TempDir()
	page := ".nh\n.TH \"DISPATCHTOP\" \"1\" \"Nov 2026\" \"dispatchtop\" \"dispatchtop manual\"\n\n.SH NAME\ndispatchtop \\- Nov 2026\n"
	if err := os.WriteFile(filepath.Join(dir, "dispatchtop.1"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Pages(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := ".nh\n.TH \"DISPATCHTOP\" \"1\" \"\" \"dispatchtop\" \"dispatchtop manual\"\n\n.SH NAME\ndispatchtop \\- Nov 2026\n"
	if got["dispatchtop.1"] != want {
		t.Errorf("got\n%s\nwant\n%s", got["dispatchtop.1"], want)
	}
}

// Every visible command has its page; the hidden helpers of the demo none.
func TestWriteAPageForEveryCommand(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir); err != nil {
		t.Fatal(err)
	}
	pages, err := Pages(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"dispatchtop.1", "dispatchtop-serve.1", "dispatchtop-kill.1", "dispatchtop-completion-bash.1"} {
		if pages[name] == "" {
			t.Errorf("no %s among %d pages", name, len(pages))
		}
	}
	for _, name := range []string{"dispatchtop-demo-agent.1", "dispatchtop-demo-merge.1"} {
		if _, ok := pages[name]; ok {
			t.Errorf("a page for the hidden %s", name)
		}
	}
}
