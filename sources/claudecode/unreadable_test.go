package claudecode

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// SPEC §10: a record that cannot be read — torn, empty, a directory where
// the file goes, no permission — is a problem naming the file and the
// cause, for a session, a job and a team alike; never a crash, never a
// record skipped without a word.
func TestUnreadableRecordsAreProblems(t *testing.T) {
	kinds := []struct {
		what, cause string
		make        func(path string) error
		denied      bool
	}{
		{"torn JSON", "unexpected end of JSON input", func(p string) error { return os.WriteFile(p, []byte(`{"pid": 1, "sta`), 0o644) }, false},
		{"zero bytes", "unexpected end of JSON input", func(p string) error { return os.WriteFile(p, nil, 0o644) }, false},
		{"a directory", "not a regular file (directory)", func(p string) error { return os.MkdirAll(p, 0o755) }, false},
		{"no permission", "permission denied", func(p string) error {
			if err := os.WriteFile(p, []byte(`{}`), 0o644); err != nil {
				return err
			}
			return os.Chmod(p, 0)
		}, true},
	}
	files := []string{"sessions/4242.json", "jobs/90c961c7/state.json", "teams/session-1/config.json", "teams/session-1/inboxes/a.json"}
	for _, k := range kinds {
		for _, rel := range files {
			t.Run(k.what+" "+rel, func(t *testing.T) {
				if k.denied && os.Geteuid() == 0 {
					t.Skip("root reads a file of mode 000")
				}
				s := newStore(t)
				if rel == "teams/session-1/inboxes/a.json" {
					s.write("teams/session-1/config.json", map[string]any{"leadSessionId": "x", "members": []any{}})
				}
				path := filepath.Join(s.dir, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := k.make(path); err != nil {
					t.Fatal(err)
				}
				facts := Source{SocketDir: t.TempDir()}.Read(s.dir, time.Now())
				if !problemAbout(facts, path, k.cause) {
					t.Errorf("problems %v, want one naming %s: %s", facts.Problems, path, k.cause)
				}
			})
		}
	}
}
