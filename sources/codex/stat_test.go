package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRolloutStatIsOsStat holds rolloutStats to statPlain (os.Stat): the
// same mtime, the same error in the same words, for rollouts read in any
// order across directories, a link, a missing file or directory, a path
// through a file, a relative path.
func TestRolloutStatIsOsStat(t *testing.T) {
	root := t.TempDir()
	day1, day2 := filepath.Join(root, "2026", "05", "07"), filepath.Join(root, "2026", "05", "08")
	for _, d := range []string{day1, day2} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string, age time.Duration) string {
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-age)
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write(filepath.Join(day1, "a.jsonl"), time.Hour)
	b := write(filepath.Join(day1, "b.jsonl"), 2*time.Minute)
	c := write(filepath.Join(day2, "c.jsonl"), 3*time.Second)
	link := filepath.Join(day2, "link.jsonl")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(day2, "dangling.jsonl")
	if err := os.Symlink(filepath.Join(root, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	paths := []string{a, b, c, a, link, dangling, filepath.Join(day1, "gone.jsonl"), b,
		filepath.Join(root, "no-such-day", "x.jsonl"), filepath.Join(a, "under-a-file"), c, day1, day1 + "/",
		"relative.jsonl", filepath.Join(day2, "..", "..", "05", "07", "a.jsonl")}
	s := newRolloutStats()
	defer s.close()
	for i, p := range paths {
		t.Run(fmt.Sprintf("%d %s", i, p), func(t *testing.T) {
			wantT, wantErr := statPlain(p)
			gotT, gotErr := s.modTime(p)
			if !gotT.Equal(wantT) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || os.IsNotExist(gotErr) != os.IsNotExist(wantErr) {
				t.Errorf("modTime(%s) = %v, %v; os.Stat %v, %v", p, gotT, gotErr, wantT, wantErr)
			}
		})
	}
}
