package packaging

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// goInstall installs a pinned tool into a temporary directory; a tool the
// module proxy cannot give skips the test that needs it, naming why.
func goInstall(t *testing.T, pkg string) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "install", pkg)
	cmd.Env = append(os.Environ(), "GOBIN="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("go install %s: %v (the tool cannot be had here)\n%s", pkg, err, out)
	}
	return filepath.Join(dir, filepath.Base(strings.Split(pkg, "@")[0]))
}

// The workflows, and the action they can use, pass actionlint.
func TestWorkflowsPassActionlint(t *testing.T) {
	if testing.Short() {
		t.Skip("installs actionlint")
	}
	lint := goInstall(t, "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12")
	cmd := exec.Command(lint, "-no-color")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("actionlint: %v\n%s", err, out)
	}
}

// `make release-snapshot` builds every archive, package and the cask, and
// checksums.txt covers them; the archive of this platform holds a binary
// that runs and names its version, and man pages that man reads.
func TestReleaseSnapshotShipsWhatItPromises(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the whole release")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the release is built from a git checkout")
	}
	check := exec.Command("make", "-s", "release-check")
	check.Dir = repo
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("goreleaser check: %v\n%s", err, out)
	}
	cmd := exec.Command("make", "-s", "release-snapshot")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release-snapshot: %v\n%s", err, out)
	}
	dist := filepath.Join(repo, "dist")
	t.Cleanup(func() { os.RemoveAll(dist); os.RemoveAll(filepath.Join(repo, "dist-assets")) })

	sums := map[string]string{}
	f, err := os.Open(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("checksums.txt: %q is not `SUM  NAME`", sc.Text())
		}
		sums[name] = sum
	}
	f.Close()
	var archive string
	for _, want := range []string{"linux_amd64.tar.gz", "linux_arm64.tar.gz", "darwin_amd64.tar.gz", "darwin_arm64.tar.gz",
		"amd64.deb", "arm64.deb", "x86_64.rpm", "aarch64.rpm"} {
		found := false
		for name, sum := range sums {
			if !strings.HasSuffix(name, want) {
				continue
			}
			found = true
			body, err := os.ReadFile(filepath.Join(dist, name))
			if err != nil {
				t.Fatal(err)
			}
			if got := sha256.Sum256(body); hex.EncodeToString(got[:]) != sum {
				t.Errorf("%s: checksum %s, checksums.txt says %s", name, hex.EncodeToString(got[:]), sum)
			}
			if want == runtime.GOOS+"_"+runtime.GOARCH+".tar.gz" {
				archive = filepath.Join(dist, name)
			}
		}
		if !found {
			t.Errorf("checksums.txt names no *%s", want)
		}
	}
	if cask, err := os.ReadFile(filepath.Join(dist, "homebrew", "Casks", "dispatchtop.rb")); err != nil || !strings.Contains(string(cask), "cask \"dispatchtop\"") {
		t.Errorf("no Homebrew cask in the tap layout: %v", err)
	}
	if archive == "" {
		t.Skipf("no archive for %s/%s to run", runtime.GOOS, runtime.GOARCH)
	}

	dir := t.TempDir()
	members := untar(t, archive, dir)
	for _, want := range []string{"dispatchtop", "LICENSE", "README.md", "man/dispatchtop.1", "man/dispatchtop-serve.1",
		"completions/dispatchtop.bash", "completions/dispatchtop.zsh", "completions/dispatchtop.fish"} {
		if !members[want] {
			t.Errorf("the archive lacks %s (it holds %v)", want, members)
		}
	}
	out, err := exec.Command(filepath.Join(dir, "dispatchtop"), "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "dispatchtop ") || !strings.Contains(string(out), "-next (commit ") {
		t.Errorf("--version of the archive's binary: %q, %v", out, err)
	}
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("man is not installed: the pages are not read")
	}
	page := exec.Command("man", "-l", filepath.Join(dir, "man", "dispatchtop.1"))
	page.Env = append(os.Environ(), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=80")
	if out, err := page.CombinedOutput(); err != nil || !strings.Contains(string(out), "dispatchtop") {
		t.Errorf("man -l dispatchtop.1: %v\n%s", err, out)
	}
}

// untar unpacks a .tar.gz into dir and lists its members.
func untar(t *testing.T, archive, dir string) map[string]bool {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	members := map[string]bool{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return members
		}
		if err != nil {
			t.Fatal(err)
		}
		members[h.Name] = true
		if h.Typeflag != tar.TypeReg {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, dir+string(os.PathSeparator)) {
			t.Fatalf("the archive writes outside its directory: %s", h.Name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		w, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, os.FileMode(h.Mode)&0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(w, tr); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
}
