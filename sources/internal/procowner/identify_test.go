package procowner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIdentifyAnswersAsProgramOf holds the lister's fast identification to
// programOf, its definition: for every process of this host, asked by its
// own comm, by its executable's name, and by a name it does not run as;
// and for fake processes whose comm and executable disagree, whose comm
// is cut at 15 bytes, or whose executable was deleted.
func TestIdentifyAnswersAsProgramOf(t *testing.T) {
	fake := t.TempDir()
	cases := []struct{ pid, comm, exe string }{
		{"101", "codex", "/usr/bin/codex"},
		{"102", "node", "/usr/lib/codex"},
		{"103", "opencode-linux-", "/opt/opencode-linux-x64"},
		{"104", "bash", "/usr/bin/codex (deleted)"},
		{"105", "bash", ""},
		{"106", "", "/usr/bin/" + strings.Repeat("x", 300)},
	}
	for _, c := range cases {
		p := filepath.Join(fake, c.pid)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if c.comm != "" {
			if err := os.WriteFile(filepath.Join(p, "comm"), []byte(c.comm+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if c.exe != "" {
			if err := os.Symlink(c.exe, filepath.Join(p, "exe")); err != nil {
				t.Fatal(err)
			}
		}
	}
	nameSets := func(dir string) [][]string {
		raw, _ := os.ReadFile(filepath.Join(dir, "comm"))
		sets := [][]string{{strings.TrimSpace(string(raw))}, {"codex"}, {"opencode", "opencode-linux-x64"}, {"no-such-program"}}
		if exe, err := os.Readlink(filepath.Join(dir, "exe")); err == nil {
			sets = append(sets, []string{filepath.Base(exe)}, []string{strings.TrimSuffix(filepath.Base(exe), " (deleted)")})
		}
		return sets
	}
	for _, procDir := range []string{fake, "/proc"} {
		pids, err := listPIDs(procDir)
		if err != nil {
			if procDir == "/proc" {
				continue // no /proc: the fake one was enough
			}
			t.Fatal(err)
		}
		l, err := newLister(procDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, pid := range pids {
			dir := filepath.Join(procDir, pid)
			for _, names := range nameSets(dir) {
				gotName, got := l.programOf(pid, names)
				wantName, want := programOf(dir, names)
				if gotName != wantName || got != want {
					if _, err := os.Stat(dir); err != nil {
						continue // exited between the two looks
					}
					t.Errorf("%s asked for %q: fast %q %v, plain %q %v", dir, names, gotName, got, wantName, want)
				}
			}
		}
		l.close()
	}
}
