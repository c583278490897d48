package procowner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// fakeProc is a /proc with one process, pid fakePID(), named comm: its
// environ and fd as given ("" leaves them out; "unreadable" makes each a
// thing that cannot be read as one, as another user's are).
func fakeProc(t *testing.T, comm, environ, fd string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, strconv.Itoa(fakePID()))
	for _, d := range []string{filepath.Join(dir, "self"), p} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(p, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("comm", comm+"\n")
	switch environ {
	case "unreadable":
		os.Mkdir(filepath.Join(p, "environ"), 0o755)
	case "":
	default:
		write("environ", environ)
	}
	switch fd {
	case "unreadable":
		write("fd", "")
	case "":
		os.Mkdir(filepath.Join(p, "fd"), 0o755)
	default:
		os.Mkdir(filepath.Join(p, "fd"), 0o755)
		if err := os.Symlink(fd, filepath.Join(p, "fd", "3")); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fakePID is the fake process's pid: never this test's own, which Find
// passes over (a fresh host hands out low pids, 4242 among them).
func fakePID() int {
	if os.Getpid() == 4242 {
		return 4243
	}
	return 4242
}

func TestFind(t *testing.T) {
	home := t.TempDir()
	db := filepath.Join(home, "state_5.sqlite")
	spec := Spec{
		Names: []string{"codex"},
		Owns:  func(env map[string]string) bool { return SameDir(env["CODEX_HOME"], home) },
		Files: []string{db},
	}
	tests := []struct {
		name              string
		comm, environ, fd string
		owners, hidden    int
		proven            bool
	}{
		{"its environment names the home", "codex", "CODEX_HOME=" + home + "\x00", "", 1, 0, true},
		{"it holds the database open", "codex", "CODEX_HOME=/elsewhere\x00", db, 1, 0, true},
		{"another home's", "codex", "CODEX_HOME=/elsewhere\x00", "", 0, 0, true},
		{"another program", "bash", "CODEX_HOME=" + home + "\x00", db, 0, 0, true},
		{"one that may not be looked at is hidden, never no owner", "codex", "unreadable", "unreadable", 0, 1, false},
		{"its files unreadable but its environment proves it", "codex", "CODEX_HOME=" + home + "\x00", "unreadable", 1, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := Find(fakeProc(t, tt.comm, tt.environ, tt.fd), spec)
			if len(l.Owners) != tt.owners || len(l.Hidden) != tt.hidden || l.Proven() != tt.proven {
				t.Errorf("owners %v hidden %v proven %v", l.Owners, l.Hidden, l.Proven())
			}
		})
	}
}

func TestNoProcDirIsUnsupported(t *testing.T) {
	l := Find(filepath.Join(t.TempDir(), "none"), Spec{Names: []string{"codex"}})
	if l.Unsupported == nil || l.Proven() {
		t.Errorf("lookup = %+v", l)
	}
}

// A real process holding a file open is seen holding it; one not, not.
func TestHoldsOpenRealProcess(t *testing.T) {
	f := filepath.Join(t.TempDir(), "rollout.jsonl")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := exec.Command("sleep", "60")
	cmd.Stdin = in
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc")
	}
	if !HoldsOpen("", cmd.Process.Pid, f) {
		t.Error("a process holding the file is not seen holding it")
	}
	if HoldsOpen("", cmd.Process.Pid, f+".other") {
		t.Error("a file not held is seen held")
	}
	// OpenFiles, the fd table read once, answers as HoldsOpen does.
	open := OpenFiles("", cmd.Process.Pid)
	for _, p := range []string{f, f + ".other"} {
		if open[filepath.Clean(p)] != HoldsOpen("", cmd.Process.Pid, p) {
			t.Errorf("OpenFiles has %s %v, HoldsOpen says %v", p, open[p], !open[p])
		}
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if OpenFiles("", gone.Process.Pid) != nil {
		t.Error("a gone process holds files")
	}
}
